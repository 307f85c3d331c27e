"""BOTS.md's refusal table, row by row, against a real gateway: every row's status, reason and whether the
stream ends is what the server does, and every refusal the server makes has its row."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from engine_service.gateway.protocol import BOT_SERVICE, bot_pb2
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.referee import run_match
from tests.engine_service.gateway.harness import (
    GAME,
    PATIENT,
    ROOT,
    RawBot,
    Stack,
    start_stack,
    wait_for,
    wait_for_bot,
)
from tests.engine_service.gateway.test_relay import house

pytestmark = pytest.mark.xdist_group("bots_md_refusals_stack")  # the module's gateway, started once


def refusal_rows() -> dict[tuple[str, str], tuple[str, bool]]:
    """(status, reason tag) -> (when, ends the stream) for each row of BOTS.md's refusal table."""
    text = (ROOT / "BOTS.md").read_text()
    table = text[text.index("| Status | When | Ends the stream? |") :].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        status, when, ends = (cell.strip() for cell in line.strip("|").split("|"))
        code, _, tag = status.partition(" ")
        rows[(code, tag.strip("()`"))] = (when, ends == "yes")
    return rows


def _closed(bot: RawBot, code: grpc.StatusCode) -> None:
    assert bot.wait_closed() == code, (bot.status, bot.details)
    bot.close()


def _error(bot: RawBot, reason: int, code: grpc.StatusCode, *, fatal: bool, index: int = 0) -> None:
    error = wait_for(lambda: len(bot.errors()) > index and bot.errors()[index], what="an Error")
    assert (error.reason, error.status_code, error.fatal) == (reason, code.value[0], fatal)


def _still_open(bot: RawBot) -> None:
    nonce = len(bot.messages("pong")) + 100
    bot.send(bot_pb2.BotMessage(ping=bot_pb2.Ping(nonce=nonce)))
    wait_for(lambda: any(p.nonce == nonce for p in bot.messages("pong")), what="pong: the stream is open")


def unauthenticated(stack: Stack, tmp_path: Path) -> int:
    for token in ("", "not-a-token"):
        _closed(RawBot(stack.gateway.target, token).connect(wait=False), grpc.StatusCode.UNAUTHENTICATED)
    bot = RawBot(stack.gateway.target, "tok-revoke").connect()
    stack.registry.publish_revocation("revoke")
    _closed(bot, grpc.StatusCode.UNAUTHENTICATED)
    _closed(RawBot(stack.gateway.target, "tok-revoke").connect(wait=False), grpc.StatusCode.UNAUTHENTICATED)
    return 2  # the clauses checked: a missing/unknown/revoked token; a revocation drops a live stream


def invalid_argument(stack: Stack, tmp_path: Path) -> int:
    with grpc.insecure_channel(stack.gateway.target) as channel:
        connect = channel.stream_stream(
            f"/{BOT_SERVICE}/Connect", lambda raw: raw, bot_pb2.ServerMessage.FromString
        )
        call = connect(
            iter([b"\x0a\xff\xff\xff\xff\x0fgarbage"]), metadata=(("authorization", "Bearer tok-raw2"),)
        )
        with pytest.raises(grpc.RpcError) as info:
            list(call)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    bot = RawBot(stack.gateway.target, "tok-raw1").connect(bot_pb2.Hello(games=["chess-v9"]), wait=False)
    _error(bot, bot_pb2.ERROR_REASON_UNKNOWN_GAME, grpc.StatusCode.INVALID_ARGUMENT, fatal=True)
    _closed(bot, grpc.StatusCode.INVALID_ARGUMENT)
    return 2


def failed_precondition(stack: Stack, tmp_path: Path) -> int:
    bot = RawBot(stack.gateway.target, "tok-raw1")
    bot.send(bot_pb2.BotMessage(ping=bot_pb2.Ping(nonce=1)))
    _closed(bot.connect(wait=False, send_hello=False), grpc.StatusCode.FAILED_PRECONDITION)
    return 1


def deadline_exceeded(stack: Stack, tmp_path: Path) -> int:  # the stack's hello_timeout: LIMIT_ENV
    _closed(
        RawBot(stack.gateway.target, "tok-raw1").connect(wait=False, send_hello=False),
        grpc.StatusCode.DEADLINE_EXCEEDED,
    )
    return 1


def resource_exhausted(stack: Stack, tmp_path: Path) -> int:  # the stack's max_message_bytes is 64 KiB
    for size, error in ((100_000, True), (200_000, False)):
        bot = RawBot(stack.gateway.target, "tok-raw2").connect()
        bot.send(bot_pb2.BotMessage(resign=bot_pb2.Resign(match_id="m", reason="x" * size)))
        _closed(bot, grpc.StatusCode.RESOURCE_EXHAUSTED)
        if error:  # within the transport's cap (twice the limit) the gateway says why first
            _error(
                bot, bot_pb2.ERROR_REASON_MALFORMED_MESSAGE, grpc.StatusCode.RESOURCE_EXHAUSTED, fatal=True
            )
            assert "over the limit of 65536 bytes" in bot.errors()[0].message
        else:
            assert not bot.errors()
        wait_for(lambda: not bot_sessions(stack, "raw2"), what="the session to leave the registry")
    first = RawBot(stack.gateway.target, "tok-limit").connect()
    second = RawBot(stack.gateway.target, "tok-limit").connect()
    third = RawBot(stack.gateway.target, "tok-limit").connect(wait=False)
    _error(third, bot_pb2.ERROR_REASON_TOO_MANY_SESSIONS, grpc.StatusCode.RESOURCE_EXHAUSTED, fatal=True)
    _closed(third, grpc.StatusCode.RESOURCE_EXHAUSTED)
    first.close()
    second.close()
    return 2


def unavailable(stack: Stack, tmp_path: Path) -> int:
    other = start_stack(tmp_path / "unavailable")
    bot = RawBot(other.gateway.target, "tok-raw1").connect()
    other.gateway.stop()
    _error(bot, bot_pb2.ERROR_REASON_SHUTTING_DOWN, grpc.StatusCode.UNAVAILABLE, fatal=True)
    _closed(bot, grpc.StatusCode.UNAVAILABLE)
    return 1


def stale_request(stack: Stack, tmp_path: Path) -> int:
    def twice(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        bot.answer(request)
        if len(bot.requests) == 1:
            bot.answer(request)  # answered already

    bot = RawBot(stack.gateway.target, "tok-raw3", behaviour=twice).connect()
    wait_for_bot(stack.registry, "raw3")
    run_match(GAME, 2, 61, [RemoteSeat("raw3", "raw", stack.registry), house(62)], time_control=PATIENT)
    _error(bot, bot_pb2.ERROR_REASON_STALE_REQUEST, grpc.StatusCode.FAILED_PRECONDITION, fatal=False)
    wait_for(lambda: bot.messages("match_ended"), what="MatchEnded")
    bot.answer(bot.requests[-1])  # its match is over
    _error(bot, bot_pb2.ERROR_REASON_STALE_REQUEST, grpc.StatusCode.FAILED_PRECONDITION, fatal=False, index=1)
    _still_open(bot)
    bot.close()
    return 1


def not_your_seat(stack: Stack, tmp_path: Path) -> int:
    bot = RawBot(stack.gateway.target, "tok-raw1").connect()
    bot.send(
        bot_pb2.BotMessage(decision=bot_pb2.Decision(match_id="other", request_id="other:3", action_id="x"))
    )
    _error(bot, bot_pb2.ERROR_REASON_NOT_YOUR_SEAT, grpc.StatusCode.PERMISSION_DENIED, fatal=False)
    bot.send(bot_pb2.BotMessage(resign=bot_pb2.Resign(match_id="other")))
    _error(bot, bot_pb2.ERROR_REASON_NOT_YOUR_SEAT, grpc.StatusCode.PERMISSION_DENIED, fatal=False, index=1)
    _still_open(bot)
    bot.close()
    return 1


def malformed_message(stack: Stack, tmp_path: Path) -> int:
    bot = RawBot(stack.gateway.target, "tok-raw1").connect()
    bot.send(bot_pb2.BotMessage())
    _error(bot, bot_pb2.ERROR_REASON_MALFORMED_MESSAGE, grpc.StatusCode.INVALID_ARGUMENT, fatal=False)
    _still_open(bot)
    bot.close()
    return 1


def hello_expected(stack: Stack, tmp_path: Path) -> int:
    bot = RawBot(stack.gateway.target, "tok-raw1").connect()
    bot.send(bot_pb2.BotMessage(hello=bot_pb2.Hello()))
    _error(bot, bot_pb2.ERROR_REASON_HELLO_EXPECTED, grpc.StatusCode.FAILED_PRECONDITION, fatal=False)
    _still_open(bot)
    bot.close()
    return 1


def bot_sessions(stack: Stack, bot_id: str) -> list[object]:
    from engine_service.gateway.registry import sessions_for_bot

    return list(sessions_for_bot(stack.registry, bot_id))


SCENARIOS: dict[tuple[str, str], Callable[[Stack, Path], int]] = {
    ("UNAUTHENTICATED", ""): unauthenticated,
    ("INVALID_ARGUMENT", ""): invalid_argument,
    ("FAILED_PRECONDITION", ""): failed_precondition,
    ("DEADLINE_EXCEEDED", ""): deadline_exceeded,
    ("RESOURCE_EXHAUSTED", ""): resource_exhausted,
    ("UNAVAILABLE", ""): unavailable,
    ("FAILED_PRECONDITION", "STALE_REQUEST"): stale_request,
    ("PERMISSION_DENIED", "NOT_YOUR_SEAT"): not_your_seat,
    ("INVALID_ARGUMENT", "MALFORMED_MESSAGE"): malformed_message,
    ("FAILED_PRECONDITION", "HELLO_EXPECTED"): hello_expected,
}


def test_every_refusal_row_has_a_scenario_and_every_scenario_a_row() -> None:
    assert set(refusal_rows()) == set(SCENARIOS)


@pytest.mark.parametrize("row", list(SCENARIOS), ids=lambda r: "-".join(filter(None, r)))
def test_the_server_refuses_as_bots_md_says(row: tuple[str, str], stack: Stack, tmp_path: Path) -> None:
    when, ends = refusal_rows()[row]
    assert ends == (row[1] == ""), f"{row}: BOTS.md says the stream {'ends' if ends else 'stays open'}"
    checked = SCENARIOS[row](stack, tmp_path)
    assert checked == len(when.split("; ")), f"{row}: BOTS.md lists {when!r}"
