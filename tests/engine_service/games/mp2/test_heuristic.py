"""The house bots' evaluation (`heuristic.py`): what it values, and that it reads only what the seat knows."""

from __future__ import annotations

from engine_service.games.mp2 import Mp2State
from engine_service.games.mp2.heuristic import caravan_steps, evaluate, static_value
from engine_service.games.mp2.tables import GOALS
from engine_service.policies import make_policy
from tests.engine_service.games.mp2.helpers import act, clear_turn, fresh, ids, start, zero


def test_a_caravan_is_worth_more_the_closer_it_stands_to_a_figure() -> None:
    state = start(2, ["abha", "dewu"], caravans=True)
    clear_turn(state, 0, ["c2"])
    state.tiles["RT05"] = "held"
    steps = caravan_steps(frozenset(state.seals[0]))
    state.figures[0] = ["KER"]
    values = {}
    for node in ("KER", "HER"):
        state.caravans[0] = [{"tile": "RT05", "at": node, "goods": ["gold", "gold"]}]
        values[steps["KER"][node]] = static_value(fresh(state), 0)
    far = max(steps["KER"].items(), key=lambda item: item[1])[0]
    state.caravans[0] = [{"tile": "RT05", "at": far, "goods": ["gold", "gold"]}]
    values[steps["KER"][far]] = static_value(fresh(state), 0)
    ordered = [values[d] for d in sorted(values)]
    assert ordered == sorted(ordered, reverse=True) and len(set(ordered)) == len(ordered)
    # never below the goods' final half price, never above a full sale
    assert (
        6
        <= min(ordered) - static_value(_without_caravans(state), 0)
        < max(ordered) - static_value(_without_caravans(state), 0)
        <= 12
    )


def _without_caravans(state: Mp2State) -> Mp2State:
    bare = state.clone()
    bare.caravans[0] = []
    return fresh(bare)


def test_greedy_claims_near_its_figure_steps_the_caravan_to_it_and_completes_the_route() -> None:
    state = start(2, ["abha", "dewu"], caravans=True)
    clear_turn(state, 0, ["c5"])
    state.figures[0] = ["BEI"]
    zero(state, 0, gold=2, coins=5)
    claims = [a for a in ids(state) if a.startswith("claim:")]
    steps = caravan_steps(frozenset(state.seals[0]))
    nearest = min(steps["BEI"][a.split(":")[2]] for a in claims)
    best = max(claims, key=lambda a: _after(state, a))
    assert steps["BEI"][best.split(":")[2]] == nearest
    act(state, best)
    act(state, "load:gold+gold")
    greedy = make_policy("greedy", seed=3)
    greedy.reset("mp2-v1", 0)
    # after each book action the caravan walks toward Beijing as far as its steps allow (3 on Book III)
    assert nearest == 4
    for space in ("book3a", "book3b"):
        clear_turn(state, 0, ["c5"])
        act(state, f"place:{space}:c5")
        while state.pending and state.current_seats() == [0]:
            fresh(state)
            state.apply(0, greedy.choose(state.observation(0), state.legal_actions(0)))
    assert steps["BEI"][state.caravans[0][0]["at"]] == 0
    # the two meet: before ending its turn greedy completes the route and sells the gold (it may claim again)
    assert "caravan:1:complete" in ids(state)
    sold = []
    for _ in range(12):
        fresh(state)
        if state.current_seats() != [0]:
            break
        choice = greedy.choose(state.observation(0), state.legal_actions(0))
        if choice == "end":
            break
        last = state.events[-1]
        state.apply(0, choice)
        new = state.events[next(i + 1 for i, e in enumerate(state.events) if e is last) :]
        sold += [e["good"] for e in new if e["event"] == "caravan_good" and e["use"] == "sell"]
    assert state.tiles["RT02"] == "down" and sold == ["gold", "gold"]


def _after(state: Mp2State, action_id: str) -> float:
    trial = state.clone()
    act(trial, action_id)
    return evaluate(trial, 0)


def test_a_new_shield_is_worth_the_step_where_the_track_will_stand() -> None:
    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c2"])
    base = static_value(fresh(state), 0)
    state.posts[0] = ["KAR"]
    one = static_value(fresh(state), 0) - base
    state.round = 5
    state.dice[0] = []
    late_base = static_value(_without_posts(state), 0)
    late_one = static_value(fresh(state), 0) - late_base
    assert one > late_one > 0  # early, the post's shield counts at a later, steeper step of the track


def _without_posts(state: Mp2State) -> Mp2State:
    bare = state.clone()
    bare.posts[0] = []
    return fresh(bare)


def test_contracts_on_display_in_a_post_city_count_when_the_goods_fit() -> None:
    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c2"])
    city = "XIA"
    zero(state, 0, pepper=5, silk=5, gold=5, camels=5, coins=5)
    state.posts[0] = []
    without = static_value(fresh(state), 0)
    state.posts[0] = [city]
    with_post = static_value(fresh(state), 0)
    state.contract_spaces[city] = [None, None]
    emptied = static_value(fresh(state), 0)
    assert with_post > emptied  # the displayed contracts are in reach
    assert emptied > without  # the post itself still counts (shield, contract city)


def test_the_value_ignores_the_other_seats_goal_cards() -> None:
    state = start(3, ["abha", "dewu", "mongke"])
    clear_turn(state, 0, ["c2", "c4"])
    value = evaluate(fresh(state), 0)
    for goal in sorted(GOALS)[:4]:
        state.goals[1] = goal
        state.goals[2] = goal
        assert evaluate(fresh(state), 0) == value
