"""The gateway's admission monitor on a scripted clock, and its report loop writing the claim a seat reads."""

from __future__ import annotations

import asyncio
import time

import pytest

from engine_service.gateway import admission
from engine_service.gateway.admission import (
    CLAIM_SECONDS,
    RECENT_SECONDS,
    SLOW_ADMISSION_SECONDS,
    SLOW_LOOP_SECONDS,
    AdmissionMonitor,
    report_loop,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def serving_monitor() -> tuple[AdmissionMonitor, Clock]:
    clock = Clock()
    monitor = AdmissionMonitor(clock)
    monitor.serving = True
    return monitor, clock


def test_a_gateway_admits_only_once_serving_and_not_while_stopping() -> None:
    monitor = AdmissionMonitor(Clock())
    assert monitor.why_not() == "not serving yet (starting or warming up)"
    monitor.serving = True
    assert monitor.admitting()
    monitor.stopping = True
    assert monitor.why_not() == "draining or shutting down"


def test_an_admission_under_way_too_long_stops_the_claim_until_it_ends() -> None:
    monitor, clock = serving_monitor()
    with monitor.measure():
        clock.now += SLOW_ADMISSION_SECONDS / 2
        assert monitor.admitting()  # under way, not slow yet
        clock.now += SLOW_ADMISSION_SECONDS
        assert "an admission under way" in (monitor.why_not() or "")
    assert "slower than" in (monitor.why_not() or "")  # it ended slow: it counts a while longer
    clock.now += RECENT_SECONDS + 0.01
    assert monitor.admitting() and monitor.admitted == 1


def test_a_step_that_fails_still_ends() -> None:
    monitor, clock = serving_monitor()
    with pytest.raises(ValueError), monitor.measure():
        raise ValueError("refused")
    clock.now += 10 * SLOW_ADMISSION_SECONDS
    assert monitor.admitting()  # nothing left under way


def test_a_stalled_loop_stops_the_claim() -> None:
    monitor, _ = serving_monitor()
    monitor.loop_lag = SLOW_LOOP_SECONDS + 0.01
    assert "event loop" in (monitor.why_not() or "")


class Reports:
    def __init__(self) -> None:
        self.claims: list[float] = []

    def report_admission(self, gateway_id: str, relay_address: str, admitting_until: float) -> None:
        self.claims.append(admitting_until)


def test_the_report_loop_claims_while_admitting_and_writes_zero_when_not(monkeypatch) -> None:
    monkeypatch.setattr(admission, "BEAT_SECONDS", 0.01)
    monitor = AdmissionMonitor()
    reports = Reports()
    stalls = {"total": 0.0}

    async def scenario() -> None:
        task = asyncio.create_task(
            report_loop(monitor, reports, "g1", "relay", stalled=lambda now: stalls["total"])
        )
        while len(reports.claims) < 2:  # not serving yet: claims of 0
            await asyncio.sleep(0.005)
        monitor.serving = True
        mark = len(reports.claims)
        while len(reports.claims) < mark + 2:
            await asyncio.sleep(0.005)
        stalls["total"] += 1.0  # the loop stalled a second since the last report
        mark = len(reports.claims)
        while len(reports.claims) < mark + 1:
            await asyncio.sleep(0.005)
        task.cancel()

    before = time.time()
    asyncio.run(scenario())
    assert reports.claims[:2] == [0.0, 0.0]
    claimed = [c for c in reports.claims if c > 0]
    assert claimed and all(before + CLAIM_SECONDS <= c <= time.time() + CLAIM_SECONDS for c in claimed)
    assert reports.claims[-1] == 0.0  # the stall
