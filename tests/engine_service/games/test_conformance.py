"""The conformance suite: every registered game, every player count, the engine contract's promises.

Determinism, JSON round trip at random points, every legal action applies, illegal ones raise and change
nothing, games end under the cap, replays verify (and a tampered one does not), and no hidden-information
leak: a seat's observation (and the spectator's) must not change when only what it cannot see changes.
A game joins by registering; nothing here names a game.

The suite samples: one seed (SEEDS) of every game, player count and option variant for the seeded checks,
and a recorded match's frames read as the spectator and as one seat. The full series, the same checks over
many seeds of each and the frames of every seat, is `python -m bench conformance`
(bench/bench_conformance.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import chain
from typing import Any, NamedTuple

import pytest

from engine_service.games import (
    GameSpec,
    GameState,
    IllegalAction,
    get_game,
    list_games,
    make,
    state_from_json,
)
from engine_service.games.rng import ChanceRng
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, ReplayMismatch, frames, run_match, verify

CONFIGS = [
    (spec.game_id, n, options)
    for spec in list_games()
    for n in range(spec.min_players, spec.max_players + 1)
    for options in spec.option_variants(n)
]
SEEDS = (3,)  # the suite's sample of seeds; bench/bench_conformance.py checks many
MAX_STEPS = 50_000


class Config(NamedTuple):
    game_id: str
    players: int
    options: dict[str, Any]


def _random_walk(state: GameState, rng: ChanceRng, steps: int) -> list[tuple[int, str]]:
    """Advance `state` by up to `steps` random legal actions; return them."""
    log = []
    for _ in range(steps):
        if state.is_over():
            break
        seat = state.current_seats()[0]
        action = rng.choice(state.legal_actions(seat))
        state.apply(seat, action.id)
        log.append((seat, action.id))
    return log


def _sampled_states(config: Config, seed: int, points: int = 6) -> list[GameState]:
    """Snapshots of one random game at spread-out steps (the start included)."""
    game_id, n, options = config
    state = make(game_id, n, seed, options)
    rng = ChanceRng(seed * 31 + n)
    snapshots = [state.clone()]
    while not state.is_over() and len(snapshots) < points:
        _random_walk(state, rng, 1 + rng.randbelow(40))
        snapshots.append(state.clone())
    return snapshots


def _random_seats(n: int) -> list[HouseSeat]:
    return [HouseSeat(make_policy("random", seed=i)) for i in range(n)]


def _config_id(game_id: str, n: int, options: dict[str, Any]) -> str:
    return f"{game_id}-{n}p" + "".join(f"-{k}={v}" for k, v in sorted(options.items()))


@pytest.fixture(params=CONFIGS, ids=[_config_id(*c) for c in CONFIGS])
def config(request: pytest.FixtureRequest) -> Config:
    return Config(*request.param)


def test_same_seed_same_game(config: Config) -> None:
    game_id, n, options = config
    records = [run_match(game_id, n, 5, _random_seats(n), options, hash_every=5) for _ in range(2)]
    assert records[0].actions == records[1].actions
    assert records[0].hashes == records[1].hashes
    assert records[0].hashes[0] == make(game_id, n, 5, options).state_hash()  # a match's step 0 is the deal
    assert make(game_id, n, 6, options).state_hash() != records[0].hashes[0], (
        "a different seed must deal a different game"
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_json_round_trip_keeps_state_and_future(config: Config, seed: int) -> None:
    for state in _sampled_states(config, seed):
        data = json.loads(json.dumps(state.to_json()))
        loaded = state_from_json(data)
        assert loaded.state_hash() == state.state_hash()
        assert loaded.to_json() == state.to_json()
        clone = state.clone()
        assert clone.state_hash() == state.state_hash()
        if state.is_over():
            continue
        seat = state.current_seats()[0]
        assert [a.to_json() for a in loaded.legal_actions(seat)] == [
            a.to_json() for a in state.legal_actions(seat)
        ]
        # The same actions from the original and the copies lead to the same states (the RNG travels too).
        walker = ChanceRng(seed)
        log = _random_walk(state, walker, 30)
        for copy in (loaded, clone):
            for s, action_id in log:
                copy.apply(s, action_id)
            assert copy.state_hash() == state.state_hash()


@pytest.mark.parametrize("seed", SEEDS)
def test_every_legal_action_applies_and_ids_are_unique(config: Config, seed: int) -> None:
    n = config.players
    for state in _sampled_states(config, seed):
        if state.is_over():
            assert state.current_seats() == []
            continue
        for seat in range(n):
            if seat not in state.current_seats():
                assert state.legal_actions(seat) == []
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        assert legal, "a deciding seat must have at least one legal action"
        ids = [a.id for a in legal]
        assert len(ids) == len(set(ids)), "legal action ids must be unique"
        json.dumps([a.to_json() for a in legal])
        for action in legal:
            trial = state.clone()
            trial.apply(seat, action.id)
            assert trial.step == state.step + 1


@pytest.mark.parametrize("seed", SEEDS)
def test_illegal_actions_raise_and_change_nothing(config: Config, seed: int) -> None:
    n = config.players
    for state in _sampled_states(config, seed):
        before = state.state_hash()
        if state.is_over():
            with pytest.raises(IllegalAction):
                state.apply(0, "anything")
            continue
        seat = state.current_seats()[0]
        with pytest.raises(IllegalAction) as info:
            state.apply(seat, "no-such-action")
        assert info.value.legal_ids == [a.id for a in state.legal_actions(seat)]
        assert state.state_hash() == before
        idle = [s for s in range(n) if s not in state.current_seats()]
        if idle:
            with pytest.raises(IllegalAction):
                state.apply(idle[0], state.legal_actions(seat)[0].id)
            assert state.state_hash() == before


@pytest.mark.parametrize("seed", SEEDS)
def test_random_games_end_under_the_cap_with_valid_results(config: Config, seed: int) -> None:
    game_id, n, options = config
    state = make(game_id, n, seed, options)
    _random_walk(state, ChanceRng(seed), MAX_STEPS)
    assert state.is_over(), f"seed {seed}: not over after {MAX_STEPS} steps"
    result = state.result()
    assert len(result.scores) == len(result.ranks) == n
    assert min(result.ranks) == 1 and max(result.ranks) <= n
    json.dumps(result.to_json())


def test_replays_verify_and_tampering_is_caught(config: Config) -> None:
    game_id, n, options = config
    record = run_match(game_id, n, 9, _random_seats(n), options, hash_every=7)
    final = verify(record)
    assert final.state_hash() == record.hashes[record.steps]
    # Another legal action somewhere in the middle: the replay must name the first differing step.
    probe = make(game_id, n, 9, options)
    for index, (seat, action_id) in enumerate(record.actions):
        alternatives = [a.id for a in probe.legal_actions(seat) if a.id != action_id]
        if alternatives and index >= record.steps // 3:
            tampered = type(record).from_json(record.to_json())
            tampered.actions[index] = (seat, alternatives[0])
            with pytest.raises(ReplayMismatch) as info:
                verify(tampered)
            assert index < info.value.step <= record.steps
            break
        probe.apply(seat, action_id)
    else:
        pytest.fail("no decision with an alternative action in the whole match")


def test_replay_frames_are_told_in_the_games_own_words(config: Config) -> None:
    """A recorded match in frames, as the spectator and as one seat, another one from setting to setting
    (every seat's, of many matches: `python -m bench conformance`); see `check_replay_frames_in_words`."""
    check_replay_frames_in_words(config, 5, [CONFIGS.index(tuple(config)) % config.players])


def check_replay_frames_in_words(config: Config, seed: int, seats: Sequence[int]) -> None:
    """Every event and every action of the random match of `seed` has the game's own sentence (not the
    generic fallback, no raw JSON), rounds and turns only move forward, and the final frame ranks every
    seat: in the spectator's frames and in those of each of `seats`."""
    game_id, n, options = config
    spec = get_game(game_id)
    record = run_match(game_id, n, seed, _random_seats(n), options)
    spectator = frames(record, start=0, count=record.steps + 1, reveal=True)
    last = (0, 0)
    for frame in spectator:  # a frame's words and progress are the game's own, of the state at its step
        now = (frame["round"] or 0, frame["turn"] or 0)
        assert now >= last, f"progress went back from {last} to {now} at step {frame['step']}"
        last = now
        if frame["next_action"] is not None:
            action_id, text = frame["next_action"]["action"], frame["next_action"]["text"]
            # the generic fallback is the id itself or "<kind> (<id>)"
            assert text and text != action_id and not text.endswith(f"({action_id})"), action_id
    assert last[1] > 1, "turns never advanced"
    as_seats = (frames(record, start=0, count=record.steps + 1, seat=seat) for seat in seats)
    for run in chain([spectator], as_seats):
        for frame in run:
            for event, line in zip(
                spec.events_of(frame["view"])[-len(frame["log"]) :], frame["log"], strict=False
            ):
                assert line["text"] != GameSpec.describe_event(spec, event), event
                assert "{" not in line["text"] and "None" not in line["text"], line["text"]
        final = run[-1]["result"]
        assert final is not None
        for seat in range(n):
            assert any(f"seat {seat}" in line for line in final["lines"])


@pytest.mark.parametrize("seed", SEEDS)
def test_no_hidden_information_leaks(config: Config, seed: int) -> None:
    n = config.players
    rng = ChanceRng(seed + 1000)
    changed_something = False
    for state in _sampled_states(config, seed, points=8):
        for seat in range(n):
            for _ in range(3):
                other = state.shuffle_hidden(seat, rng)
                assert other.observation(seat) == state.observation(seat), f"seat {seat} sees hidden changes"
                assert other.spectator_view() == state.spectator_view(), "the spectator sees hidden changes"
                if other.state_hash() != state.state_hash():
                    changed_something = True
                    if not state.is_over():
                        current = state.current_seats()[0]
                        if current == seat:
                            assert [a.id for a in other.legal_actions(seat)] == [
                                a.id for a in state.legal_actions(seat)
                            ]
    assert changed_something, "shuffle_hidden never changed anything: the leak test would be vacuous"


@pytest.mark.parametrize("seed", SEEDS)
def test_sampled_states_are_consistent_with_the_observation(config: Config, seed: int) -> None:
    game_id, n, _ = config
    spec = get_game(game_id)
    rng = ChanceRng(seed + 2000)
    for state in _sampled_states(config, seed):
        for seat in range(n):
            observation = state.observation(seat)
            assert observation["game_id"] == game_id and observation["seat"] == seat
            assert observation["step"] == state.step
            json.dumps(observation)
            sampled = spec.sample_state(observation, rng)
            assert sampled.observation(seat) == observation
            if not state.is_over() and seat in state.current_seats():
                assert [a.id for a in sampled.legal_actions(seat)] == [
                    a.id for a in state.legal_actions(seat)
                ]
            assert isinstance(spec.heuristic(sampled, seat), float)
        assert isinstance(spec.render_view(state.spectator_view()), str)


CLONE_EVERY = 5  # steps between two clones of a seeded game
TRIAL_STEPS = 8  # random actions taken on each clone


@pytest.mark.parametrize("seed", SEEDS)
def test_acting_on_a_clone_leaves_the_original_unchanged(config: Config, seed: int) -> None:
    """What search bots do, `trial = state.clone()` then actions on `trial`, never changes `state`: a field
    that a clone shares with its original (copied too shallowly) would. Checked every `CLONE_EVERY` steps
    of a whole seeded game; and the clones kept along the way are unchanged by the original's later play."""
    game_id, n, options = config
    state = make(game_id, n, seed, options)
    rng = ChanceRng(seed * 17 + n)
    kept: list[tuple[GameState, str]] = []
    while not state.is_over():
        if state.step % CLONE_EVERY == 0:
            before = state.state_hash()
            trial = state.clone()
            assert trial.state_hash() == before
            _random_walk(trial, rng, TRIAL_STEPS)
            assert state.state_hash() == before, (
                f"acting on a clone at step {state.step} changed the original"
            )
            kept.append((state.clone(), before))
        _random_walk(state, rng, 1)
    assert len(kept) >= 10
    for step, (copy, recorded) in enumerate(kept):
        assert copy.state_hash() == recorded, f"the clone made at step {step * CLONE_EVERY} changed"
