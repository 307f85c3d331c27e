"""The gateway runs on the event loop CARAVANSERAI_GATEWAY_EVENT_LOOP names (uvloop by default, or the
standard library's asyncio), relays a whole match on either, and charges every decision a bot time read from
a clock finer than uvloop's millisecond loop time."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_service.gateway.config import EVENT_LOOPS, ConfigError, GatewayConfig
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, run_match
from engine_service.referee.result import MatchResult
from tests.engine_service.gateway.harness import (
    GAME,
    PATIENT,
    RawBot,
    TimedSeat,
    first_legal,
    start_stack,
    wait_for_bot,
)


def test_the_event_loop_defaults_to_uvloop_and_a_bad_name_is_refused() -> None:
    assert GatewayConfig.from_env({}).event_loop == "uvloop"
    assert GatewayConfig.from_env({"CARAVANSERAI_GATEWAY_EVENT_LOOP": "asyncio"}).event_loop == "asyncio"
    with pytest.raises(ConfigError, match="CARAVANSERAI_GATEWAY_EVENT_LOOP must be one of uvloop, asyncio"):
        GatewayConfig.from_env({"CARAVANSERAI_GATEWAY_EVENT_LOOP": "trio"})


@pytest.mark.parametrize("kind", EVENT_LOOPS)
def test_a_match_is_relayed_on_either_loop_and_every_decision_is_timed(tmp_path: Path, kind: str) -> None:
    stack = start_stack(tmp_path, env={"CARAVANSERAI_GATEWAY_EVENT_LOOP": kind}, metrics=True)
    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=first_legal).connect()
    try:
        assert stack.gateway.ready["event_loop"] == kind
        wait_for_bot(stack.registry, "raw1")
        seat = TimedSeat("raw1", "raw-one", stack.registry)
        record = run_match(GAME, 2, 11, [seat, HouseSeat(make_policy("random", 2))], time_control=PATIENT)
        asked = sum(1 for s, _ in record.actions if s == 0)
        result = MatchResult.of(record)
        assert not result.forfeits and not any(seat.faults for seat in result.seats)
        assert stack.metrics()["caravanserai_gateway_decisions_total"] == len(seat.bot_seconds) == asked > 0
        # a bot answering at once takes well under a millisecond: uvloop's loop time, cached per turn in
        # milliseconds, would charge whole milliseconds (0 mostly)
        assert any(abs(s * 1000 - round(s * 1000)) > 1e-6 for s in seat.bot_seconds), seat.bot_seconds
    finally:
        bot.close()
        stack.gateway.stop()
