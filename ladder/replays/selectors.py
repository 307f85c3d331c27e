"""Replay reads: the stored record, and frames re-simulated by the engine as a seat or as the spectator.

Layer: selectors (read-only). Hidden information: a seat's frame is that seat's observation only; the
spectator sees every hand only for a finished (DONE) match, never while it runs, and a replay is held back
while another match with its seed is unfinished (`match_secrets_revealed`). Frames are never stored.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from engine_service.referee import MatchRecord, frame_with_words, frames, match_index
from ladder.matches.models import Match, MatchStatus
from ladder.matches.selectors import match_live_watchable, match_secrets_revealed
from ladder.replays.models import LiveProgress, Replay

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


def replay_frame(*, match_id: int, step: int, seat: int | None = None) -> dict[str, Any]:
    """The frame after `step` actions, as `seat` saw it or as the spectator (`referee.frames`)."""
    row = _replay_row(match_id)
    record = _parsed(match_id, row.sha256)
    frame = frame_with_words(record, step, seat, reveal=seat is None and _reveal(row.match))
    frame["seat"] = seat
    frame["steps"] = record.steps
    return frame


def replay_frames(*, match_id: int, start: int, count: int, seat: int | None = None) -> dict[str, Any]:
    """Up to `count` consecutive frames from `start` (one re-simulation for the whole run)."""
    row = _replay_row(match_id)
    record = _parsed(match_id, row.sha256)
    if not 0 <= start <= record.steps:
        raise ValueError(f"start {start} is outside this match (0-{record.steps})")
    if not 1 <= count <= MAX_FRAMES_PER_REQUEST:
        raise ValueError(f"count must be 1-{MAX_FRAMES_PER_REQUEST}")
    reveal = seat is None and _reveal(row.match)
    run = frames(record, start=start, count=count, seat=seat, reveal=reveal)
    return {"start": start, "steps": record.steps, "seat": seat, "revealed": reveal, "frames": run}


def replay_index(*, match_id: int) -> dict[str, Any]:
    """Where each round and turn of a finished match begins (steps), for the viewer's jumps."""
    row = _replay_row(match_id)
    return _index(match_id, row.sha256)


@lru_cache(maxsize=64)
def _index(match_id: int, sha256: str) -> dict[str, Any]:
    return match_index(_parsed(match_id, sha256))


def live_frame(*, match_id: int) -> dict[str, Any]:
    """The latest public frame of a match being played (its ladder's delay behind the play): the
    spectator's view with every hand hidden, its log and its round, never the actions themselves."""
    match = Match.objects.select_related("ladder").filter(pk=match_id).first()
    if match is None:
        raise ReplayUnavailable(f"no match with id {match_id}")
    body: dict[str, Any] = {"match": match.pk, "status": match.status, "frame": None}
    if match.status != MatchStatus.RUNNING:
        body["steps"] = match.steps
        return body
    if not match_live_watchable(match=match):
        raise ReplayUnavailable(
            f"match {match_id} is part of a duplicate set still being played: "
            "it can be watched once every match of the set is finished"
        )
    progress = LiveProgress.objects.filter(match=match).first()
    actions = [(int(seat), str(action)) for seat, action in (progress.actions if progress else [])]
    delay = match.ladder.live_delay_steps
    shown = max(0, len(actions) - delay)
    ladder = match.ladder
    body.update(
        steps=len(actions),
        step=shown,
        delay=delay,
        updated_at=progress.updated_at.isoformat() if progress else None,
        frame=_live(
            ladder.game_id, ladder.num_players, json.dumps(ladder.options), match.seed, tuple(actions[:shown])
        ),
    )
    return body


@lru_cache(maxsize=128)
def _live(
    game_id: str, players: int, options_json: str, seed: int, actions: tuple[tuple[int, str], ...]
) -> dict[str, Any]:
    """The spectator's frame after `actions` (cached: every watcher of a match asks for the same one)."""
    record = MatchRecord(
        game_id=game_id,
        num_players=players,
        options=json.loads(options_json),
        seed=seed,
        seats=[],
        actions=list(actions),
    )
    frame = frame_with_words(record, len(actions), None, reveal=False)
    frame["result"] = None  # the result comes with the replay, once the match is recorded
    return frame
