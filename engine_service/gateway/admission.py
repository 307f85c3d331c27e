"""Whether this gateway admits bots at normal speed, measured, and the report of it to the session registry.

Layer: gateway core. The hub measures each admission step as it runs (`AdmissionMonitor.measure`: the token
check, and the Hello's handling up to the Welcome; never the time a bot takes to send its Hello); the report
loop reads the loop's stalls since its last report (`loop_lag.LoopLag`, the same measure the bots' clock
excuses) and, every `BEAT_SECONDS`, writes the gateway's claim to the registry:
"admitting until now + `CLAIM_SECONDS`", or 0 when it is not. Remote seats count the reconnect grace after a
gateway loss only over the time some gateway claims it (remote_seat.py), so a gateway that is starting,
warming up, draining, stalled or slow never spends a bot's grace. A gateway whose loop stalls writes nothing
and its last claim lapses by itself within `CLAIM_SECONDS`.

Admitting at normal speed means all of: serving (started, its token verifier warm, not draining or shutting
down), no admission step under way for longer than `SLOW_ADMISSION_SECONDS`, none that finished slower than
that in the last `RECENT_SECONDS`, and the loop stalled for less than `SLOW_LOOP_SECONDS` since the last
report.
It holds no sessions and makes no decision about a match; it must not block the event loop (registry calls
go through `asyncio.to_thread`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable, Iterator
from typing import Protocol

log = logging.getLogger("caravanserai.gateway")

SLOW_ADMISSION_SECONDS = 1.0  # an admission step slower than this: not admitting at normal speed
SLOW_LOOP_SECONDS = 0.25  # the event loop stalled this long since the last report: not admitting normally
RECENT_SECONDS = 2.0  # a slow admission this recent still counts
BEAT_SECONDS = 0.25  # how often the gateway reports its admission state
CLAIM_SECONDS = 1.0  # how long one report says "admitting" (a claim not renewed lapses)


class AdmissionReporter(Protocol):
    def report_admission(self, gateway_id: str, relay_address: str, admitting_until: float) -> None: ...


class AdmissionMonitor:
    """The admission steps under way, the last slow one, the loop's lag, and whether the gateway serves."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.serving = False  # set once the gateway is started and its verifier warm
        self.stopping = False  # draining or shutting down
        self.loop_lag = 0.0
        self.admitted = 0  # admission steps finished
        self.slowest = 0.0  # the slowest finished step, seconds
        self._open: dict[int, float] = {}
        self._ids = itertools.count()
        self._slow_until = float("-inf")

    @contextlib.contextmanager
    def measure(self) -> Iterator[None]:
        """Time one admission step (the block), seen as under way until it ends, however it ends."""
        key = next(self._ids)
        started = self._open[key] = self.clock()
        try:
            yield
        finally:
            del self._open[key]
            seconds = self.clock() - started
            self.admitted += 1
            self.slowest = max(self.slowest, seconds)
            if seconds > SLOW_ADMISSION_SECONDS:
                self._slow_until = self.clock() + RECENT_SECONDS

    def why_not(self) -> str | None:
        """None when admitting at normal speed, else the reason in words."""
        now = self.clock()
        if not self.serving:
            return "not serving yet (starting or warming up)"
        if self.stopping:
            return "draining or shutting down"
        if self.loop_lag > SLOW_LOOP_SECONDS:
            return f"event loop {self.loop_lag:.2f}s late"
        oldest = min(self._open.values(), default=now)
        if now - oldest > SLOW_ADMISSION_SECONDS:
            return f"an admission under way for {now - oldest:.2f}s"
        if now < self._slow_until:
            return f"an admission slower than {SLOW_ADMISSION_SECONDS:g}s in the last {RECENT_SECONDS:g}s"
        return None

    def admitting(self) -> bool:
        return self.why_not() is None


async def report_loop(
    monitor: AdmissionMonitor,
    registry: AdmissionReporter,
    gateway_id: str,
    relay_address: str,
    *,
    stalled: Callable[[float], float],
    stopping: Callable[[], bool] = lambda: False,
) -> None:
    """Every `BEAT_SECONDS`: take the loop's stalled seconds since the last report (`stalled(now)`, a
    running total on `time.monotonic()`) and write the claim."""
    was: str | None = ""
    before = stalled(time.monotonic())
    while True:
        await asyncio.sleep(BEAT_SECONDS)
        total = stalled(time.monotonic())
        monitor.loop_lag, before = total - before, total
        monitor.stopping = monitor.stopping or stopping()
        why = monitor.why_not()
        if why != was:
            log.info("gateway %s %s", gateway_id, "admitting" if why is None else f"not admitting: {why}")
            was = why
        until = time.time() + CLAIM_SECONDS if why is None else 0.0
        try:
            await asyncio.to_thread(registry.report_admission, gateway_id, relay_address, until)
        except Exception:
            log.exception("admission report failed")
