"""The gateway's Prometheus endpoint on a real gateway process: connected bots and sessions, and every
relayed decision counted by game and outcome with its bot time in the histogram."""

from __future__ import annotations

from pathlib import Path

from pytest import approx

from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, run_match
from tests.engine_service.gateway.harness import (
    GAME,
    PATIENT,
    RawBot,
    TimedSeat,
    first_legal,
    start_stack,
    wait_for_bot,
)


def test_the_gateway_counts_sessions_decisions_and_their_bot_time(tmp_path: Path) -> None:
    stack = start_stack(tmp_path, metrics=True)
    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=first_legal).connect()
    try:
        wait_for_bot(stack.registry, "raw1")
        seen = stack.metrics()
        assert seen["caravanserai_gateway_sessions"] == 1 and seen["caravanserai_gateway_bots"] == 1
        seat = TimedSeat("raw1", "raw-one", stack.registry)
        record = run_match(GAME, 2, 5, [seat, HouseSeat(make_policy("random", 1))], time_control=PATIENT)
        asked = sum(1 for s, _ in record.actions if s == 0)
        seen = stack.metrics()
        assert seen["caravanserai_gateway_decisions_total"] == len(seat.bot_seconds) == asked
        # the histogram holds each decision's charge as the worker was told it (a time wholly excused for
        # the gateway's own stalls is 0 and not observed)
        assert seen["caravanserai_gateway_decision_seconds_count"] == sum(
            1 for s in seat.bot_seconds if s > 0
        )
        assert seen["caravanserai_gateway_decision_seconds_sum"] == approx(sum(seat.bot_seconds), rel=1e-9)
        assert seen["caravanserai_gateway_matches"] == 0  # the match has ended
        assert seen["process_resident_memory_bytes"] > 0
    finally:
        bot.close()
        stack.gateway.stop()
