"""A gateway lost mid-match and another one slow to admit (real gateways on threads of this process, a bot
over gRPC, the worker's remote seat): the reconnect grace runs only while a gateway admits at normal speed.

The slowness is injected, never measured: the second gateway's token verifier holds its warm-up (a Django
setup that takes long on a busy machine), and with it every token check, until the test releases it, four
times the grace after the bot has knocked. The gateway is alive all along (heartbeats, sockets open) but
claims no admission, so the seat waits, excused, and resumes the match there. The seat's clock stops at the
release: the grace cannot run out while a loaded machine lets the bot back in, only during the slowness. And
once a gateway does admit normally, a bot that never comes back is a real `disconnect` when its grace runs
out."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine_service.games import Action
from engine_service.gateway.auth import BotIdentity, InMemoryVerifier
from engine_service.gateway.config import GatewayConfig
from engine_service.gateway.registry import SqliteRegistry
from engine_service.gateway.relay_connection import RelayChannels
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.gateway.server import GatewayThread
from engine_service.referee import DecisionRequest, MatchInfo, SeatFault
from tests.engine_service.gateway.harness import (
    GAME,
    PATIENT,
    RawBot,
    SeatClock,
    first_legal,
    wait_for,
    wait_for_bot,
)

TOKEN = "tok-restart"
BOT = BotIdentity(bot_id="restart", name="restart", owner="tester", games=(GAME,), max_concurrent=2)
GRACE = 1.5
SECONDS = PATIENT.decision_seconds  # a decision's deadline
LEGAL = [Action("go", "move", {}), Action("pass", "pass", {})]


class HeldVerifier(InMemoryVerifier):
    """Dev tokens whose warm-up, and every check, waits until `released` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.released = threading.Event()

    def warm_up(self) -> None:
        self.released.wait(60)

    async def verify(self, token: str) -> BotIdentity | None:
        await asyncio.to_thread(self.released.wait, 60)
        return await super().verify(token)


def verifier(kind: type[InMemoryVerifier] = InMemoryVerifier) -> InMemoryVerifier:
    v = kind()
    v.add(TOKEN, BOT)
    return v


@pytest.fixture
def config(tmp_path: Path) -> GatewayConfig:
    return GatewayConfig(
        bot_address="127.0.0.1:0",
        relay_address="127.0.0.1:0",
        registry_path=tmp_path / "registry.sqlite3",
        heartbeat=0.5,
        session_ttl=3.0,
    )


@pytest.fixture
def registry(config: GatewayConfig) -> SqliteRegistry:
    return SqliteRegistry(config.registry_path, ttl=3.0)


@pytest.fixture
def channels() -> Iterator[RelayChannels]:
    c = RelayChannels()
    yield c
    c.close()


def decision(step: int) -> DecisionRequest:
    return DecisionRequest(
        match_id="restart-1",
        game_id=GAME,
        seat=0,
        step=step,
        request_id=f"restart-1:{step}",
        observation={"step": step},
        legal_actions=LEGAL,
        deadline_seconds=SECONDS,
        time_bank_seconds=0.0,
    )


def seated(
    registry: SqliteRegistry, config: GatewayConfig, channels: RelayChannels, clock: SeatClock
) -> tuple[RemoteSeat, GatewayThread, RawBot]:
    """The bot on a first gateway, seated, one decision played there."""
    first = GatewayThread(config, verifier(), SqliteRegistry(config.registry_path, ttl=3.0)).start()
    bot = RawBot(first.bot_target, TOKEN, behaviour=first_legal).connect()
    wait_for_bot(registry, BOT.bot_id)
    seat = RemoteSeat(BOT.bot_id, BOT.name, registry, reconnect_grace=GRACE, channels=channels, clock=clock)
    seat.start(MatchInfo("restart-1", GAME, 2, {}, 0, ["house"], SECONDS, 0.0))
    assert seat.decide(decision(0)) == "go"
    return seat, first, bot


def test_a_gateway_slow_to_admit_for_four_times_the_grace_forfeits_nobody(
    registry: SqliteRegistry, config: GatewayConfig, channels: RelayChannels
) -> None:
    clock = SeatClock()
    seat, first, bot = seated(registry, config, channels, clock)
    first.stop()  # the gateway goes away: the bot's stream ends, its registry entries go
    bot.close()
    held = verifier(HeldVerifier)
    assert isinstance(held, HeldVerifier)
    second = GatewayThread(config, held, SqliteRegistry(config.registry_path, ttl=3.0))
    starting = threading.Thread(target=second.start, daemon=True)
    starting.start()
    wait_for(
        lambda: second.gateway is not None and second.gateway.bot_port, what="the second gateway to bind"
    )
    assert second.gateway is not None
    back = RawBot(f"127.0.0.1:{second.gateway.bot_port}", TOKEN, behaviour=first_legal).connect(wait=False)

    def released() -> None:
        clock.stop()
        held.released.set()

    release = threading.Timer(4 * GRACE, released)  # an injected delay: four graces of slowness
    release.start()
    try:
        request = decision(1)
        assert seat.decide(request) == "go"  # resumed on the second gateway, no fault
        assert held.released.is_set()  # not before the slowness ended
        [lost, resumed] = seat.incidents
        assert lost["kind"] == "gateway_lost" and resumed["kind"] == "resumed"
        assert "with no gateway admitting at normal speed" in resumed["reason"]
        assert request.extra["excused_seconds"] > 0 and request.extra["bot_seconds"] < SECONDS
    finally:
        release.cancel()
        held.released.set()
        starting.join(30)
        back.close()
        second.stop()


def test_the_grace_runs_out_when_a_gateway_admits_and_the_bot_never_returns(
    registry: SqliteRegistry, config: GatewayConfig, channels: RelayChannels
) -> None:
    seat, first, bot = seated(registry, config, channels, SeatClock())
    first.stop()
    bot.close()
    second = GatewayThread(config, verifier(), SqliteRegistry(config.registry_path, ttl=3.0)).start()
    try:
        with pytest.raises(SeatFault) as fault:
            seat.decide(decision(1))
        assert fault.value.kind == "disconnect" and "admitting at normal speed" in fault.value.reason
    finally:
        second.stop()
