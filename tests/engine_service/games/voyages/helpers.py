"""Helpers for Voyages tests: build an exact situation through the state's attributes, then apply ids."""

from __future__ import annotations

from typing import Any

from engine_service.games.voyages import SPEC, VoyagesState
from engine_service.games.voyages.tables import NODE_BY_SLUG


def new_game(players: int = 3, seed: int = 1, **options: Any) -> VoyagesState:
    state = SPEC.new_state(players, seed, options)
    assert isinstance(state, VoyagesState)
    return state


def node(slug: str) -> int:
    return NODE_BY_SLUG[slug]


def my_turn(state: VoyagesState, seat: int, dice: list[str], **resources: int) -> VoyagesState:
    """Make it `seat`'s turn with exactly `dice` (tokens like "c4", "b2") and the given resources, nothing
    pending, the main action not yet taken."""
    state.pending = []
    state.phase = "play"
    state.turn_seat = seat
    state.main_done = False
    state.black_bought = False
    state.posts_this_turn = []
    state.dice[seat] = sorted(dice)
    for name, amount in resources.items():
        state.res[seat][name] = amount
    state._legal_cache = None
    return state


def ids(state: VoyagesState) -> list[str]:
    seats = state.current_seats()
    return [a.id for a in state.legal_actions(seats[0])] if seats else []


def play(state: VoyagesState, seat: int, *action_ids: str) -> None:
    for action_id in action_ids:
        state.apply(seat, action_id)
