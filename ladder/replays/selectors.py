"""Replay reads: the stored record, and frames re-simulated by the engine as a seat or as the spectator.

Layer: selectors (read-only). Hidden information: a seat's frame is that seat's observation only until the
game is over (then every seat's hidden items too: `referee.replay.frame_view`); the spectator sees every
hand only for a finished (DONE) match, never while it runs, and a replay is held back while another match
with its seed is unfinished (`match_secrets_revealed`). Frames are never stored.

Beside the engine's frames: each frame's `clocks` (every seat's last decision time and bank left, from the
record's measured clocks) and `scores` (the public running score of each seat), and the move list
(`replay_moves`: every action in the game's words with its seat, round, turn, clock and the scores after it),
built in one re-simulation per match and cached. The move list's words are the spec's `describe_action`,
which names no hidden choice; it carries no action ids.

The live frame of a running match carries the same public extras for the step it shows: each seat's clock
(from the clocks the worker publishes with the actions) and the score series so far (`score_series`, the
steps where a score changed), built on from what the last poll of the match computed (`_live_series`).
"""

from __future__ import annotations

import json
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from engine_service.games import GameState, get_game
from engine_service.referee import MatchRecord, frame_with_words, frames, match_index, replay
from engine_service.referee.replay import apply_recorded
from ladder.matches.models import Match, MatchStatus
from ladder.matches.selectors import match_live_watchable, match_secrets_revealed
from ladder.replays.models import LiveProgress, Replay

MAX_FRAMES_PER_REQUEST = 200
MAX_MOVES_PER_REQUEST = 1000
DRAGONDA_WIN_XP = 51  # a victory condition of Dragonda (its rules' WIN_XP), read here from the public view


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
    _add_clocks_and_scores(match_id, row.sha256, record, frame)
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
    for frame in run:
        _add_clocks_and_scores(match_id, row.sha256, record, frame)
    return {"start": start, "steps": record.steps, "seat": seat, "revealed": reveal, "frames": run}


def replay_index(*, match_id: int) -> dict[str, Any]:
    """Where each round and turn of a finished match begins (steps), for the viewer's jumps."""
    row = _replay_row(match_id)
    return _index(match_id, row.sha256)


@lru_cache(maxsize=64)
def _index(match_id: int, sha256: str) -> dict[str, Any]:
    return match_index(_parsed(match_id, sha256))


def replay_moves(*, match_id: int, start: int = 0, count: int = MAX_MOVES_PER_REQUEST) -> dict[str, Any]:
    """Up to `count` moves from move `start` (move N is the action that leads from step N to step N + 1):
    each in words with its seat, round, turn, clock and whether it was a fault's fallback; `scores` is the
    series over every step (0 to the last), `score_label` what it counts (None: the game has no score)."""
    row = _replay_row(match_id)
    moves = _moves(match_id, row.sha256)
    if not 0 <= start <= moves["steps"]:
        raise ValueError(f"start {start} is outside this match (0-{moves['steps']})")
    if not 1 <= count <= MAX_MOVES_PER_REQUEST:
        raise ValueError(f"count must be 1-{MAX_MOVES_PER_REQUEST}")
    return {
        "steps": moves["steps"],
        "start": start,
        "score_label": moves["score_label"],
        "scores": moves["scores"],
        "moves": moves["moves"][start : start + count],
    }


def _add_clocks_and_scores(match_id: int, sha256: str, record: MatchRecord, frame: dict[str, Any]) -> None:
    """A frame's `clocks` (per seat: its last decision before this step, seconds used and bank left, and
    the next decision's own clock on `next_action`) and `scores` (the public running score per seat)."""
    step = frame["step"]
    marks = _clock_marks(match_id, sha256)
    clocks: list[dict[str, Any] | None] = []
    for steps, entries in marks:
        at = bisect_left(steps, step) - 1
        clocks.append(None if at < 0 else {"step": steps[at], **entries[at]})
    frame["clocks"] = clocks
    if frame.get("next_action") is not None:
        frame["next_action"]["clock"] = _clock_json(record.clocks.get(step))
    frame["scores"] = _moves(match_id, sha256)["scores"][step]


def _clock_json(entry: list[float | None] | None) -> dict[str, float | None] | None:
    return None if entry is None else {"seconds": entry[0], "bank": entry[1]}


@lru_cache(maxsize=64)
def _clock_marks(match_id: int, sha256: str) -> list[tuple[list[int], list[dict[str, Any]]]]:
    """Per seat, the steps of its timed decisions in order and their clocks (for a bisect per frame)."""
    record = _parsed(match_id, sha256)
    marks: list[tuple[list[int], list[dict[str, Any]]]] = [([], []) for _ in range(record.num_players)]
    for step in sorted(record.clocks):
        seat = record.actions[step][0] if step < record.steps else None
        if seat is not None and 0 <= seat < record.num_players:
            marks[seat][0].append(step)
            marks[seat][1].append(_clock_json(record.clocks[step]) or {})
    return marks


ScoreReader = Callable[[Mapping[str, Any]], list[int]]


def _vp(view: Mapping[str, Any]) -> list[int]:
    return [int(r.get("vp", 0)) for r in view["res"]]


def _gold(view: Mapping[str, Any]) -> list[int]:
    return [int(p.get("gold", 0)) for p in view["players"]]


def _conditions(view: Mapping[str, Any]) -> list[int]:
    return [(1 if p["xp"] >= DRAGONDA_WIN_XP else 0) + len(p["visited"]) for p in view["players"]]


# What each game's running score is, read from the public (spectator) view: its label and reader.
SCORES: dict[str, tuple[str, ScoreReader]] = {
    "expedition": ("gold", _gold),
    "voyages": ("victory points", _vp),
    "mp2": ("victory points", _vp),
    "dragonda": ("victory conditions met (of 6)", _conditions),
}


def _score_reader(game_id: str) -> tuple[str | None, ScoreReader | None]:
    label, reader = SCORES.get(game_id.rsplit("-v", 1)[0], (None, None))
    return label, reader


def _scores_now(state: GameState, reader: ScoreReader | None) -> list[int] | None:
    if state.is_over():
        return list(state.result().scores)
    return reader(state.spectator_view(reveal=False)) if reader else None


@lru_cache(maxsize=64)
def _moves(match_id: int, sha256: str) -> dict[str, Any]:
    """Every move of the match in words and the score series: one re-simulation, cached per process."""
    record = _parsed(match_id, sha256)
    spec = get_game(record.game_id)
    label, reader = _score_reader(record.game_id)
    state = replay(record, upto=0)
    scores = [_scores_now(state, reader)]
    moves: list[dict[str, Any]] = []
    for step, (seat, action_id) in enumerate(record.actions):
        progress = spec.progress(state)
        text = spec.describe_action(state, seat, action_id)
        apply_recorded(state, seat, action_id)
        scores.append(_scores_now(state, reader))
        moves.append(
            {
                "step": step,
                "seat": seat,
                "text": text,
                "round": progress.round,
                "turn": progress.turn,
                "clock": _clock_json(record.clocks.get(step)),
                "fault": any(f.step == step and f.seat == seat for f in record.faults),
            }
        )
    return {"steps": record.steps, "score_label": label, "scores": scores, "moves": moves}


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
    clocks = {int(step): clock for step, clock in (progress.clocks if progress else {}).items()}
    delay = match.ladder.live_delay_steps
    shown = max(0, len(actions) - delay)
    ladder = match.ladder
    game = (ladder.game_id, ladder.num_players, json.dumps(ladder.options), match.seed)
    body.update(
        steps=len(actions),
        step=shown,
        delay=delay,
        updated_at=progress.updated_at.isoformat() if progress else None,
        frame={
            **_live(*game, tuple(actions[:shown])),
            "clocks": _live_clocks(actions[:shown], clocks, ladder.num_players),
            "score_series": _live_series(*game, tuple(actions[:shown])),
        },
    )
    return body


def _live_record(
    game_id: str, players: int, options_json: str, seed: int, actions: Sequence[tuple[int, str]]
) -> MatchRecord:
    return MatchRecord(
        game_id=game_id,
        num_players=players,
        options=json.loads(options_json),
        seed=seed,
        seats=[],
        actions=list(actions),
    )


@lru_cache(maxsize=128)
def _live(
    game_id: str, players: int, options_json: str, seed: int, actions: tuple[tuple[int, str], ...]
) -> dict[str, Any]:
    """The spectator's frame after `actions` (cached: every watcher of a match asks for the same one)."""
    record = _live_record(game_id, players, options_json, seed, actions)
    frame = frame_with_words(record, len(actions), None, reveal=False)
    frame["result"] = None  # the result comes with the replay, once the match is recorded
    label, reader = _score_reader(game_id)
    frame["scores"] = reader(frame["view"]) if reader else None
    frame["score_label"] = label
    return frame


def _live_clocks(
    actions: Sequence[tuple[int, str]], clocks: Mapping[int, Sequence[float | None]], players: int
) -> list[dict[str, Any] | None]:
    """Per seat, its last timed decision among `actions` (the steps shown) and its clock, as a replay frame's
    `clocks` has them; None for a seat with none yet."""
    out: list[dict[str, Any] | None] = [None] * players
    missing = set(range(players))
    for step in range(len(actions) - 1, -1, -1):
        seat = actions[step][0]
        if seat in missing and step in clocks:
            out[seat] = {"step": step, **(_clock_json(list(clocks[step])) or {})}
            missing.discard(seat)
            if not missing:
                break
    return out


@dataclass(frozen=True)
class _Series:
    actions: tuple[tuple[int, str], ...]
    state: GameState  # after `actions`; never changed again (a later poll advances a clone)
    points: tuple[dict[str, Any], ...]  # {step, scores} at step 0 and wherever a score changed


LIVE_SERIES_KEPT = 64  # matches whose last series this process keeps to build on
_series: OrderedDict[tuple[str, int, str, int], _Series] = OrderedDict()
_series_lock = threading.Lock()


def _live_series(
    game_id: str, players: int, options_json: str, seed: int, actions: tuple[tuple[int, str], ...]
) -> list[dict[str, Any]] | None:
    """Each seat's public score over the steps of `actions`, as the points where a score changed (and the last
    step), read from the spectator's view as the replay's series is; None where the game has no score. Built on
    from the series this process last computed for the match, so a poll re-simulates only the new steps."""
    _label, reader = _score_reader(game_id)
    if reader is None:
        return None
    key = (game_id, players, options_json, seed)
    with _series_lock:
        kept = _series.get(key)
    if kept is not None and actions[: len(kept.actions)] == kept.actions:
        state, points = kept.state.clone(), list(kept.points)
        done = len(kept.actions)
    else:
        state = replay(_live_record(game_id, players, options_json, seed, ()), upto=0)
        points, done = [{"step": 0, "scores": reader(state.spectator_view(reveal=False))}], 0
    for step, (seat, action_id) in enumerate(actions[done:], start=done + 1):
        apply_recorded(state, seat, action_id)
        scores = reader(state.spectator_view(reveal=False))  # never the result's: hands stay hidden live
        if scores != points[-1]["scores"]:
            points.append({"step": step, "scores": scores})
    with _series_lock:
        if key not in _series or len(_series[key].actions) <= len(actions):
            _series[key] = _Series(actions, state, tuple(points))
            _series.move_to_end(key)
        while len(_series) > LIVE_SERIES_KEPT:
            _series.popitem(last=False)
    if points[-1]["step"] != len(actions):
        points.append({"step": len(actions), "scores": points[-1]["scores"]})
    return points
