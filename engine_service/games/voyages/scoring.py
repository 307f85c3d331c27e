"""The Voyages of Marco Polo's final scoring (section 6.1 of the reference), as a pure function of a state.

Pure: reads the state's public and private facts, changes nothing, no RNG.
"""

from __future__ import annotations

from typing import Any, Protocol

from engine_service.games.voyages.tables import BEIJING, BEIJING_VP, DISTINCT_CITY_VP, GOALS, GOODS

MOST_CONTRACTS_VP = 7


class _Scored(Protocol):
    num_players: int
    res: list[dict[str, int]]
    posts: list[list[int]]
    goals: list[list[int]]
    done: list[list[int]]
    beijing: list[int | None]


def goal_points(posts: list[int], goals: list[int]) -> tuple[int, int]:
    """(VP of the goal cards whose two cities both hold a post, VP of the distinct goal cities held)."""
    held = set(posts)
    cards = sum(GOALS[g]["vp"] for g in goals if all(c in held for c in GOALS[g]["cities"]))
    cities = {c for g in goals for c in GOALS[g]["cities"]} & held
    return cards, DISTINCT_CITY_VP[min(len(cities), len(DISTINCT_CITY_VP) - 1)]


def beijing_vp(state: _Scored, seat: int) -> int:
    for slot, owner in enumerate(state.beijing):
        if owner == seat:
            return BEIJING_VP[slot]
    return 0


def final_scores(state: _Scored) -> list[dict[str, Any]]:
    """Per seat: goal cards, distinct goal cities, coins (1 per 10), Beijing space, goods (1 per 2, only with
    a Beijing post), most completed contracts (7 to every seat tied for the most), and their total."""
    most = max(len(d) for d in state.done)
    out = []
    for seat in range(state.num_players):
        res = state.res[seat]
        cards, cities = goal_points(state.posts[seat], state.goals[seat])
        in_beijing = BEIJING in state.posts[seat]
        parts = {
            "goal_cards": cards,
            "goal_cities": cities,
            "coins": res["coins"] // 10,
            "beijing": beijing_vp(state, seat),
            "goods": sum(res[g] for g in GOODS) // 2 if in_beijing else 0,
            "most_contracts": MOST_CONTRACTS_VP if len(state.done[seat]) == most else 0,
        }
        parts["total"] = sum(parts.values())
        parts["seat"] = seat
        out.append(parts)
    return out
