"""The house `search` level in positions where it was seen to blunder from outside, each built by hand.

Marco Polo II: it paid 3 camels for a black die instead of completing contract C24 (5 VP and a black die,
its cost in hand), and bagged the new die for 1 jade. The cause was the evaluation: a contract in hand
counted most of its worth on top of its resources at their own value, each resource for every contract that
asks for it, so holding C24 looked better than completing it (the fix: `engine_service/games/mp2/heuristic.py`,
one resource for one contract and a completed contract's tempo).

Dragonda: on foot with no cargo on an empty road (L7, the cities CON and SIV two spaces away) it did not move
for turns on end. That position is its XP camp: every required city seen, it waits for the XP still needed in
the zone where Events pay most (zone 3), the nearest such space to Venice. These tests pin down that it moves
there whenever a city is still to see or the XP are in hand, and camps only in that zone otherwise.

Fixed seeds, a few decisions each; no timing.
"""

from __future__ import annotations

import pytest

from engine_service.games.dragonda.board import BOARD, REQUIRED
from engine_service.games.dragonda.rules import DragondaState
from engine_service.games.mp2 import Mp2State
from engine_service.policies.mcts import MctsPolicy
from tests.engine_service.games.dragonda.helpers import fresh as dragonda_game
from tests.engine_service.games.mp2.helpers import clear_turn, fresh, start, zero

SEEDS = (1, 2, 3)


# --- Dragonda -------------------------------------------------------------------------------------------
def _on_foot_at_l7(visited: tuple[str, ...], xp: int) -> DragondaState:
    """Seat 0 to move, on foot with no cargo and 104 zecchini on the road dot L7 (CON and SIV two spaces
    away, zone 3), having seen `visited` and gained `xp`."""
    state = dragonda_game(2, seed=5)
    seat = 0
    state.pos[seat] = "L7"
    state.visited[seat] = list(visited)
    state.xp[seat] = xp
    state.money[seat] = 104
    state.turn_index = state.order.index(seat)
    state.turn = state._fresh_turn()
    state.turn["movement"] = 4  # on foot
    state.phase = "move"
    state.stack = []
    state._legal_cache = None
    return state


def _search_move(state: DragondaState, seed: int) -> str:
    return MctsPolicy(seed, level="search").choose(state.observation(0), state.legal_actions(0))


def test_the_reported_dragonda_position_is_an_empty_road_two_spaces_from_two_cities() -> None:
    state = _on_foot_at_l7(REQUIRED, 30)
    assert BOARD.kind["L7"] != "place" and BOARD.zone["L7"] == "3"
    near = {p for p, steps in BOARD.land_dist["L7"].items() if BOARD.kind.get(p) == "place" and steps <= 2}
    assert near == {"CON", "SIV"}
    assert {f"move:{city}" for city in near} <= {a.id for a in state.legal_actions(0)}


@pytest.mark.parametrize("unseen", REQUIRED)
def test_dragonda_search_walks_on_while_a_required_city_is_unseen(unseen: str) -> None:
    state = _on_foot_at_l7(tuple(c for c in REQUIRED if c != unseen), 20)
    for seed in SEEDS:
        move = _search_move(state, seed)
        assert move.startswith("move:")
        assert BOARD.land_dist[move.split(":")[1]][unseen] < BOARD.land_dist["L7"][unseen]


def test_dragonda_search_heads_home_once_it_has_the_xp_and_every_city() -> None:
    state = _on_foot_at_l7(REQUIRED, 51)
    home = BOARD.land_dist["L7"]["VEN"]
    for seed in SEEDS:
        move = _search_move(state, seed)
        assert move.startswith("move:")
        assert BOARD.land_dist[move.split(":")[1]]["VEN"] < home


def test_dragonda_search_camps_in_the_best_xp_zone_when_only_xp_is_missing() -> None:
    """Not a blunder: every city seen and 21 XP short, the XP come only from the Events of the zone the token
    stands in, and zone 3's pay most; L7 is its space nearest Venice, so the walk home is shortest."""
    state = _on_foot_at_l7(REQUIRED, 30)
    for seed in SEEDS:
        move = _search_move(state, seed)
        end = "L7" if move == "stop" else move.split(":")[1]
        assert BOARD.zone[end] == "3"


# --- Marco Polo II --------------------------------------------------------------------------------------
def _c24_in_hand() -> Mp2State:
    """The reported position: round 3, Isabella (seat 0) has used her dice and her action, holds C14 and C24
    and C24's cost (3 camels: 2 and a jade standing in; a pepper, a silk, a gold); a black die costs 3
    camels, C24 gives 5 VP and a black die."""
    state = start(2, ["isabella", "mongke"])
    state.round = 3
    clear_turn(state, 0, [])
    state.main_done = True
    state.goals = ["G01", "G07"]
    state.posts = [["XIA", "FUZ", "JAI", "CAM", "PAG"], ["XIA", "FUZ"]]
    state.figures = [["PAG"], ["OG"]]
    state.done = [["C34", "S2", "C40"], ["S6", "C28"]]
    state.active = [["C14", "C24"], ["C36", "C08"]]
    zero(state, 0, coins=16, camels=2, pepper=1, silk=2, gold=2, jade=1, vp=21)
    zero(state, 1, coins=5, camels=2, pepper=4, silk=2, gold=4, vp=15)
    state.dice[1] = ["c4", "c6", "c6"]
    state.contract_spaces = {
        "XIA": ["C09", "C27"],
        "ANX": ["C42", "C07"],
        "SAM": ["C05", "C06"],
        "JAI": ["C13", "C26"],
        "PAG": ["C33", None],
    }
    return fresh(state)


def _search_turn(state: Mp2State, seed: int, until: str = "end", limit: int = 16) -> list[str]:
    """Seat 0's decisions by the search level until its turn ends or it plays `until` (or `limit` decisions)."""
    bot = MctsPolicy(seed, level="search")
    played: list[str] = []
    while len(played) < limit and not state.is_over() and state.current_seats() == [0]:
        action_id = bot.choose(state.observation(0), state.legal_actions(0))
        state.apply(0, action_id)
        played.append(action_id)
        if action_id in ("end", until):
            break
    return played


def test_mp2_reported_position_offers_completing_c24_or_buying_a_black_die() -> None:
    legal = {a.id for a in _c24_in_hand().legal_actions(0)}
    assert {"complete:C24", "black", "end"} <= legal


@pytest.mark.parametrize("level", ["search", "search-strong"])
def test_mp2_search_completes_c24_rather_than_buy_a_black_die(level: str) -> None:
    for seed in SEEDS[:2]:
        state = _c24_in_hand()
        choice = MctsPolicy(seed, level=level).choose(state.observation(0), state.legal_actions(0))
        assert choice == "complete:C24"


def test_mp2_search_buys_no_black_die_in_the_turn_it_completes_c24() -> None:
    state = _c24_in_hand()
    turn = _search_turn(state, 1)
    assert turn[0] == "complete:C24" and "black" not in turn, turn  # C24's reward is the black die
    assert "C24" in state.done[0] and state.res[0]["vp"] == 26


def test_mp2_search_completes_c24_during_its_turn_while_dice_remain() -> None:
    """Round 2, four dice: completing C24 is a bonus action, before or after the normal one, but within the
    turn (it used to travel and keep C24, whose camels then paid for the journey)."""
    for seed in SEEDS[:2]:
        state = start(2, ["dewu", "abha"])
        state.round = 2
        clear_turn(state, 0, ["c2", "c3", "c4", "c5"])
        zero(state, 0, coins=8, camels=4, pepper=1, silk=1, gold=1, vp=5)
        state.active[0] = ["C24"]
        turn = _search_turn(fresh(state), seed, until="complete:C24")
        assert turn[-1] == "complete:C24" and "C24" in state.done[0], turn
