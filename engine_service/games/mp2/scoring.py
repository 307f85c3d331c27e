"""Marco Polo II's final scoring (section 5.9 of the specification), as pure functions of a state.

Pure: reads the state's public and private facts, changes nothing, no RNG.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from engine_service.games.mp2.tables import CARAVAN_FINAL_VP, GOALS, SHIELD, VALUABLES, shield_vp

MOST_CONTRACTS_VP = 8
SECOND_CONTRACTS_VP = 4
VIDAL_CONTRACTS = 4
CHARACTER_SHIELDS = {"dewu": 1, "tebaldo": 1}


class _Scored(Protocol):
    num_players: int
    chars: list[str]
    res: list[dict[str, int]]
    posts: list[list[str]]
    goals: list[str]
    seals: list[dict[str, int]]
    done: list[list[str]]
    extra_shields: list[int]
    caravans: list[list[dict[str, Any]]]


def shield_count(state: _Scored, seat: int) -> int:
    """Distinct shields of the seat's post cities, plus every "+1": goal-card shields met, De Wu, Tebaldo,
    outpost OP10 and contract rewards."""
    held = {SHIELD[city] for city in state.posts[seat]}
    count = len(held) + state.extra_shields[seat] + CHARACTER_SHIELDS.get(state.chars[seat], 0)
    goal = state.goals[seat]
    if goal:
        count += sum(1 for shield in GOALS[goal]["shields"] if shield in held)
    return count


def goal_seal_points(state: _Scored, seat: int) -> int:
    goal = state.goals[seat]
    if not goal:
        return 0
    return sum(vp for seal, vp in GOALS[goal]["seals"].items() if state.seals[seat].get(seal, 0) == 2)


def contract_counts(state: _Scored) -> list[int]:
    return [
        VIDAL_CONTRACTS if state.chars[s] == "vidal" else len(state.done[s]) for s in range(state.num_players)
    ]


def contract_awards(counts: Sequence[int], num_players: int) -> list[int]:
    """Q8: every seat tied for the most gets 8; the next distinct count gets 4 each (not with 2 players);
    nobody scores with 0 contracts."""
    distinct = sorted({c for c in counts if c > 0}, reverse=True)
    awards = []
    for count in counts:
        if count > 0 and distinct and count == distinct[0]:
            awards.append(MOST_CONTRACTS_VP)
        elif count > 0 and num_players > 2 and len(distinct) > 1 and count == distinct[1]:
            awards.append(SECOND_CONTRACTS_VP)
        else:
            awards.append(0)
    return awards


def final_scores(state: _Scored) -> list[dict[str, Any]]:
    """Per seat: goal-card seals, shields on the track, goods (1 per 2), coins (1 per 10), contract
    majorities, goods still on caravans (half price), and their total."""
    awards = contract_awards(contract_counts(state), state.num_players)
    out = []
    for seat in range(state.num_players):
        res = state.res[seat]
        parts = {
            "goal_seals": goal_seal_points(state, seat),
            "shields": shield_vp(shield_count(state, seat)),
            "goods": sum(res[g] for g in VALUABLES) // 2,
            "coins": res["coins"] // 10,
            "contracts": awards[seat],
            "caravans": sum(CARAVAN_FINAL_VP[g] for c in state.caravans[seat] for g in c["goods"]),
        }
        parts["total"] = sum(parts.values())
        parts["seat"] = seat
        out.append(parts)
    return out
