"""The gateway loop's own lag: how long the event loop was stalled (blocked, or its process starved of CPU),
so that time is never charged to a bot.

Layer: gateway plumbing, on the gateway's event loop. `LoopLag` ticks every `interval` seconds with
`call_later` and measures, on `time.monotonic()` (the bots' clock), how late each tick ran. Lateness beyond
`tolerance` (timer granularity, an ordinary busy turn) is a stall: the loop could run nothing then, so a bot's
answer that arrived meanwhile waited in our socket, and a deadline that fell inside it fired late.

`stalled(now)` is the loop's stalled seconds since the monitor started, up to `now`, counting the stall under
way when the next tick is overdue (the loop has just woken and the tick has not run yet). A decision's
excused time is the difference of two readings, at its request written and at its answer read: two float
reads, no allocation, on the relay's hot path. The last stalls are also kept as (start, end) intervals
(`recent()`), for logs and tests; reported to `on_stall` (a metric) as they are found.

It must not block, sleep or do I/O; it only reads the clock and schedules its own next tick.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

INTERVAL_SECONDS = 0.025
TOLERANCE_SECONDS = 0.005  # lateness below this is timer granularity or an ordinary turn, not a stall
KEPT = 64


class LoopLag:
    """A tick on the loop every `interval` seconds, and the seconds the loop was stalled."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        interval: float = INTERVAL_SECONDS,
        tolerance: float = TOLERANCE_SECONDS,
        kept: int = KEPT,
        on_stall: Callable[[float], None] | None = None,
    ) -> None:
        if interval <= 0 or tolerance < 0:
            raise ValueError(
                f"a loop lag monitor needs interval > 0 and tolerance >= 0, not {interval}, {tolerance}"
            )
        self.interval = interval
        self.tolerance = tolerance
        self.on_stall = on_stall
        self._loop = loop
        self._stalled = 0.0
        self._due = 0.0  # when the next tick should run (monotonic), plus the tolerance
        self._running = False
        self._handle: asyncio.TimerHandle | None = None
        self._recent: deque[tuple[float, float]] = deque(maxlen=kept)

    def start(self) -> LoopLag:
        """Start ticking (on the loop's thread); a second start changes nothing."""
        if not self._running:
            self._running = True
            self._schedule(time.monotonic())
        return self

    def stop(self) -> None:
        self._running = False
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _schedule(self, now: float) -> None:
        self._due = now + self.interval + self.tolerance
        self._handle = self._loop.call_later(self.interval, self._tick)

    def _tick(self) -> None:
        now = time.monotonic()
        late = now - self._due
        if late > 0:
            self._stalled += late
            self._recent.append((self._due, now))
            if self.on_stall is not None:
                self.on_stall(late)
        if self._running:
            self._schedule(now)

    def stalled(self, now: float) -> float:
        """The loop's stalled seconds from the start up to `now` (a `time.monotonic()` reading taken on the
        loop), the stall under way included."""
        if self._running and now > self._due:
            return self._stalled + (now - self._due)
        return self._stalled

    def recent(self) -> list[tuple[float, float]]:
        """The last stalls found, oldest first, as (start, end) monotonic times."""
        return list(self._recent)
