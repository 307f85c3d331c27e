"""House bots: legal answers, determinism for a seed, and the factory's errors."""

from __future__ import annotations

import pytest

from engine_service.games import get_game, make
from engine_service.games.rng import ChanceRng
from engine_service.policies import LEVELS, SEARCHING_POLICIES, house_level, make_policy, policy_names
from engine_service.policies.levels import LEVEL_SETTINGS, level_settings
from engine_service.policies.mcts import MctsPolicy


@pytest.mark.parametrize("name", ["random", "greedy", "mcts:12"])
def test_policies_answer_with_legal_ids_from_the_observation_alone(name: str) -> None:
    state = make("expedition-v1", 4, 17)
    policy = make_policy(name, seed=5)
    walker = ChanceRng(1)
    for _ in range(60):
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        choice = policy.choose(state.observation(seat), legal)
        assert choice in {a.id for a in legal}
        state.apply(seat, walker.choice(legal).id)


def test_mcts_is_deterministic_for_a_seed() -> None:
    state = make("expedition-v1", 3, 4)
    seat = state.current_seats()[0]
    observation, legal = state.observation(seat), state.legal_actions(seat)
    first = MctsPolicy(7, iterations=30).choose(observation, legal)
    second = MctsPolicy(7, iterations=30).choose(observation, legal)
    assert first == second


@pytest.mark.parametrize("name", ["nope", "mcts:0", "mcts:x", "random:3", "search:5", "search-weak"])
def test_unknown_bots_are_refused_with_the_known_names(name: str) -> None:
    with pytest.raises(ValueError) as info:
        make_policy(name)
    assert "random" in str(info.value) or "mcts" in str(info.value)


def test_search_settings_of_a_game_apply_unless_given_explicitly() -> None:
    plain = {"guided": False, "turn_steps": 0}
    default = MctsPolicy(1)
    default._configure(plain)
    assert default.guided is False and default.turn_steps == 0
    explicit = MctsPolicy(1, guided=True)
    explicit._configure(plain)
    assert explicit.guided is True
    with pytest.raises(ValueError, match="unknown mcts parameter"):
        MctsPolicy(1, depth=3)


def test_plain_search_plays_legal_moves() -> None:
    state = make("mp2-v1", 3, 2, {"caravans": True})
    seat = state.current_seats()[0]
    legal = state.legal_actions(seat)
    choice = MctsPolicy(4, iterations=10, guided=False, turn_steps=0).choose(state.observation(seat), legal)
    assert choice in {a.id for a in legal}


@pytest.mark.parametrize(("game_id", "options"), [("mp2-v1", {"caravans": True}), ("dragonda-v1", {})])
def test_rollout_search_plays_legal_moves_deterministically(game_id: str, options: dict[str, bool]) -> None:
    state = make(game_id, 3, 11, options)
    walker = ChanceRng(3)
    for _ in range(6):
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        observation = state.observation(seat)
        first = MctsPolicy(9, method="rollout", iterations=8, candidates=3).choose(observation, legal)
        again = MctsPolicy(9, method="rollout", iterations=8, candidates=3).choose(observation, legal)
        assert first == again and first in {a.id for a in legal}
        state.apply(seat, walker.choice(legal).id)


def test_rollout_search_with_one_candidate_plays_the_best_one_step_action() -> None:
    state = make("expedition-v1", 3, 4)
    seat = state.current_seats()[0]
    observation, legal = state.observation(seat), state.legal_actions(seat)
    policy = MctsPolicy(2, method="rollout", candidates=1)
    values = MctsPolicy(2)._one_step_values(get_game("expedition-v1"), observation, seat, legal)
    assert values[policy.choose(observation, legal)] == max(values.values())


def test_a_rollout_simulation_stops_when_the_bot_is_to_move_again() -> None:
    spec = get_game("dragonda-v1")
    start = make("dragonda-v1", 3, 5)
    for _ in range(30):  # into the race, where turns have real choices
        actor = start.current_seats()[0]
        start.apply(actor, start.legal_actions(actor)[-1].id)
    seat = start.current_seats()[0]
    start.apply(seat, start.legal_actions(seat)[0].id)
    once = start.clone()
    margin = MctsPolicy(1, method="rollout", horizon=200)._simulate(spec, once, seat)
    assert not once.is_over() and once.current_seats()[0] == seat and once.step > start.step
    values = [spec.heuristic(once, s) for s in range(3)]
    assert margin == values[seat] - max(values[o] for o in range(3) if o != seat)


def test_an_unknown_search_method_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown mcts method 'beam'"):
        MctsPolicy(1, method="beam")


def test_the_house_levels_are_named_policies_weakest_first() -> None:
    assert LEVELS == ("random", "greedy", "search", "search-strong")
    assert policy_names()[: len(LEVELS)] == list(LEVELS) and "mcts" in policy_names()
    for rank, level in enumerate(LEVELS, start=1):
        assert make_policy(level, seed=1).name == level
        assert house_level(level).rank == rank
    assert house_level("mcts:25").level is None


@pytest.mark.parametrize(("game_id", "options"), [("expedition-v1", {}), ("voyages-v1", {}),
                                                  ("mp2-v1", {"caravans": True}), ("dragonda-v1", {})])  # fmt: skip
def test_the_search_level_plays_legal_moves_deterministically(game_id: str, options: dict[str, bool]) -> None:
    state = make(game_id, 2, 8, options)
    walker = ChanceRng(6)
    choices = 0
    while choices < 3:
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        if len(legal) > 1:
            observation = state.observation(seat)
            first = make_policy("search", seed=4).choose(observation, legal)
            assert first == make_policy("search", seed=4).choose(observation, legal)
            assert first in {a.id for a in legal}
            choices += 1
        state.apply(seat, walker.choice(legal).id)


def test_a_level_sets_the_search_for_each_game_over_the_games_own_settings() -> None:
    spec = get_game("mp2-v1")
    policy = make_policy("search", seed=1)
    assert isinstance(policy, MctsPolicy)
    policy._configure({**spec.search_settings, **level_settings("search", spec.game_id)})
    assert (policy.method, policy.iterations) == (
        LEVEL_SETTINGS["search"]["mp2"]["method"],
        LEVEL_SETTINGS["search"]["mp2"]["iterations"],
    )
    assert level_settings("search-strong", "newgame-v1") == {}
    with pytest.raises(ValueError, match="unknown search level 'search-weak'"):
        MctsPolicy(1, level="search-weak")


def test_the_search_levels_are_the_policies_sent_to_a_search_process() -> None:
    searching = {name for name in LEVELS if isinstance(make_policy(name), MctsPolicy)} | {"mcts"}
    assert set(SEARCHING_POLICIES) == searching == {"search", "search-strong", "mcts"}
