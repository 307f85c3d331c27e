"""Kept states of recorded matches, every SNAPSHOT_EVERY steps, per process: a frame at step k is
re-simulated from the nearest kept state at or below k instead of from the start, so what a viewer's or a
live view's poll costs stays within SNAPSHOT_EVERY steps of simulation whatever the match's length.

A match is known by what makes its game (game, players, options, seed, rules revision) and its record's
match id; a kept state serves a record only if the record's actions up to that step are the ones it was
made from (a live match's record grows, and two records of one seed are other games). The states are
clones (`GameState.clone`, which copies the chance stream exactly) and are handed out as clones, so no
caller changes a kept one; every step advanced still checks the record's state hashes, as `replay` does.
The LRU keeps the states of the last MATCHES_KEPT matches asked for.

Hidden information: the states are whole, held in this process's memory only; nothing here is served.
This module must not import Django.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from engine_service.games import GameState
from engine_service.games.base import canonical_json
from engine_service.referee.record import MatchRecord
from engine_service.referee.replay import advance_checked, replay

SNAPSHOT_EVERY = 50
MATCHES_KEPT = 64

_Key = tuple[str, int, str, int, int, str | None]


@dataclass
class _Kept:
    actions: list[tuple[int, str]] = field(default_factory=list)  # the actions the states were made from
    states: dict[int, GameState] = field(default_factory=dict)  # step -> the state after that many actions


_kept: OrderedDict[_Key, _Kept] = OrderedDict()
_lock = threading.Lock()


def _key(record: MatchRecord) -> _Key:
    options = canonical_json(record.options)
    return (record.game_id, record.num_players, options, record.seed, record.rules_revision, record.match_id)


def _nearest(record: MatchRecord, upto: int) -> GameState | None:
    """A clone of the latest kept state at or below `upto` that `record`'s actions lead to, if any."""
    with _lock:
        kept = _kept.get(_key(record))
        if kept is None:
            return None
        _kept.move_to_end(_key(record))
        for step in sorted((s for s in kept.states if s <= upto), reverse=True):
            if kept.actions[:step] == record.actions[:step]:
                return kept.states[step].clone()
    return None


def snapshot_keep(record: MatchRecord, state: GameState) -> None:
    """Keep `state` (the state after `state.step` of `record`'s actions) if its step is a snapshot step;
    a record whose actions part from the kept ones replaces them."""
    step = state.step
    if step % SNAPSHOT_EVERY or step > record.steps:
        return
    copy = state.clone()
    with _lock:
        key = _key(record)
        kept = _kept.get(key)
        if kept is None or not _agree(kept.actions, record.actions):
            kept = _kept[key] = _Kept(actions=list(record.actions))
        elif record.steps > len(kept.actions):
            kept.actions = list(record.actions)
        _kept.move_to_end(key)
        kept.states[step] = copy
        while len(_kept) > MATCHES_KEPT:
            _kept.popitem(last=False)


def _agree(kept: list[tuple[int, str]], actions: list[tuple[int, str]]) -> bool:
    shared = min(len(kept), len(actions))
    return kept[:shared] == actions[:shared]


def replay_from_snapshots(record: MatchRecord, *, upto: int) -> GameState:
    """The state after `upto` actions, as `replay(record, upto=upto)` gives it, from the nearest kept
    state; the snapshot steps passed on the way are kept."""
    if not 0 <= upto <= record.steps:
        raise ValueError(f"step {upto} is outside this match (0-{record.steps})")
    state = _nearest(record, upto) or replay(record, upto=0)
    snapshot_keep(record, state)
    while state.step < upto:
        next_stop = min(upto, (state.step // SNAPSHOT_EVERY + 1) * SNAPSHOT_EVERY)
        advance_checked(record, state, upto=next_stop)
        snapshot_keep(record, state)
    return state


def snapshots_clear() -> None:
    """Forget every kept state (tests, and a process that must give its memory back)."""
    with _lock:
        _kept.clear()
