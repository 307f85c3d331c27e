"""The house bots' evaluation: what it values (posts, goals, Beijing, contracts, the road ahead), that it uses
only what the seat may know, and that greedy play with it travels and places posts."""

from __future__ import annotations

from engine_service.games.voyages import SPEC, VoyagesState
from engine_service.games.voyages.heuristic import PATHS, evaluate, static_value, travel_coins
from engine_service.games.voyages.tables import CONTRACTS, GOALS
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, run_match

from .helpers import my_turn, new_game, node


def quiet_turn(seed: int = 3) -> VoyagesState:
    """Round 1, seat 0 to act with plain dice and resources, goals 2 (Moscow + Kashgar, 7 VP) and 15
    (Sumatra + Anxi, 8 VP)."""
    state = my_turn(new_game(3, seed), 0, ["c2", "c3", "c4", "c5", "c6"], coins=10, camels=3)
    state.goals[0] = [2, 15]
    return state


def with_post(state: VoyagesState, seat: int, slug: str) -> VoyagesState:
    other = state.clone()
    other.posts[seat] = [*other.posts[seat], node(slug)]
    other.posts_left[seat] -= 1
    other.posts_placed[seat] += 1
    other.figures[seat] = [node(slug)]
    return other


def test_the_evaluation_changes_nothing_and_ignores_other_seats_goals() -> None:
    state = quiet_turn()
    before = state.state_hash()
    value = evaluate(state, 0)
    assert state.state_hash() == before
    guessed = state.clone()
    guessed.goals[1], guessed.goals[2] = [0, 1], [3, 4]
    assert evaluate(guessed, 0) == value


def test_a_post_in_a_goal_city_is_worth_more_than_one_elsewhere() -> None:
    state = quiet_turn()
    assert node("moscow") in GOALS[2]["cities"]
    goal_city = static_value(with_post(state, 0, "moscow"), 0)
    other_city = static_value(with_post(state, 0, "samarcanda"), 0)  # also a large city with one card
    assert goal_city > other_city + 2.0
    both = with_post(with_post(state, 0, "moscow"), 0, "kashgar")
    assert static_value(both, 0) > goal_city + GOALS[2]["vp"] / 2


def test_beijing_counts_its_arrival_points() -> None:
    state = quiet_turn()
    there = with_post(state, 0, "beijing")
    there.beijing = [0, None, None, None]
    assert static_value(there, 0) - static_value(state, 0) >= 10.0


def test_a_figure_nearer_its_goal_cities_is_worth_more() -> None:
    state = quiet_turn()
    near = state.clone()
    near.figures[0] = [node("oasis-a")]  # next to Moscow
    assert static_value(near, 0) > static_value(state, 0)


def test_coins_for_the_road_ahead_count_more_than_their_final_rate() -> None:
    state = quiet_turn()
    richer = state.clone()
    richer.res[0]["coins"] += 10
    assert static_value(richer, 0) - static_value(state, 0) > 3.0


def test_a_contract_that_can_be_completed_is_completed() -> None:
    state = quiet_turn()
    cid = state.active[0][0]
    for name, amount in CONTRACTS[cid]["cost"].items():
        state.res[0][name] = max(state.res[0][name], amount)
    done = state.clone()
    done.apply(0, f"complete:{cid}")
    assert evaluate(done, 0) > evaluate(state, 0)


def test_paths_price_the_travel_table_and_the_routes() -> None:
    moscow = PATHS[node("venezia")][node("moscow")]
    assert (moscow.steps, moscow.camels, moscow.coins) == (2, 0, 0)
    assert travel_coins(2) == 7 and travel_coins(7) == 18 + 3


def test_greedy_self_play_travels_and_places_posts() -> None:
    seats = [HouseSeat(make_policy("greedy", seed=seat)) for seat in range(3)]
    record = run_match(SPEC.game_id, 3, 18_000, seats)
    state = new_game(3, 18_000)
    for seat, action_id in record.actions:
        state.apply(seat, action_id)
    assert state.is_over()
    assert sum(state.posts_placed) >= 12  # the previous evaluation placed 8 here
