"""Replay reads: the stored record, and frames re-simulated by the engine as a seat or as the spectator.

Layer: selectors (read-only). Hidden information: a seat's frame is that seat's observation only; the
spectator sees every hand only for a finished (DONE) match, never while it runs, and a replay is held back
while another match with its seed is unfinished (`match_secrets_revealed`). Frames are never stored.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from engine_service.referee import MatchRecord, frame_at, replay
from ladder.matches.models import Match, MatchStatus
from ladder.matches.selectors import match_secrets_revealed
from ladder.replays.models import Replay

MAX_FRAMES_PER_REQUEST = 200


class ReplayUnavailable(LookupError):
    """The match has no replay (not finished, or unknown)."""


def _replay_row(match_id: int) -> Replay:
    replay_row = Replay.objects.filter(match_id=match_id).select_related("match").defer("data").first()
    if replay_row is None:
        if not Match.objects.filter(pk=match_id).exists():
            raise ReplayUnavailable(f"no match with id {match_id}")
        raise ReplayUnavailable(
            f"match {match_id} has no replay yet: replays are stored when a match finishes"
        )
    if not match_secrets_revealed(match=replay_row.match):
        raise ReplayUnavailable(
            f"match {match_id}'s replay is shown once the other matches of its duplicate set finish"
        )
    return replay_row


@lru_cache(maxsize=64)
def _parsed(match_id: int, sha256: str) -> MatchRecord:
    """The parsed record, cached per process by (match, content hash); callers must not mutate it."""
    return Replay.objects.get(match_id=match_id, sha256=sha256).record()


def replay_get(*, match_id: int) -> Replay:
    return _replay_row(match_id)


def replay_record(*, match_id: int) -> MatchRecord:
    row = _replay_row(match_id)
    return _parsed(match_id, row.sha256)


def _reveal(match: Match) -> bool:
    return match.status == MatchStatus.DONE


def _check_seat(record: MatchRecord, seat: int | None) -> None:
    if seat is not None and not 0 <= seat < record.num_players:
        raise ValueError(f"seat {seat} is not in this match (seats 0-{record.num_players - 1})")


def replay_frame(*, match_id: int, step: int, seat: int | None = None) -> dict[str, Any]:
    """The frame after `step` actions (engine `frame_at`), as `seat` saw it or as the spectator."""
    row = _replay_row(match_id)
    record = _parsed(match_id, row.sha256)
    _check_seat(record, seat)
    if not 0 <= step <= record.steps:
        raise ValueError(f"step {step} is outside this match (0-{record.steps})")
    frame = frame_at(record, step, seat, reveal=seat is None and _reveal(row.match))
    frame["seat"] = seat
    return frame


def replay_frames(*, match_id: int, start: int, count: int, seat: int | None = None) -> dict[str, Any]:
    """Up to `count` consecutive frames from `start` (one re-simulation for the whole run)."""
    row = _replay_row(match_id)
    record = _parsed(match_id, row.sha256)
    _check_seat(record, seat)
    if not 0 <= start <= record.steps:
        raise ValueError(f"start {start} is outside this match (0-{record.steps})")
    if not 1 <= count <= MAX_FRAMES_PER_REQUEST:
        raise ValueError(f"count must be 1-{MAX_FRAMES_PER_REQUEST}")
    reveal = seat is None and _reveal(row.match)
    state = replay(record, upto=start)
    frames = []
    end = min(record.steps, start + count - 1)
    for step in range(start, end + 1):
        view = state.observation(seat) if seat is not None else state.spectator_view(reveal=reveal)
        nxt = record.actions[step] if step < record.steps else None
        frames.append(
            {
                "step": step,
                "view": view,
                "next_action": {"seat": nxt[0], "action": nxt[1]} if nxt else None,
            }
        )
        if nxt is not None and step < end:
            state.apply(nxt[0], nxt[1])
    return {"start": start, "steps": record.steps, "seat": seat, "revealed": reveal, "frames": frames}
