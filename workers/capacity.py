"""The workers' measured room for matches: each worker's report, and the headroom matchmaking admits within.

Layer: worker infrastructure. A worker process counts the `run_match` tasks its threads are on
(`occupied()`), and a daemon thread (`start_reporting`, from the worker's start) writes every
`REPORT_SECONDS`, through the session registry, its claim (`report_capacity("worker", ...)`, lapsing after
`CLAIM_SECONDS`): its threads, those busy, and its search pool's pressure (decisions waiting for a free
search process now, the longest wait for one in the last 30 s, `SearchPool.pressure`). A worker that stops
or stalls stops claiming, and its room is no longer counted.

`headroom(reports, queued)` is the read side, pure: the free threads of the live reports, plus
`QUEUE_AHEAD_PER_WORKER` matches each may have waiting (so a thread that frees finds its next match at once
rather than at matchmaking's next beat; a queued match runs no clock), less the matches already queued, and
whether the search pools keep up (no decision waited longer than
`SEARCH_WAIT_LIMIT_SECONDS` for a free process in the window, none waiting beyond a pool's size now). With no
live report (no worker started yet, tasks run in-process in a test) the headroom is unknown and matchmaking
keeps to its configured limits.

It counts and reports; it must not change what a task does or read the database.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from engine_service.gateway.registry import CapacityReport, SessionRegistry
from engine_service.referee.search_pool import SearchPool

log = logging.getLogger("caravanserai.workers")

KIND = "worker"
REPORT_SECONDS = 1.0
CLAIM_SECONDS = 5.0  # a report not renewed within this lapses (a worker killed, stalled or cut off)
SEARCH_WAIT_LIMIT_SECONDS = 1.0  # a search decision that waited longer for a free process: the pool is behind
QUEUE_AHEAD_PER_WORKER = 2

_occupied = 0
_lock = threading.Lock()


@contextlib.contextmanager
def occupied() -> Iterator[None]:
    """Count this thread as busy with a match task for the duration of the block."""
    global _occupied
    with _lock:
        _occupied += 1
    try:
        yield
    finally:
        with _lock:
            _occupied -= 1


def busy_threads() -> int:
    with _lock:
        return _occupied


def report(threads: int, pool: SearchPool | None) -> dict[str, float]:
    """This process's measured room now, as a capacity report's payload."""
    pressure = pool.pressure() if pool is not None else None
    return {
        "threads": threads,
        "busy": busy_threads(),
        "search_processes": pressure.processes if pressure else 0,
        "search_waiting": pressure.waiting if pressure else 0,
        "search_longest_wait": round(pressure.longest_wait, 3) if pressure else 0.0,
    }


def reporter_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def start_reporting(
    registry: SessionRegistry, threads: int, pool: SearchPool | None, *, seconds: float = REPORT_SECONDS
) -> threading.Thread:
    """Report this process's room every `seconds` from a daemon thread, for as long as the process lives."""
    me = reporter_id()

    def loop() -> None:
        while True:
            try:
                registry.report_capacity(KIND, me, report(threads, pool), time.time() + CLAIM_SECONDS)
            except Exception as exc:  # the registry away (Redis restarting): the claim lapses, retried
                log.debug("capacity report failed: %s", exc)
            time.sleep(seconds)

    thread = threading.Thread(target=loop, name="capacity-report", daemon=True)
    thread.start()
    return thread


@dataclass(frozen=True)
class Headroom:
    """What the live workers can take now: free threads (None: no worker reports, unknown) and, when the
    search pools are behind, why (None: they keep up)."""

    free_threads: int | None
    search_behind: str | None

    @property
    def known(self) -> bool:
        return self.free_threads is not None


def headroom(reports: Mapping[str, CapacityReport], queued: int) -> Headroom:
    """The headroom the live `reports` give, less the `queued` matches already waiting for a thread."""
    if not reports:
        return Headroom(None, None)
    free = sum(max(0, int(r.payload["threads"]) - int(r.payload["busy"])) for r in reports.values())
    free += QUEUE_AHEAD_PER_WORKER * len(reports)
    behind = None
    for _, r in sorted(reports.items()):
        waiting, longest = int(r.payload["search_waiting"]), float(r.payload["search_longest_wait"])
        processes = int(r.payload["search_processes"])
        if longest > SEARCH_WAIT_LIMIT_SECONDS or (processes and waiting > processes):
            behind = (
                f"a worker's search pool is behind ({waiting} decisions waiting for its {processes} "
                f"processes, the longest wait {longest:.1f}s in the last 30 s)"
            )
            break
    return Headroom(max(0, free - queued), behind)
