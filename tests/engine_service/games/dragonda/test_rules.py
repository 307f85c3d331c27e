"""Dragonda's rules: setup, the rule text's examples, events, attacks and defences, movement, transport,
victory and the tie-break. Situations are built through the state's attributes, then action ids applied."""

from __future__ import annotations

import pytest

from engine_service.games import IllegalAction
from engine_service.games.dragonda import SPEC
from engine_service.games.dragonda.board import BOARD
from engine_service.games.dragonda.rules import DragondaState, quantities
from engine_service.games.rng import ChanceRng
from tests.engine_service.games.dragonda.helpers import (
    QUIET_EVENT,
    at_turn,
    finish_turn,
    fresh,
    ids,
)


def seats(state: DragondaState) -> list[int]:
    """The seats in play order (A, B, C, D of the rule text's examples)."""
    return list(state.order)


# --- setup ------------------------------------------------------------------------------------------------
def test_setup_orders_by_dice_shuffles_the_deck_and_starts_in_venice() -> None:
    state = SPEC.new_state(4, 12)
    assert isinstance(state, DragondaState)
    assert sorted(state.order) == [0, 1, 2, 3]
    keys = [state.start_rolls[s] for s in state.order]
    assert keys == sorted(keys, reverse=True), "play order is by descending roll, ties decided by re-rolls"
    assert len(state.deck) == 76 and sorted(state.deck) == sorted(BOARD.all_cards)
    assert state.deck != sorted(BOARD.all_cards)
    assert state.money == [230] * 4 and state.pos == ["VEN"] * 4 and state.xp == [0] * 4
    assert state.phase == "setup_means" and state.current_seats() == [state.order[0]]
    assert SPEC.new_state(4, 12).state_hash() == state.state_hash()


def test_tied_dice_are_rerolled_among_the_tied_only() -> None:
    for seed in range(200):
        state = SPEC.new_state(4, seed)
        assert isinstance(state, DragondaState)
        if any(len(r) > 1 for r in state.start_rolls):
            rerolled = [s for s in range(4) if len(state.start_rolls[s]) > 1]
            firsts = [state.start_rolls[s][0] for s in rerolled]
            assert len(set(firsts)) < len(firsts), "only players with equal totals roll again"
            return
    pytest.fail("no tie in 200 seeds")


def test_opening_purchases_in_venice() -> None:
    state = SPEC.new_state(2, 3)
    assert isinstance(state, DragondaState)
    first = state.order[0]
    assert ids(state) == ["means:foot", "means:horse", "means:caravan", "means:ship"]
    state.apply(first, "means:horse")
    options = ids(state)
    assert options[0] == "done:trade" and "buy:PL" in options and "buy:CT" not in options
    assert "buy:MG:5" in options and "buy:MG:10" not in options, "cargo must fit the horse"
    assert not any(o.startswith("sell:") for o in options)
    state.apply(first, "buy:PL")
    state.apply(first, "buy:PL")
    assert "buy:PL" not in ids(state), "at most 2 Papal Letters"
    state.apply(first, "buy:MG:5")
    assert state.money[first] == 230 - 6 - 10 - 5 * 10
    assert not any(o.startswith("buy:") for o in ids(state)), "the horse is full"
    state.apply(first, "done:trade")
    assert state.current_seats() == [state.order[1]] and state.phase == "setup_means"
    state.apply(state.order[1], "means:ship")
    state.apply(state.order[1], "done:trade")
    assert state.round == 1 and state.money[state.order[1]] == 130, "no upkeep during the opening"
    assert state.supply == {"PL": 6, "CT": 8} and state.passes[first] == {"PL": 2, "CT": 0}


# --- the rule text's trade examples ----------------------------------------------------------------------
def test_ormuz_spice_sale_pays_5_times_21() -> None:
    state = fresh(2)
    a = state.order[0]
    state.pos[a], state.means[a] = "ORM", "horse"
    state.cargo[a]["SP"] = 5
    at_turn(state, a, QUIET_EVENT)
    state.apply(a, "stop")
    assert state.phase == "trade"
    assert ids(state)[0] == "done:trade" and "sell:SP:5" in ids(state)
    before = state.money[a]
    state.apply(a, "sell:SP:5")
    assert state.money[a] - before == 105 == 5 * 21
    assert state.cargo[a]["SP"] == 0


def test_spices_bought_in_colombo_sell_in_ormuz_for_4_more_per_piece() -> None:
    state = fresh(2)
    a = state.order[0]
    state.pos[a], state.means[a] = "COL", "horse"
    at_turn(state, a, QUIET_EVENT)
    state.apply(a, "stop")
    paid = state.money[a]
    state.apply(a, "buy:SP:5")
    paid -= state.money[a]
    assert paid == 5 * 17
    assert not any(o.startswith("sell:SP") for o in ids(state)), "a good bought here is not sold back here"
    finish_turn(state)
    state.pos[a] = "ORM"
    at_turn(state, a, QUIET_EVENT)
    state.apply(a, "stop")
    got = state.money[a]
    state.apply(a, "sell:SP:5")
    got = state.money[a] - got
    assert got - paid == 4 * 5


def test_trade_quantities_are_bounded() -> None:
    assert quantities(12) == [1, 2, 3, 5, 10, 12]
    assert quantities(4) == [1, 2, 3, 4]
    assert quantities(0) == []


def test_passes_are_bought_only_in_their_city() -> None:
    state = fresh(2)
    a = state.order[0]
    state.pos[a] = "PEC"
    at_turn(state, a, QUIET_EVENT)
    state.apply(a, "stop")
    assert "buy:CT" in ids(state) and "buy:PL" not in ids(state)
    state.apply(a, "buy:CT")
    assert state.passes[a]["CT"] == 1 and state.supply["CT"] == 7 and state.money[a] == 225


# --- transport means ---------------------------------------------------------------------------------------
def transport_ids(state: DragondaState, seat: int, place: str, means: str = "horse") -> list[str]:
    state.pos[seat], state.means[seat] = place, means
    state.still_pending[seat] = True  # a blocked turn goes straight to trading
    at_turn(state, seat, QUIET_EVENT)
    if state.phase == "trade":
        state.apply(seat, "done:trade")
    assert state.phase == "transport"
    return ids(state)


def test_a_ship_is_bought_only_in_a_port() -> None:
    state = fresh(2)
    a = state.order[0]
    assert "buy_means:ship" not in transport_ids(state, a, "SAM")
    assert "buy_means:ship" not in transport_ids(state, a, "L9")
    assert transport_ids(state, a, "ORM") == ["keep", "give_up", "buy_means:caravan", "buy_means:ship"]
    assert "buy_means:ship" in transport_ids(state, a, "VEN")


def test_upkeep_new_means_and_capacity() -> None:
    state = fresh(2)
    a = state.order[0]
    transport_ids(state, a, "SAM")
    state.apply(a, "keep")
    assert state.money[a] == 227
    state.cargo[a]["TX"] = 5
    transport_ids(state, a, "SAM")
    state.apply(a, "buy_means:caravan")
    assert state.means[a] == "caravan" and state.money[a] == 227 - 16, "no upkeep in the turn of purchase"
    state.cargo[a]["TX"] = 5
    transport_ids(state, a, "SAM", "caravan")
    state.apply(a, "give_up")
    assert state.means[a] == "foot" and state.cargo[a]["TX"] == 3, "cargo above capacity goes back unpaid"


def test_unpayable_upkeep_forces_giving_up_on_land_and_costs_xp_at_sea() -> None:
    state = fresh(2)
    a, b = state.order
    state.money[a], state.xp[a] = 2, 4
    state.pos[a], state.means[a] = "SAM", "horse"
    state.still_pending[a] = True
    at_turn(state, a, QUIET_EVENT)
    if state.phase == "trade":
        state.apply(a, "done:trade")
    assert state.means[a] == "foot" and state.active == b, "giving up was the only choice: no decision"
    state.money[b], state.xp[b] = 10, 4
    state.pos[b], state.means[b] = "S1", "ship"
    state.still_pending[b] = True
    at_turn(state, b, QUIET_EVENT)
    assert state.means[b] == "ship" and state.xp[b] == 3 and state.money[b] == 10
    assert state.active == a


# --- movement ------------------------------------------------------------------------------------------
def test_moves_follow_the_means_and_count_every_space_entered() -> None:
    state = fresh(2)
    a = state.order[0]
    state.means[a] = "horse"
    at_turn(state, a, QUIET_EVENT)
    moves = {x.id: x for x in state.legal_actions(a)}
    assert "move:CON" in moves and len(moves["move:CON"].details["path"]) == 8
    assert all(len(x.details["path"]) <= 9 for x in moves.values() if x.kind == "move")
    assert not any(BOARD.kind[x.details["to"]] == "sea" for x in moves.values() if x.kind == "move")
    state.pos[a] = "BAL"
    at_turn(state, a, QUIET_EVENT)
    options = ids(state, a)
    assert "move:BUK" in options and "move:BUK:via:SAM" in options, "by Herat, or through Samarcanda"
    state.apply(a, "move:BUK:via:SAM")
    assert state.pos[a] == "BUK" and state.visited[a] == ["SAM"]


def test_on_foot_moves_four_and_a_ship_only_at_sea() -> None:
    state = fresh(2)
    a = state.order[0]
    at_turn(state, a, QUIET_EVENT)
    moves = [x for x in state.legal_actions(a) if x.kind == "move"]
    assert max(len(x.details["path"]) for x in moves) == 4 and "move:CON" not in ids(state, a)
    state.means[a] = "ship"
    at_turn(state, a, QUIET_EVENT)
    moves = [x for x in state.legal_actions(a) if x.kind == "move"]
    assert all(
        BOARD.kind[x.details["to"]] in ("sea", "junction") or BOARD.is_port(x.details["to"]) for x in moves
    )
    assert "move:ALX" in ids(state, a) and "move:L1" not in ids(state, a)


def test_first_arrival_bonuses() -> None:
    state = fresh(3)
    a, b, c = state.order
    for seat in (a, b):
        state.pos[seat], state.means[seat] = "QUI", "ship"
    at_turn(state, a, QUIET_EVENT)
    state.apply(a, "move:NAG")
    assert state.xp[a] == 5 and state.bonus["NAG"] == a
    at_turn(state, b, QUIET_EVENT)
    state.apply(b, "move:NAG")
    assert state.xp[b] == 0, "only the first player to enter Nagasaki gains 5"
    state.pos[c], state.means[c] = "ZAI", "ship"
    at_turn(state, c, QUIET_EVENT)
    state.apply(c, "move:MAN")
    assert state.xp[c] == 5 and state.bonus["MANPAL"] == c
    state.pos[a] = "MAL"
    at_turn(state, a, QUIET_EVENT)
    state.apply(a, "move:PAL")
    assert state.xp[a] == 5, "Manila and Palembang share one bonus"


def test_passage_from_a_sea_only_port() -> None:
    state = fresh(2)
    a = state.order[0]
    state.pos[a], state.money[a] = "NAG", 50
    at_turn(state, a, QUIET_EVENT)
    assert ids(state, a) == ["stop", "passage:QUI"]
    state.apply(a, "passage:QUI")
    assert state.pos[a] == "QUI"
    state.pos[a], state.money[a] = "NAG", 150
    at_turn(state, a, QUIET_EVENT)
    assert state.phase != "move", "with 100z or more the stranded player buys a ship instead"


# --- victory and the tie-break ---------------------------------------------------------------------------
def test_victory_on_returning_to_venice_with_51_xp_and_five_cities() -> None:
    state = fresh(3)
    a = state.order[0]
    state.visited[a] = sorted(["PEC", "SAM", "DAM", "ORM", "YUN"])
    state.xp[a], state.pos[a], state.means[a] = 51, "L2", "horse"
    at_turn(state, a, QUIET_EVENT)
    state.apply(a, "move:VEN")
    finish_turn(state)
    assert state.is_over() and state.winner == a
    result = state.result()
    assert result.reason == "completed" and result.ranks[a] == 1 and result.scores[a] == 7
    assert state.current_seats() == []
    with pytest.raises(IllegalAction):
        state.apply(a, "done:cards")


def test_no_victory_below_51_xp_or_with_a_city_missing() -> None:
    for xp, visited in ((50, ["DAM", "ORM", "PEC", "SAM", "YUN"]), (60, ["DAM", "ORM", "PEC", "SAM"])):
        state = fresh(2)
        a = state.order[0]
        state.visited[a], state.xp[a] = list(visited), xp
        at_turn(state, a, QUIET_EVENT)
        finish_turn(state)
        assert not state.is_over()


def end_by_cap(state: DragondaState) -> None:
    state.options["round_cap"] = 1
    at_turn(state, state.order[-1], QUIET_EVENT)
    finish_turn(state)
    assert state.is_over() and state.end_reason == "turn_cap"


def test_turn_cap_tie_break_conditions_then_xp_then_distance_then_money() -> None:
    state = fresh(4)
    a, b, c, d = state.order
    state.visited = [["SAM"] for _ in range(4)]
    state.visited[a] = ["DAM", "SAM"]
    state.xp[b], state.xp[c], state.xp[d] = 10, 9, 9
    state.pos[c], state.pos[d] = "RAG", "TES"  # 3 and 6 steps from Venice
    end_by_cap(state)
    assert state.result().ranks[a] == 1 and state.result().ranks[b] == 2
    assert state.result().ranks[c] == 3 and state.result().ranks[d] == 4
    state = fresh(3)
    a, b, c = state.order
    state.money[a], state.money[b], state.money[c] = 50, 60, 60
    end_by_cap(state)
    ranks = state.result().ranks
    assert ranks[b] == ranks[c] == 1 and ranks[a] == 3, "seats equal on everything share the rank"


def test_random_games_end_by_the_round_cap_option() -> None:
    state = SPEC.new_state(3, 4, {"round_cap": 50})
    rng = ChanceRng(9)
    while not state.is_over():
        seat = state.current_seats()[0]
        state.apply(seat, rng.choice(state.legal_actions(seat)).id)
    assert isinstance(state, DragondaState)
    assert state.round <= 50 and state.end_reason in ("turn_cap", "completed")
