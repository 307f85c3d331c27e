"""The gateway runs on the event loop CARAVANSERAI_GATEWAY_EVENT_LOOP names (uvloop by default, or the
standard library's asyncio), relays a whole match on either, and charges every decision a bot time read from
a clock finer than uvloop's millisecond loop time."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_service.gateway.config import EVENT_LOOPS, ConfigError, GatewayConfig
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, TimeControl, run_match
from engine_service.referee.result import MatchResult
from tests.engine_service.gateway.harness import (
    GAME,
    RawBot,
    first_legal,
    scrape_metrics,
    start_stack,
    wait_for_bot,
)
from tests.workers.stack import free_port


def test_the_event_loop_defaults_to_uvloop_and_a_bad_name_is_refused() -> None:
    assert GatewayConfig.from_env({}).event_loop == "uvloop"
    assert GatewayConfig.from_env({"CARAVANSERAI_GATEWAY_EVENT_LOOP": "asyncio"}).event_loop == "asyncio"
    with pytest.raises(ConfigError, match="CARAVANSERAI_GATEWAY_EVENT_LOOP must be one of uvloop, asyncio"):
        GatewayConfig.from_env({"CARAVANSERAI_GATEWAY_EVENT_LOOP": "trio"})


@pytest.mark.parametrize("kind", EVENT_LOOPS)
def test_a_match_is_relayed_on_either_loop_and_every_decision_is_timed(tmp_path: Path, kind: str) -> None:
    port = free_port()
    env = {"CARAVANSERAI_GATEWAY_METRICS_PORT": str(port), "CARAVANSERAI_GATEWAY_EVENT_LOOP": kind}
    stack = start_stack(tmp_path, env=env)
    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=first_legal).connect()
    try:
        assert stack.gateway.ready["event_loop"] == kind
        wait_for_bot(stack.registry, "raw1")
        seat = RemoteSeat("raw1", "raw-one", stack.registry)
        record = run_match(
            GAME, 2, 11, [seat, HouseSeat(make_policy("random", 2))], time_control=TimeControl(2.0, 2.0)
        )
        asked = sum(1 for s, _ in record.actions if s == 0)
        result = MatchResult.of(record)
        assert not result.forfeits and not any(seat.faults for seat in result.seats)
        seen = scrape_metrics(port)
        # a bot answering at once takes well under a millisecond: a millisecond clock would charge it 0
        assert seen["caravanserai_gateway_decision_seconds_count"] == asked > 0
        assert 0 < seen["caravanserai_gateway_decision_seconds_sum"] < asked * 0.05
    finally:
        bot.close()
        stack.gateway.stop()
