"""The PettingZoo environments: PettingZoo's API test for every game, player count and option value; the
same play as the referee; each seat sees only its own observation; rewards from the final placing; the
Gymnasium single-seat wrapper."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from engine_service.envs.aec import CaravanEnv, env, placing_reward
from engine_service.envs.encoding import encode_observation, flatten
from engine_service.envs.single import SeatEnv
from engine_service.games.base import GameResult
from engine_service.games.registry import list_games
from engine_service.games.rng import ChanceRng
from engine_service.policies.base import make_policy
from engine_service.referee.match import run_match
from engine_service.referee.seats import HouseSeat


def variants() -> Iterator[tuple[str, int, dict[str, Any]]]:
    """Every player count with the game's own variants, and every other value of every option (at the
    smallest player count, or the count the option needs)."""
    for spec in list_games():
        seen: list[tuple[int, dict[str, Any]]] = []
        for players in range(spec.min_players, spec.max_players + 1):
            for options in spec.option_variants(players):
                seen.append((players, options))
        for option in spec.options:
            for value in option.choices or ():
                if value == option.default or any(o.get(option.name) == value for _, o in seen):
                    continue
                players = 2 if option.name.endswith("two_player") else spec.min_players
                seen.append((players, {option.name: value}))
        for players, options in seen:
            yield spec.game_id, players, options


@pytest.mark.parametrize(("game_id", "players", "options"), list(variants()))
def test_pettingzoo_api_test_passes(game_id: str, players: int, options: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        # PettingZoo's own masked environments (its classic games) raise the same two notes: a Dict
        # observation of {"observation", "action_mask"} is the convention it recommends for masks
        warnings.filterwarnings("ignore", message="Observation space for each agent probably should be")
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        api_test(env(game_id, players, options, render_mode="ansi"), num_cycles=8)


@pytest.mark.parametrize("spec", list_games(), ids=lambda spec: spec.game_id)
def test_pettingzoo_seed_test_passes(spec: Any) -> None:
    seed_test(functools.partial(env, spec.game_id, spec.max_players), num_cycles=10)


def play_with_policies(game: CaravanEnv, seed: int, names: list[str]) -> tuple[list[str], list[float]]:
    """Play a whole game through the environment, each seat's action chosen by a house bot from that
    seat's own JSON observation; the ids played, in order, and each seat's final reward."""
    game.reset(seed=seed)
    policies = {
        agent: make_policy(name, seed=7 + s)
        for s, (agent, name) in enumerate(zip(game.agents, names, strict=True))
    }
    for s, policy in enumerate(policies.values()):
        policy.reset(game.game_spec.game_id, s)
    played, final = [], {}
    for agent in game.agent_iter():
        observation, reward, terminated, truncated, _ = game.last()
        if terminated or truncated:
            final[agent] = reward
            game.step(None)
            continue
        legal = game.legal_actions(agent)
        chosen = policies[agent].choose(game.observation_json(agent), legal)
        assert observation["action_mask"].sum() == len(legal)
        played.append(chosen)
        game.step(game.action_index(agent, chosen))
    return played, [final[agent] for agent in game.possible_agents]


@pytest.mark.parametrize("spec", list_games(), ids=lambda spec: spec.game_id)
def test_the_environment_plays_the_referees_game(spec: Any) -> None:
    names = ["random", "greedy", "random"][: max(2, spec.min_players)]
    game = env(spec.game_id, len(names))
    played, rewards = play_with_policies(game, 11, names)
    seats = [HouseSeat(make_policy(name, seed=7 + s)) for s, name in enumerate(names)]
    record = run_match(spec.game_id, len(names), 11, seats)
    assert played == [action for _, action in record.actions]
    assert record.result is not None
    ranks = record.result["ranks"]
    assert rewards == [
        placing_reward(GameResult([0] * len(ranks), ranks, [0] * len(ranks)), s) for s in range(len(ranks))
    ]


@pytest.mark.parametrize("spec", list_games(), ids=lambda spec: spec.game_id)
def test_a_seat_observes_only_its_own_observation(spec: Any) -> None:
    game = env(spec.game_id, spec.min_players)
    game.reset(seed=5)
    state = game.game_state
    assert state is not None
    for seat, agent in enumerate(game.agents):
        shown = game.observe(agent)["observation"]
        assert np.array_equal(shown, encode_observation(state.observation(seat)))
        game.game_state = state.shuffle_hidden(seat, ChanceRng(99))  # other hands and the decks re-dealt
        assert np.array_equal(game.observe(agent)["observation"], shown)
        game.game_state = state
    text = game.render() if game.render_mode else spec.render_view(state.spectator_view())
    assert isinstance(text, str) and text


def test_the_encoding_is_documented_flattening() -> None:
    view = {
        "seat": 1,
        "hand": ["red-silk", "red-silk"],
        "players": [{"gold": 3}],
        "events": [{"x": 1}],
        "done": True,
    }
    assert sorted(flatten(view)) == sorted(
        [
            ("seat", np.log1p(1.0)),
            ("hand.*=red-silk", 1.0),
            ("hand.*=red-silk", 1.0),
            ("players.0.gold", np.log1p(3.0)),
            ("done", 1.0),
        ]
    )
    vector = encode_observation(view, 64)
    assert vector.shape == (64,) and vector.dtype == np.float32 and np.isfinite(vector).all()


def test_placing_rewards() -> None:
    assert [placing_reward(GameResult([9, 5, 1], [1, 2, 3], [0, 0, 0]), s) for s in range(3)] == [
        1.0,
        0.0,
        -1.0,
    ]
    assert [placing_reward(GameResult([9, 9, 1], [1, 1, 3], [0, 0, 0]), s) for s in range(3)] == [
        0.5,
        0.5,
        -1.0,
    ]


def test_truncation_after_max_steps() -> None:
    game = env("expedition-v1", 2, max_steps=3)
    game.reset(seed=1)
    for _ in range(3):
        mask = game.observe(game.agent_selection)["action_mask"]
        game.step(int(np.flatnonzero(mask)[0]))
    assert all(game.truncations.values()) and not any(game.terminations.values())


def test_the_single_seat_wrapper_plays_against_house_levels() -> None:
    seat_env = SeatEnv("expedition-v1", 3, seat=1, opponents=["random", "greedy"])
    rng = np.random.default_rng(0)
    outcomes = []
    for _ in range(2):
        observation, info = seat_env.reset(seed=21)
        steps, done, reward = 0, False, 0.0
        while not done:
            assert len(info["legal_ids"]) == observation["action_mask"].sum() > 0
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            observation, reward, terminated, truncated, info = seat_env.step(action)
            done, steps = terminated or truncated, steps + 1
        outcomes.append((steps, reward, info["result"]))
        rng = np.random.default_rng(0)
    assert outcomes[0] == outcomes[1]  # deterministic for a seed
    assert outcomes[0][1] == placing_reward(
        GameResult([0, 0, 0], [1, 2, 3], [0] * 3), outcomes[0][2]["rank"] - 1
    )
    with pytest.raises(ValueError, match="2 opponents are needed"):
        SeatEnv("expedition-v1", 3, opponents=["random"])
