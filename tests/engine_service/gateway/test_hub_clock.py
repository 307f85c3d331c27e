"""The bot's clock counts only the bot: stalls of the gateway's own loop, injected by a known amount (a
blocking sleep run on the loop), are found by its lag monitor and never charged, whether the bot's answer
waited in our socket or the deadline timer fired late; a bot that never answers still times out, charged
its deadline and not the stall.

A loaded machine only lengthens the stalls (and adds its own, which are excused too): what is checked is
that the charge is at most the time outside the injected stall, never a bound on wall time."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine_service.games import Action
from engine_service.gateway import metrics
from engine_service.gateway.auth import BotIdentity, InMemoryVerifier
from engine_service.gateway.config import GatewayConfig
from engine_service.gateway.loop_lag import INTERVAL_SECONDS, TOLERANCE_SECONDS, LoopLag
from engine_service.gateway.protocol import bot_pb2, relay_pb2
from engine_service.gateway.registry import SqliteRegistry
from engine_service.gateway.relay_connection import RelayChannels
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.gateway.server import GatewayThread
from engine_service.gateway.session import Answer, Pending, Session
from engine_service.referee import DecisionRequest, MatchInfo, SeatFault
from tests.engine_service.gateway.harness import GAME, WAIT, RawBot, wait_for, wait_for_bot

# a stall of S seconds is found as at least S less one tick's interval and the tolerance
SLACK = INTERVAL_SECONDS + TOLERANCE_SECONDS


def block(seconds: float) -> None:
    """Run on the loop: it can do nothing else meanwhile (a stall of a known size)."""
    time.sleep(seconds)


def test_the_monitor_finds_a_blocked_loop_as_a_stall_of_at_least_its_length() -> None:
    async def scenario() -> tuple[float, float, list[tuple[float, float]]]:
        lag = LoopLag(asyncio.get_running_loop()).start()
        await asyncio.sleep(0.1)
        before = lag.stalled(time.monotonic())
        block(0.4)
        during = lag.stalled(time.monotonic())  # the tick is overdue: the stall under way counts
        await asyncio.sleep(0.1)
        lag.stop()
        return during - before, lag.stalled(time.monotonic()) - before, lag.recent()

    during, after, recent = asyncio.run(scenario())
    assert during >= 0.4 - SLACK and after >= during
    assert max(end - start for start, end in recent) >= 0.4 - SLACK


def test_a_monitor_needs_a_positive_interval() -> None:
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(ValueError, match="interval > 0"):
            LoopLag(loop, interval=0)
    finally:
        loop.close()


def run_pending(
    time_limit_ms: int, stall: float, answer_after: float | None
) -> tuple[Pending, list[Answer], float]:
    """A request written, the loop then blocked for `stall` seconds (the deadline falls inside), and the
    bot's answer read `answer_after` seconds after the stall (None: never); and how long it was blocked."""
    call = relay_pb2.DecisionCall(call_id=1, match_id="m", request_id="m:3", time_limit_ms=time_limit_ms)
    call.legal_action_ids.append("pass")
    answers: list[Answer] = []
    blocked: list[float] = []

    async def scenario() -> Pending:
        loop = asyncio.get_running_loop()
        lag = LoopLag(loop).start()
        pending = Pending(call, loop, lambda p, a: answers.append(a), lag)
        pending.start()
        began = time.monotonic()
        block(stall)
        blocked.append(time.monotonic() - began)
        if answer_after is not None:
            loop.call_later(answer_after, pending.resolve, Answer(relay_pb2.OUTCOME_OK, action_id="pass"))
        while not pending.done:
            await asyncio.sleep(0.01)
        lag.stop()
        return pending

    pending = asyncio.run(scenario())
    return pending, answers, blocked[0]


def test_a_stall_over_the_deadline_is_not_the_bots_the_timer_is_set_again_for_its_time() -> None:
    pending, answers, blocked = run_pending(200, stall=0.6, answer_after=0.05)
    assert [a.outcome for a in answers] == [relay_pb2.OUTCOME_OK]  # the timer fired late and was set again
    assert pending.excused >= 0.6 - SLACK
    assert pending.answered_at is not None and pending.sent_at is not None
    outside = pending.answered_at - pending.sent_at - blocked
    assert pending.bot_seconds() <= outside + SLACK  # charged at most the time outside the stall


def test_a_bot_that_never_answers_still_times_out_charged_its_deadline_not_the_stall() -> None:
    pending, answers, _ = run_pending(200, stall=0.6, answer_after=None)
    [answer] = answers
    assert answer.outcome == relay_pb2.OUTCOME_TIMEOUT and "not counted" in answer.detail
    assert pending.excused >= 0.6 - SLACK
    assert 0.2 - 0.001 <= pending.bot_seconds() < 0.2 + SLACK  # what it was given, not 0.8 s


# --- end to end: a gateway on a thread of this process, a bot over gRPC, the worker's remote seat ---------
TOKEN = "tok-stall"
BOT = BotIdentity(bot_id="stall", name="stall", owner="tester", games=(GAME,), max_concurrent=4)
LEGAL = [Action("pass", "pass", {}), Action("go", "move", {"to": "kashgar"})]


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[GatewayThread]:
    verifier = InMemoryVerifier()
    verifier.add(TOKEN, BOT)
    registry_path = tmp_path / "registry.sqlite3"
    config = GatewayConfig(
        bot_address="127.0.0.1:0", relay_address="127.0.0.1:0", registry_path=registry_path
    )
    thread = GatewayThread(config, verifier, SqliteRegistry(registry_path)).start()
    yield thread
    thread.stop()


@pytest.fixture
def registry(tmp_path: Path) -> SqliteRegistry:
    """The gateway's registry, as a worker reads it."""
    return SqliteRegistry(tmp_path / "registry.sqlite3")


def stall_until_answered(monkeypatch: pytest.MonkeyPatch, gateway: GatewayThread, stall: float) -> RawBot:
    """A bot that answers at once, and a gateway whose loop blocks as soon as the request is written, until
    the bot has answered and for `stall` seconds at least: the answer waits in the gateway's socket, and
    the deadline passes meanwhile, whenever the bot gets to it."""
    answered = threading.Event()
    write = Session.send_request

    async def write_then_stall(session: Session, pending: Pending) -> None:
        await write(session, pending)
        began = time.monotonic()
        answered.wait(WAIT)
        block(max(0.0, began + stall - time.monotonic()))

    def behaviour(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        bot.answer(request, "go")
        answered.set()

    monkeypatch.setattr(Session, "send_request", write_then_stall)
    return RawBot(gateway.bot_target, TOKEN, behaviour=behaviour, capacity=2)


def decision(match_id: str, seconds: float) -> DecisionRequest:
    return DecisionRequest(
        match_id=match_id,
        game_id=GAME,
        seat=0,
        step=0,
        request_id=f"{match_id}:0",
        observation={"step": 0},
        legal_actions=LEGAL,
        deadline_seconds=seconds,
        time_bank_seconds=0.0,
    )


def excused_total() -> float:
    value = metrics.REGISTRY.get_sample_value("caravanserai_gateway_excused_seconds_total", {"game": GAME})
    return value or 0.0


def test_a_bot_whose_answer_waits_in_a_stalled_gateway_is_not_charged_the_stall_and_never_times_out(
    gateway: GatewayThread, registry: SqliteRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = stall_until_answered(monkeypatch, gateway, stall=1.5)
    channels = RelayChannels()
    try:
        bot.connect()
        wait_for_bot(registry, BOT.bot_id)
        seat = RemoteSeat(BOT.bot_id, BOT.name, registry, channels=channels)
        seat.start(MatchInfo("stall-1", GAME, 2, {}, 0, ["house"], 1.0, 0.0))
        excused_before = excused_total()
        request = decision("stall-1", 1.0)
        started = time.monotonic()
        try:
            action_id = seat.decide(request)
        except SeatFault as fault:  # before the clock excused our stalls: "timeout", after 1.5 s
            pytest.fail(f"the bot was faulted for our stall: {fault}")
        wall = time.monotonic() - started
        assert action_id == "go"
        charged = request.extra["bot_seconds"]
        assert wall >= 1.5 and charged <= wall - (1.5 - SLACK)  # the stall was taken off
        assert charged < 1.0  # within its deadline, though the answer was read 1.5 s after it was sent
        # and counted where it is seen (on the gateway loop's next turn after the reply)
        wait_for(lambda: excused_total() - excused_before >= 1.5 - SLACK, what="the excused seconds counted")
    finally:
        channels.close()
        bot.close()
