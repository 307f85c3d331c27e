"""A private Redis restarted empty under a running gateway (real processes): the gateway writes its open
sessions again on its next heartbeat, so the bot is online again without reconnecting, and a seat started
while the registry is empty waits for that (excused) and plays its match: never the bot's disconnect."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from engine_service.gateway.registry import RedisRegistry, sessions_for_bot
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, run_match
from tests.engine_service.gateway.harness import (
    GAME,
    PATIENT,
    TOKENS,
    WAIT,
    GatewayProcess,
    RawBot,
    first_legal,
    wait_for,
    wait_for_bot,
)
from tests.ports import free_port

HEARTBEAT = 4.0  # a wide window between the restart and the gateway's next heartbeat


class PrivateRedis:
    """A redis-server of this test's own, keeping nothing on disk, that can be killed and started again."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> PrivateRedis:
        server = shutil.which("redis-server") or "/usr/bin/redis-server"
        argv = [server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.proc = subprocess.Popen([*argv, "--dir", str(self.workdir)], stdout=subprocess.DEVNULL)
        wait_for(lambda: self._pong(), what="the private redis-server")
        return self

    def _pong(self) -> bool:
        try:
            return bool(redis.Redis.from_url(self.url, socket_timeout=1).ping())
        except redis.RedisError:
            return False

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)


def just_after_a_heartbeat(registry: RedisRegistry) -> None:
    """Return as soon as the gateway's heartbeat time changes: the next one is HEARTBEAT seconds away."""
    first = registry.client.hgetall(registry._k("gateways"))
    wait_for(lambda: registry.client.hgetall(registry._k("gateways")) != first, what="a heartbeat")


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path).start()
    yield server
    server.kill()


def house() -> HouseSeat:
    return HouseSeat(make_policy("random", 1))


def test_a_registry_restarted_empty_is_written_again_and_no_bot_is_faulted(
    tmp_path: Path, private_redis: PrivateRedis
) -> None:
    prefix = f"cvs:restart:{uuid.uuid4().hex[:8]}"
    env = {"REDIS_URL": private_redis.url, "CARAVANSERAI_REGISTRY_PREFIX": prefix}
    gateway = GatewayProcess(TOKENS, tmp_path, tmp_path / "unused.sqlite3", env=env)
    gateway.extra_env.update(
        CARAVANSERAI_GATEWAY_HEARTBEAT=str(HEARTBEAT), CARAVANSERAI_GATEWAY_SESSION_TTL="12"
    )
    gateway.start()
    registry = RedisRegistry(private_redis.url, prefix=prefix, ttl=10.0)
    bot = RawBot(gateway.target, "tok-raw1", behaviour=first_legal).connect()
    try:
        wait_for_bot(registry, "raw1")
        just_after_a_heartbeat(registry)
        private_redis.kill()
        private_redis.start()  # the same address, no data
        seats = [RemoteSeat("raw1", "raw-one", registry, gateway_return=WAIT), house()]
        record = run_match(GAME, 2, 3, seats, time_control=PATIENT)  # seated meanwhile
        assert record.faults == [] and record.forfeits == []
        assert sessions_for_bot(registry, "raw1")  # written again by a heartbeat, not by a reconnection:
        assert bot.wait_closed(timeout=0.1) is None and len(bot.messages("welcome")) == 1
    finally:
        bot.close()
        gateway.stop()
