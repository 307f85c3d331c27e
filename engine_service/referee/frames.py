"""Replay frames with words: what a viewer shows at each step of a recorded match, as a seat or as the
spectator, and the index of where each round and turn begins.

Every frame is re-simulated from the record, never stored: from the nearest state `snapshots` kept, so a
frame costs at most its SNAPSHOT_EVERY steps of simulation at any step. A frame carries the view, the last
events of its log in sentences, the next decision and its chosen action in words, the round and turn, and on
the final step the result in sentences; the words come from the game's spec (`describe_event`,
`describe_action`, `describe_result`, `progress`), so the CLI and the web say the same things.
Hidden information: a seat's frame holds that seat's observation only until the game is over, and then every
seat's hidden items too (`replay.frame_view`); the caller decides the spectator's `reveal` (only for finished
matches), and the spectator's frame never describes a seat's hidden choice before then.
"""

from __future__ import annotations

from typing import Any

from engine_service.games import GameSpec, GameState, get_game
from engine_service.referee.record import MatchRecord
from engine_service.referee.replay import advance_checked, frame_view, replay
from engine_service.referee.snapshots import replay_from_snapshots, snapshot_keep

LOG_LINES = 12


def frames(
    record: MatchRecord, *, start: int, count: int, seat: int | None = None, reveal: bool = False
) -> list[dict[str, Any]]:
    """Up to `count` consecutive frames from `start` (one re-simulation for the whole run)."""
    if seat is not None and not 0 <= seat < record.num_players:
        raise ValueError(f"seat {seat} is not in this match (seats 0-{record.num_players - 1})")
    spec = get_game(record.game_id)
    state = replay_from_snapshots(record, upto=start)
    out = []
    end = min(record.steps, start + count - 1)
    for step in range(start, end + 1):
        out.append(_frame(spec, record, state, step, seat, reveal))
        if step < end:
            advance_checked(record, state, upto=step + 1)
            snapshot_keep(record, state)
    return out


def frame_with_words(
    record: MatchRecord, step: int, seat: int | None = None, *, reveal: bool = False
) -> dict[str, Any]:
    """The frame after `step` actions."""
    if not 0 <= step <= record.steps:
        raise ValueError(f"step {step} is outside this match (0-{record.steps})")
    return frames(record, start=step, count=1, seat=seat, reveal=reveal)[0]


def _frame(
    spec: GameSpec, record: MatchRecord, state: GameState, step: int, seat: int | None, reveal: bool
) -> dict[str, Any]:
    view = frame_view(state, seat, reveal=reveal)
    progress = spec.progress(state)
    frame: dict[str, Any] = {
        "step": step,
        "view": view,
        "round": progress.round,
        "turn": progress.turn,
        "log": [
            {"seat": event.get("seat"), "text": spec.describe_event(event)}
            for event in spec.events_of(view)[-LOG_LINES:]
        ],
        "next_action": None,
        "result": None,
    }
    if step < record.steps:
        actor, action_id = record.actions[step]
        frame["next_action"] = {
            "seat": actor,
            "action": action_id,
            "text": spec.describe_action(state, actor, action_id),
        }
    elif state.is_over():
        frame["result"] = _result(spec, record, state)
    return frame


def _result(spec: GameSpec, record: MatchRecord, state: GameState) -> dict[str, Any]:
    game_result = state.result()
    recorded = record.result or {}
    forfeits = list(recorded.get("forfeits", record.forfeits))
    lines = spec.describe_result(state, game_result)
    for forfeited in forfeits:
        faults = sum(1 for f in record.faults if f.seat == forfeited)
        lines.append(
            f"seat {forfeited} forfeited after {faults} fault{'s' if faults != 1 else ''} and ranks last"
        )
    return {
        "scores": game_result.scores,
        "ranks": list(recorded.get("ranks", game_result.ranks)),
        "game_ranks": game_result.ranks,
        "tiebreaks": game_result.tiebreaks,
        "reason": game_result.reason,
        "forfeits": forfeits,
        "lines": lines,
    }


def match_index(record: MatchRecord) -> dict[str, Any]:
    """Where each round and each turn begins (steps), for a viewer's jumps; one re-simulation."""
    spec = get_game(record.game_id)
    state = replay(record, upto=0)
    rounds: list[dict[str, int]] = []
    turns: list[int] = []
    last_round: int | None = None
    last_turn: int | None = None
    for step in range(record.steps + 1):
        progress = spec.progress(state)
        if progress.round is not None and progress.round != last_round:
            rounds.append({"round": progress.round, "step": step})
            last_round = progress.round
        if progress.turn is not None and progress.turn != last_turn:
            turns.append(step)
            last_turn = progress.turn
        if step < record.steps:
            advance_checked(record, state, upto=step + 1)  # kept states are checked ones
            snapshot_keep(record, state)  # the viewer asks for frames next
    return {"steps": record.steps, "rounds": rounds, "turns": turns}
