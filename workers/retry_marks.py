"""Retry marks: a worker process's word that a task it set to retry is still coming back to its work.

A task that retries after a countdown holds no lease while it waits, so to the stale sweep its RUNNING match
looks like a lost worker's. The process that set the retry holds a mark instead: a lease on the task's
retry key, renewed by the process's lease renewer (`workers.leases`), so the mark lasts exactly as long as
the process lives, up to a deadline (a retry that never comes must not hold its match for ever). The retry
drops the mark when it starts, in whichever process it runs. Layer: worker infrastructure, like leases; it
must not import Django models or know about matches.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from typing import NamedTuple

import redis

from workers import leases

log = logging.getLogger(__name__)


class _Mark(NamedTuple):
    lease: leases.Lease  # renewed by the process's renewer while held
    expiry: threading.Timer  # drops it at its deadline; cancelled when it goes before


_held: dict[tuple[str, str], _Mark] = {}  # (key, owner) -> the mark this process holds
_lock = threading.Lock()


def mark(key: str, owner: str, ttl: float, deadline_seconds: float) -> bool:
    """Hold `key` for `owner` (a task id, the same over its retries) while this process lives, for at most
    `deadline_seconds`. False if not marked here: the store was unreachable (the sweep then does what it
    would have done) or another process holds the task's mark."""
    held = leases.Lease(key, ttl, owner=owner)
    try:
        if not held.acquire():  # a mark of this task's is held elsewhere still: it serves as well
            return False
    except (redis.RedisError, sqlite3.Error) as exc:
        log.warning("%s: retry not marked (%s)", key, exc)
        return False
    expiry = threading.Timer(deadline_seconds, unmark, (key, owner), {"only": held})
    expiry.daemon = True
    with _lock:
        # marks another process's retry dropped (their renewal found them gone): their timers go now
        for gone in [k for k, m in _held.items() if m.lease.lost]:
            _held.pop(gone).expiry.cancel()
        _held[(key, owner)] = _Mark(held, expiry)
    expiry.start()
    return True


def unmark(key: str, owner: str, only: leases.Lease | None = None) -> None:
    """Drop `owner`'s mark on `key`: the one this process holds, or (the retry runs elsewhere) the store's,
    which the holding process's renewer then finds gone. `only`: drop that mark and no later one."""
    with _lock:
        held = _held.get((key, owner))
        if only is not None and (held is None or held.lease is not only):
            return  # an earlier mark's deadline: it was dropped already
        _held.pop((key, owner), None)
    if held is not None:
        held.expiry.cancel()
        held.lease.release()
        return
    with contextlib.suppress(redis.RedisError, sqlite3.Error):  # unreachable: it expires by itself
        leases.store().release(key, owner)
