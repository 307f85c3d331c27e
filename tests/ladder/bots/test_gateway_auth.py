"""The ladder's gateway verifier against its real bot records: tokens, revocation, the publisher; and a gateway
that resolves it from the default configuration."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from django.contrib.auth import get_user_model

from engine_service.gateway.config import GatewayConfig
from engine_service.gateway.registry import SqliteRegistry
from engine_service.gateway.server import GatewayThread, build_verifier
from engine_service.gateway.verifiers import BatchVerifier
from ladder.bots.gateway_auth import (
    LadderTokenSource,
    connect_revocation_publisher,
    disconnect_revocation_publisher,
    gateway_verifier,
)
from ladder.bots.services import bot_create, bot_token_revoke, bot_token_rotate
from tests.engine_service.gateway.harness import GAME, RawBot, wait_for

pytestmark = pytest.mark.django_db(transaction=True)  # the verifier reads from its own thread


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("gateway-owner", password="pw-gateway-owner")


def test_tokens_are_checked_against_the_ladder(owner) -> None:
    bot, token = bot_create(owner=owner, name="Verified", games=[GAME], max_concurrent=3)
    verifier = gateway_verifier(warm=True)
    identity = asyncio.run(verifier.verify(token))
    assert identity is not None
    assert (identity.bot_id, identity.name, identity.owner) == (str(bot.pk), "Verified", "gateway-owner")
    assert identity.games == (GAME,) and identity.max_concurrent == 3
    assert asyncio.run(verifier.verify(token + "x")) is None
    heard: list[str] = []
    verifier.on_revoke(heard.append)
    _, new_token = bot_token_rotate(bot_id=bot.pk, user=owner)
    assert heard == [str(bot.pk)]
    assert asyncio.run(verifier.verify(token)) is None and asyncio.run(verifier.verify(new_token)) is not None


def test_revocation_drops_the_stream_at_once_and_is_published(owner, tmp_path: Path, monkeypatch) -> None:
    registry_path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("CARAVANSERAI_REGISTRY_PATH", str(registry_path))
    monkeypatch.delenv("REDIS_URL", raising=False)
    connect_revocation_publisher()
    bot, token = bot_create(owner=owner, name="Doomed", games=[GAME])
    config = GatewayConfig(
        bot_address="127.0.0.1:0", relay_address="127.0.0.1:0", registry_path=registry_path
    )
    gateway = GatewayThread(config, gateway_verifier(warm=True), SqliteRegistry(registry_path)).start()
    try:
        client = RawBot(gateway.bot_target, token).connect()
        assert client.messages("welcome")[0].bot_id == str(bot.pk)
        bot_token_revoke(bot_id=bot.pk, user=owner)
        assert client.wait_closed(5) == grpc.StatusCode.UNAUTHENTICATED and "revoked" in client.details
        again = RawBot(gateway.bot_target, token).connect(wait=False)
        assert again.wait_closed(5) == grpc.StatusCode.UNAUTHENTICATED
        revoked, _ = SqliteRegistry(registry_path).revocations_since(0)
        assert str(bot.pk) in revoked  # what gateways in other processes poll
        wait_for(lambda: not gateway.hub.sessions, what="the session to be dropped")
        client.close()
        again.close()
    finally:
        gateway.stop()
        disconnect_revocation_publisher()


def test_the_default_configuration_plugs_the_ladder_in(owner) -> None:
    verifier = build_verifier(GatewayConfig(auth="django"))  # resolved by name: the gateway imports no ladder
    assert isinstance(verifier, BatchVerifier) and isinstance(verifier.source, LadderTokenSource)
    bot, token = bot_create(owner=owner, name="Plugged", games=[GAME])
    identity = asyncio.run(verifier.verify(token))
    assert identity is not None and identity.bot_id == str(bot.pk)
