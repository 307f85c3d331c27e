"""Helpers for Marco Polo II rule tests: games with chosen characters, and forcing a position.

Test support only: states are set up through the public setup decisions, then individual facts (dice,
holdings, figures) are set directly to reach the position a rulebook example describes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine_service.games.mp2 import SPEC, Mp2State
from engine_service.games.mp2.tables import BASE_CHARACTERS, CARAVAN_CHARACTERS


def fresh(state: Mp2State) -> Mp2State:
    """Forget cached legal actions after a direct change of the state."""
    state._legal_cache = None
    return state


def _second_level(state: Mp2State, seat: int, first: str) -> list[str] | None:
    """The ids a two-level turn-menu action leads to (None for a one-level action)."""
    if first in ("bag", "reroll", "adjust"):
        return [a.id for a in state._die_bonus_actions(seat, first)]
    if first.startswith("place:") and first.count(":") == 1:
        space = first.split(":")[1]
        return [a.id for a in state._placements(seat) if a.details["space"] == space]
    return None


def ids(state: Mp2State, seat: int | None = None) -> list[str]:
    """The legal ids, with the turn menu's two-level actions (a space, then dice; a die bonus, then the
    die) shown as the full second-level ids."""
    fresh(state)
    who = state.current_seats()[0] if seat is None else seat
    out: list[str] = []
    for action in state.legal_actions(who):
        second = _second_level(state, who, action.id) if not state.pending else None
        out.extend(second if second is not None else [action.id])
    return out


def act(state: Mp2State, action_id: str) -> None:
    """Apply an id; a full second-level id of the turn menu applies its first level, then itself."""
    fresh(state)
    seat = state.current_seats()[0]
    legal = [a.id for a in state.legal_actions(seat)]
    if action_id not in legal and not state.pending:
        for first in legal:
            second = _second_level(state, seat, first)
            if second is not None and action_id in second:
                state.apply(seat, first)
                fresh(state)
                if state.pending and state.pending[0]["t"] in ("dice_pick", "die_bonus"):
                    state.apply(seat, action_id)
                return
    state.apply(seat, action_id)


def start(players: int, chars: Sequence[str], *, seed: int = 1, **options: Any) -> Mp2State:
    """A game in round 1 with `chars[seat]` for each seat, every setup and round-start choice taken with
    its first (fallback) action, and the first player to move."""
    state = SPEC.new_state(players, seed, options)
    assert isinstance(state, Mp2State)
    pool = list(BASE_CHARACTERS + (CARAVAN_CHARACTERS if options.get("caravans") else ()))
    filler = next(c for c in pool if c not in chars)
    state.draft_pool = sorted([*chars, filler])
    while state.pending and state.pending[0]["t"] == "draft":
        seat = int(state.pending[0]["seat"])
        act(state, f"pick:{chars[seat]}")
    settle(state)
    return state


def settle(state: Mp2State) -> None:
    """Take the first action of every pending choice until a turn menu (or the end) is reached."""
    state._run()
    while state.pending and not state.is_over():
        act(state, ids(state)[0])


def clear_turn(state: Mp2State, seat: int, dice: Sequence[str] = ()) -> None:
    """Make it `seat`'s turn with exactly `dice`, nothing pending, the normal action not yet taken."""
    state.pending = []
    state.turn_seat = seat
    state.main_done = False
    state.black_bought = False
    state.posts_this_turn = []
    state.dice[seat] = sorted(dice)
    fresh(state)


def zero(state: Mp2State, seat: int, **holdings: int) -> None:
    """Set a seat's holdings: every resource 0 except those given."""
    for name in state.res[seat]:
        state.res[seat][name] = 0
    state.res[seat].update(holdings)
    fresh(state)


def routes(state: Mp2State, end: str, figure: int | None = None) -> list[dict[str, Any]]:
    """The offered movements (their details) ending in `end` (for one figure, if given)."""
    fresh(state)
    seat = state.current_seats()[0]
    return [
        dict(a.details, id=a.id)
        for a in state.legal_actions(seat)
        if a.kind == "move"
        and a.details.get("to") == end
        and (figure is None or a.details["figure"] == figure)
    ]


def go(state: Mp2State, end: str, figure: int | None = None) -> dict[str, Any]:
    """Take the first (cheapest) offered movement ending in `end`; return its details."""
    found = routes(state, end, figure)
    assert found, f"no movement to {end} offered: {ids(state)}"
    act(state, found[0]["id"])
    return found[0]
