"""The gateway's Prometheus endpoint on a real gateway process: connected bots and sessions, and every
relayed decision counted by game and outcome with its bot time in the histogram."""

from __future__ import annotations

from pathlib import Path

from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, TimeControl, run_match
from tests.engine_service.gateway.harness import (
    GAME,
    RawBot,
    first_legal,
    scrape_metrics,
    start_stack,
    wait_for_bot,
)
from tests.workers.stack import free_port


def test_the_gateway_counts_sessions_decisions_and_their_bot_time(tmp_path: Path) -> None:
    port = free_port()
    stack = start_stack(tmp_path, env={"CARAVANSERAI_GATEWAY_METRICS_PORT": str(port)})
    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=first_legal).connect()
    try:
        wait_for_bot(stack.registry, "raw1")
        seen = scrape_metrics(port)
        assert seen["caravanserai_gateway_sessions"] == 1 and seen["caravanserai_gateway_bots"] == 1
        seat = RemoteSeat("raw1", "raw-one", stack.registry)
        record = run_match(
            GAME, 2, 5, [seat, HouseSeat(make_policy("random", 1))], time_control=TimeControl(2.0, 2.0)
        )
        asked = sum(1 for s, _ in record.actions if s == 0)
        seen = scrape_metrics(port)
        assert seen["caravanserai_gateway_decisions_total"] == asked
        assert seen["caravanserai_gateway_decision_seconds_count"] == asked
        assert (
            0 < seen["caravanserai_gateway_decision_seconds_sum"] < asked * 0.1
        )  # a bot that answers at once
        assert seen["caravanserai_gateway_matches"] == 0  # the match has ended
        assert seen["process_resident_memory_bytes"] > 0
    finally:
        bot.close()
        stack.gateway.stop()
