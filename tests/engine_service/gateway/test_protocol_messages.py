"""What the server tells a bot, checked over the real gateway: bounded echoes, the forfeiting notice, late
answers, why a match ended for each seat, how a stream ended, and the legal list in the live notice."""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc
import pytest

from engine_service.gateway.protocol import bot_pb2
from engine_service.gateway.registry import sessions_for_bot
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.referee import MatchRecord, Seat, TimeControl, run_match, verify
from engine_service.referee.seats import ECHO_CHARS, MAX_ACTION_ID_BYTES
from tests.engine_service.gateway.harness import (
    GAME,
    PATIENT,
    TOLERANT,
    RawBot,
    SeatClock,
    Stack,
    wait_for,
    wait_for_bot,
)
from tests.engine_service.gateway.test_relay import house

pytestmark = pytest.mark.xdist_group("protocol_messages_stack")  # the module's gateway, started once

BIG = "x" * 40_000  # well under the stack's 64 KiB message limit, far over the action id limit


def _play(
    stack: Stack,
    bot: RawBot,
    seed: int,
    control: TimeControl = PATIENT,
    seat: int = 0,
    clock: Callable[[], float] = time.monotonic,
) -> MatchRecord:
    bot_id = bot.token.removeprefix("tok-")
    wait_for_bot(stack.registry, bot_id)
    seats: list[Seat] = [house(seed), house(seed + 1)]
    seats[seat] = RemoteSeat(bot_id, "raw", stack.registry, clock=clock)
    record = run_match(GAME, 2, seed, seats, time_control=control)
    verify(record)
    return record


def test_an_oversized_action_id_is_malformed_and_never_echoed_whole(stack: Stack) -> None:
    def huge(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        bot.answer(request, BIG if len(bot.requests) == 1 else None)

    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=huge).connect()
    welcome = bot.messages("welcome")[0]
    assert welcome.limits.max_action_id_bytes == MAX_ACTION_ID_BYTES == 256
    assert welcome.limits.max_echo_chars == ECHO_CHARS
    record = _play(stack, bot, 31, TOLERANT)
    [fault] = record.faults
    assert fault.kind == "malformed" and "40000 bytes is over the 256-byte limit" in fault.reason
    assert len(fault.reason) < 300 and not fault.action_id
    assert len(record.dumps()) < 20_000
    notice = wait_for(lambda: bot.messages("fault_notice"), what="notice")[0]
    assert notice.fault.kind == bot_pb2.FAULT_KIND_MALFORMED and notice.ByteSize() < 1000
    ended = wait_for(lambda: bot.messages("match_ended"), what="MatchEnded")[0]
    assert ended.ByteSize() < 5000
    bot.close()


def test_refusals_quote_the_bots_ids_cut_short(stack: Stack) -> None:
    bot = RawBot(stack.gateway.target, "tok-raw1").connect()
    long_id = "y" * 20_000
    bot.send(
        bot_pb2.BotMessage(decision=bot_pb2.Decision(match_id=long_id, request_id=long_id, action_id="pass"))
    )
    error = wait_for(lambda: bot.errors(), what="refusal")[0]
    assert error.reason == bot_pb2.ERROR_REASON_NOT_YOUR_SEAT
    assert len(error.request_id) < ECHO_CHARS + 40 and len(error.match_id) < ECHO_CHARS + 40
    assert len(error.message) < 400 and "(20000 characters)" in error.message
    bot.close()


def test_the_illegal_notice_lists_legal_ids_and_the_forfeiting_notice_says_forfeit(stack: Stack) -> None:
    def wrong(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        bot.answer(request, "fly-to-daidu" if len(bot.requests) <= 2 else None)

    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=wrong).connect()
    record = _play(stack, bot, 32)  # max_faults=1: the second fault forfeits
    first, second = record.faults
    assert not first.forfeit and second.forfeit and record.forfeits == [0]
    notices = wait_for(lambda: len(bot.messages("fault_notice")) >= 2 and bot.messages("fault_notice"))
    assert [n.fault.forfeit for n in notices] == [False, True]
    legal = [a.id for a in bot.requests[0].legal_actions]
    assert f"legal: {', '.join(legal[:10])}" in notices[0].fault.reason
    assert notices[0].fault.reason == first.reason  # the live notice says what the record says
    ended = wait_for(lambda: bot.messages("match_ended"), what="MatchEnded")[0]
    assert ended.reason == "forfeit" and ended.end_reason == bot_pb2.END_REASON_FORFEIT
    assert ended.HasField("end_seat") and ended.end_seat == 0
    assert ended.seat_end_reasons[0] == bot_pb2.END_REASON_FORFEIT
    assert ended.game_reason in ("completed", "turn_cap")
    assert (
        record.result is not None and record.result["reason"] == "forfeit" and record.result["end_seat"] == 0
    )
    bot.close()


def test_a_late_answer_after_the_match_is_stale(stack: Stack) -> None:
    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=lambda b, r: b.answer(r)).connect()
    record = _play(stack, bot, 33)
    assert record.result is not None and record.result["reason"] in ("completed", "turn_cap")
    wait_for(lambda: bot.messages("match_ended"), what="MatchEnded")
    bot.answer(bot.requests[-1])
    error = wait_for(lambda: bot.errors(), what="refusal")[0]
    assert error.reason == bot_pb2.ERROR_REASON_STALE_REQUEST
    assert error.status_code == grpc.StatusCode.FAILED_PRECONDITION.value[0] and "over" in error.message
    ended = bot.messages("match_ended")[0]
    assert ended.reason == record.result["reason"] and not ended.HasField("end_seat")
    bot.close()


def test_resigned_and_disconnected_matches_say_so_for_their_seat(stack: Stack) -> None:
    def resigner(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        if len(bot.requests) == 2:
            bot.send(bot_pb2.BotMessage(resign=bot_pb2.Resign(match_id=request.match_id, reason="enough")))
            return
        bot.answer(request)

    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=resigner).connect()
    record = _play(stack, bot, 34, seat=1)
    assert record.result is not None
    assert record.result["reason"] == "resigned" and record.result["end_seat"] == 1
    assert record.result["end_reasons"][1] == "resigned"
    assert record.result["end_reasons"][0] == record.result["game"]["reason"]
    ended = wait_for(lambda: bot.messages("match_ended"), what="MatchEnded")[0]
    assert ended.end_reason == bot_pb2.END_REASON_RESIGNED and ended.end_seat == 1
    bot.close()


def _disconnect_reason(stack: Stack, seed: int, how: str) -> str:
    clock = SeatClock()

    def leaver(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        if len(bot.requests) == 2:
            clock.skip()  # it never comes back: the seat's wait for it ends at once
            if how == "half-close":
                bot._out.put(None)  # end of the bot's side of the stream; the call itself stays
            else:
                bot._call.cancel()
            return
        bot.answer(request)

    bot = RawBot(stack.gateway.target, "tok-raw2", behaviour=leaver).connect()
    record = _play(stack, bot, seed, clock=clock)
    [fault] = record.faults
    assert fault.kind == "disconnect" and record.result is not None
    assert record.result["reason"] == "disconnect" and record.result["end_seat"] == 0
    bot.close()
    wait_for(lambda: not sessions_for_bot(stack.registry, "raw2"), what="the session to leave")
    return fault.reason


def test_disconnect_reasons_tell_a_half_close_from_a_cancel(stack: Stack) -> None:
    half = _disconnect_reason(stack, 35, "half-close")
    assert "half-closed its stream" in half
    cancelled = _disconnect_reason(stack, 36, "cancel")
    assert "cancelled or its connection broke" in cancelled
