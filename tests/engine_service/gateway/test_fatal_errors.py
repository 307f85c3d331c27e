"""Fatal errors are always said (issue 29, item 5): a revoked token, a rotated token, a draining and a stopping
gateway end an open stream with `Error{fatal}` as its last message, then the same status, every time.

Each case is repeated many times against a real in-process grpc.aio gateway, with the bot pinging while it
is ended (its reads and the gateway's writes are in flight then), so an ordering race shows up as a failed
round. Nothing here waits on a clock: every wait is for an event, with a generous cap.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from engine_service.gateway.auth import BotIdentity, InMemoryVerifier
from engine_service.gateway.config import GatewayConfig
from engine_service.gateway.protocol import bot_pb2
from engine_service.gateway.registry import SqliteRegistry
from engine_service.gateway.server import GatewayThread
from tests.engine_service.gateway.harness import GAME, RawBot, wait_for

ROUNDS = 50
GATEWAY_ROUNDS = 12  # each starts and stops a gateway, with STREAMS streams on it
STREAMS = 3
UNAUTH = grpc.StatusCode.UNAUTHENTICATED
UNAVAILABLE = grpc.StatusCode.UNAVAILABLE


def _config(tmp_path: Path) -> GatewayConfig:
    return GatewayConfig(
        bot_address="127.0.0.1:0",
        relay_address="127.0.0.1:0",
        registry_path=tmp_path / "registry.sqlite3",
    )


def _identity(bot_id: str) -> BotIdentity:
    return BotIdentity(bot_id=bot_id, name=bot_id, owner="tester", games=(GAME,), max_concurrent=1)


def _busy(bot: RawBot, pings: int = 20) -> None:
    """Pings in flight as the stream is ended: the gateway is reading and writing Pongs meanwhile."""
    for nonce in range(pings):
        bot.send(bot_pb2.BotMessage(ping=bot_pb2.Ping(nonce=nonce)))


def assert_said(bot: RawBot, code: grpc.StatusCode, reason: int, round_: int) -> bot_pb2.Error:
    """The stream ended with `code`, and its last message was the `Error{fatal}` saying the same."""
    assert bot.wait_closed() == code, f"round {round_}: status {bot.status} ({bot.details!r})"
    last = bot.received[-1]
    assert last.WhichOneof("message") == "error", f"round {round_}: last message {last}"
    error = last.error
    assert error.fatal and error.reason == reason, f"round {round_}: {error}"
    assert error.status_code == code.value[0] and error.message == bot.details, f"round {round_}"
    assert [m.error.fatal for m in bot.received if m.WhichOneof("message") == "error"] == [True]
    return error


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[GatewayThread]:
    thread = GatewayThread(_config(tmp_path), InMemoryVerifier(), SqliteRegistry(tmp_path / "r.sqlite3"))
    yield thread.start()
    thread.stop()


def test_a_revoked_token_is_said_before_the_stream_ends_every_time(gateway: GatewayThread) -> None:
    verifier = gateway.verifier
    assert isinstance(verifier, InMemoryVerifier)
    for round_ in range(ROUNDS):
        token = f"tok-doomed-{round_}"
        verifier.add(token, _identity("doomed"))
        bot = RawBot(gateway.bot_target, token).connect()
        try:
            assert bot.messages("welcome"), f"round {round_}: no Welcome ({bot.details!r})"
            _busy(bot)
            verifier.revoke("doomed")  # what the ladder's revoke and rotate both announce
            error = assert_said(bot, UNAUTH, bot_pb2.ERROR_REASON_UNAUTHENTICATED, round_)
            assert "revoked" in error.message and "current token" in error.message
        finally:
            bot.close()
    wait_for(lambda: not gateway.hub.sessions, what="every revoked session to be gone")


def test_a_gateway_stopping_says_so_to_every_stream_every_time(tmp_path: Path) -> None:
    verifier = InMemoryVerifier()
    for i in range(STREAMS):
        verifier.add(f"tok-{i}", _identity(f"bot{i}"))
    for round_ in range(GATEWAY_ROUNDS):
        registry = SqliteRegistry(tmp_path / f"r{round_}.sqlite3")
        gateway = GatewayThread(_config(tmp_path), verifier, registry).start()
        bots = [RawBot(gateway.bot_target, f"tok-{i}").connect() for i in range(STREAMS)]
        try:
            for bot in bots:
                _busy(bot)
        finally:
            gateway.stop()
        try:
            for bot in bots:
                error = assert_said(bot, UNAVAILABLE, bot_pb2.ERROR_REASON_SHUTTING_DOWN, round_)
                assert error.message == "gateway shutting down; reconnect"
        finally:
            for bot in bots:
                bot.close()


def test_a_draining_gateway_says_so_to_an_idle_stream_every_time(tmp_path: Path) -> None:
    verifier = InMemoryVerifier()
    verifier.add("tok-idle", _identity("idle"))
    for round_ in range(GATEWAY_ROUNDS):
        registry = SqliteRegistry(tmp_path / f"r{round_}.sqlite3")
        gateway = GatewayThread(_config(tmp_path), verifier, registry).start()
        bot = RawBot(gateway.bot_target, "tok-idle").connect()
        try:
            _busy(bot)
            assert gateway.gateway is not None
            gateway.call(gateway.gateway.drain(0))  # a stream with no match is moved at once
            error = assert_said(bot, UNAVAILABLE, bot_pb2.ERROR_REASON_SHUTTING_DOWN, round_)
            assert error.message == "gateway draining; reconnect"
        finally:
            bot.close()
            gateway.stop()


@pytest.mark.django_db(transaction=True)  # the verifier reads the ladder's bots from its own thread
def test_a_rotated_token_is_said_before_the_stream_ends_every_time(tmp_path: Path) -> None:
    from django.contrib.auth import get_user_model

    from ladder.bots.gateway_auth import gateway_verifier
    from ladder.bots.services import bot_create, bot_token_rotate

    owner = get_user_model().objects.create_user("rotating-owner", password="pw-rotating-owner")
    bot_record, token = bot_create(owner=owner, name="Rotating", games=[GAME])
    registry = SqliteRegistry(tmp_path / "r.sqlite3")
    gateway = GatewayThread(_config(tmp_path), gateway_verifier(warm=True), registry).start()
    try:
        for round_ in range(GATEWAY_ROUNDS):
            bot = RawBot(gateway.bot_target, token).connect()
            try:
                assert bot.messages("welcome"), f"round {round_}: no Welcome ({bot.details!r})"
                _busy(bot)
                _, token = bot_token_rotate(bot_id=bot_record.pk, user=owner)
                assert_said(bot, UNAUTH, bot_pb2.ERROR_REASON_UNAUTHENTICATED, round_)
            finally:
                bot.close()
    finally:
        gateway.stop()
