"""Re-simulate a match record, verifying every stored state hash; frames at any step, as a seat or spectator
(`frame_view`: what a frame shows, which every frame builder uses).

A replay that does not reproduce its hashes is an error naming the first differing step, never a silent
difference.
"""

from __future__ import annotations

from typing import Any

from engine_service.games import GameState, IllegalAction, get_game
from engine_service.referee.record import MatchRecord


class ReplayMismatch(Exception):
    """The re-simulation diverged from the record at `step`."""

    def __init__(self, step: int, message: str) -> None:
        self.step = step
        super().__init__(f"replay diverges at step {step}: {message}")


def _check_hash(record: MatchRecord, state: GameState) -> None:
    expected = record.hashes.get(state.step)
    if expected is not None and expected != state.state_hash():
        raise ReplayMismatch(state.step, f"state hash {state.state_hash()} != recorded {expected}")


def replay(record: MatchRecord, *, upto: int | None = None, check: bool = True) -> GameState:
    """The state after `upto` actions (all of them by default), checking hashes on the way."""
    last = record.steps if upto is None else upto
    if not 0 <= last <= record.steps:
        raise ValueError(f"step {last} is outside this match (0-{record.steps})")
    spec = get_game(record.game_id)
    state = spec.new_state(record.num_players, record.seed, record.options, revision=record.revision)
    if check:
        _check_hash(record, state)
    advance_checked(record, state, upto=last, check=check)
    return state


def advance_checked(record: MatchRecord, state: GameState, *, upto: int, check: bool = True) -> None:
    """Apply `record`'s actions to `state` (the state after `state.step` of them) until `upto` are applied,
    checking the recorded hashes on the way."""
    for seat, action_id in record.actions[state.step : upto]:
        try:
            apply_recorded(state, seat, action_id)
        except IllegalAction as exc:
            raise ReplayMismatch(
                state.step, f"recorded action {action_id!r} of seat {seat} is illegal: {exc}"
            ) from exc
        if check:
            _check_hash(record, state)


def apply_recorded(state: GameState, seat: int, action_id: str) -> None:
    """Apply a recorded action; an id from before a game's ids were renamed is applied by its current id."""
    try:
        state.apply(seat, action_id)
    except IllegalAction:
        upgraded = state.upgrade_action_id(seat, action_id)
        if upgraded == action_id:
            raise
        state.apply(seat, upgraded)


def verify(record: MatchRecord) -> GameState:
    """Replay the whole record; raise `ReplayMismatch` unless every hash and the result match."""
    state = replay(record)
    if record.result is not None:
        if not state.is_over():
            raise ReplayMismatch(state.step, "the record has a result but the game is not over")
        game_result = state.result().to_json()
        recorded = record.result.get("game", record.result)
        if recorded.get("scores") != game_result["scores"]:
            raise ReplayMismatch(
                state.step, f"scores {game_result['scores']} != recorded {recorded.get('scores')}"
            )
    return state


def frame_view(state: GameState, seat: int | None, *, reveal: bool) -> dict[str, Any]:
    """What a frame shows of `state`: the spectator's table (every hand hidden unless `reveal`, which the
    caller allows only for finished matches), or `seat`'s observation. Once the game is over nothing is
    hidden from a seat any more: its view then holds every seat's hidden items too (the revealed table's
    keys, under the seat's own observation, which keeps its perspective: "seat", its own hand or goals)."""
    if seat is None:
        return state.spectator_view(reveal=reveal)
    view = state.observation(seat)
    if state.is_over():
        view = {**state.spectator_view(reveal=True), **view}
    return view


def frame_at(
    record: MatchRecord, step: int, seat: int | None = None, *, reveal: bool = False
) -> dict[str, Any]:
    """The view after `step` actions: seat `seat`'s observation (`frame_view`: every seat's hidden items
    too once the game is over), or the spectator's (hands hidden unless `reveal`). The caller decides whether
    revealing the spectator's is allowed (only for finished matches)."""
    if seat is not None and not 0 <= seat < record.num_players:
        raise ValueError(f"seat {seat} is not in this match (0-{record.num_players - 1})")
    state = replay(record, upto=step)
    view = frame_view(state, seat, reveal=reveal)
    next_action = record.actions[step] if step < record.steps else None
    return {
        "step": step,
        "steps": record.steps,
        "view": view,
        "next_action": {"seat": next_action[0], "action": next_action[1]} if next_action else None,
    }
