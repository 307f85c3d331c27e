"""Live progress for spectators: the actions of each running match and the clocks of those decisions,
written every few seconds by one thread per worker process, so a match thread never waits on the database to
be watched.

A match thread `offer`s its actions and clocks so far (a dict put, no I/O); the publisher thread wakes every
`interval` seconds and writes the latest offer of each match through `publish`. A failed write is dropped
and logged (the next offer carries everything), and a slow or absent database only delays the live view.
Layer: orchestration plumbing; what is written, and when it is removed, is `ladder.replays.services`'.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence

log = logging.getLogger("caravanserai.worker")

Actions = Sequence[tuple[int, str]]
Clocks = Mapping[int, Sequence[float | None]]  # the record's: step -> [seconds charged, bank left or None]
Publish = Callable[[int, Actions, Clocks], None]


class LivePublisher:
    def __init__(self, publish: Publish, interval: float) -> None:
        self.publish = publish
        self.interval = interval
        self._latest: dict[int, tuple[list[tuple[int, str]], dict[int, Sequence[float | None]]]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def offer(self, match_id: int, actions: Actions, clocks: Clocks | None = None) -> None:
        """Note a match's actions and clocks so far; the publisher writes the latest at its next wake."""
        with self._lock:
            self._latest[match_id] = (list(actions), dict(clocks or {}))
            if self._thread is None or self._pid != os.getpid():  # one thread per process, after a fork too
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="live-publisher", daemon=True)
                self._thread.start()

    def forget(self, match_id: int) -> None:
        """The match is over here: drop an offer not yet written."""
        with self._lock:
            self._latest.pop(match_id, None)

    def flush(self) -> None:
        """Write every pending offer now (the publisher thread's one pass)."""
        with self._lock:
            pending, self._latest = self._latest, {}
        for match_id, (actions, clocks) in pending.items():
            try:
                self.publish(match_id, actions, clocks)
            except Exception as exc:  # watching must never cost a match: log and go on
                log.debug("match %s: live progress not published (%s)", match_id, exc)

    def _run(self) -> None:
        while True:
            time.sleep(self.interval)
            self.flush()
