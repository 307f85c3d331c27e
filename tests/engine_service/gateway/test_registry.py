"""The session registry on both backends: sessions, liveness by heartbeat, matchmaking view, revocations.

Liveness is read against the registry's wall clock, which the tests move (`Clock`): nothing is slept for,
and the TTL is long enough that no key expires on its own while a test runs on a loaded machine."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import engine_service.gateway.registry as registry_module
from engine_service.gateway.registry import (
    RedisRegistry,
    SessionInfo,
    SessionRegistry,
    SqliteRegistry,
    bot_host_states,
    online_bots,
    sessions_for_bot,
)

TTL = 30.0


class Clock:
    """The registry's wall clock (`time.time()` in its module), moved by the test."""

    def __init__(self) -> None:
        self.now = time.time()

    def time(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(registry_module, "time", fake)
    return fake


@pytest.fixture(params=["sqlite", "redis"])
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionRegistry]:
    if request.param == "sqlite":
        reg: SessionRegistry = SqliteRegistry(tmp_path / "registry.sqlite3", ttl=TTL)
        yield reg
        reg.close()
        return
    url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/5"
    redis_reg = RedisRegistry(url, prefix=f"cvs:test:{uuid.uuid4().hex[:8]}", ttl=TTL)
    yield redis_reg
    for key in redis_reg.client.scan_iter(f"{redis_reg.prefix}:*"):
        redis_reg.client.delete(key)
    redis_reg.close()


def session(sid: str, bot: str, gateway: str, capacity: int = 2, matches: int = 0) -> SessionInfo:
    now = time.time()
    return SessionInfo(
        sid,
        bot,
        f"name-{bot}",
        gateway,
        f"127.0.0.1:{gateway}",
        ("expedition-v1",),
        capacity,
        matches,
        now,
        now,
    )


def test_sessions_online_bots_and_match_counts(registry: SessionRegistry) -> None:
    registry.register(session("s1", "b1", "g1", capacity=2))
    registry.register(session("s2", "b1", "g2", capacity=3))
    registry.register(session("s3", "b2", "g1", capacity=1))
    registry.set_matches("s1", 2)
    assert [s.session_id for s in sessions_for_bot(registry, "b1")] == ["s2", "s1"]  # most free first
    assert sessions_for_bot(registry, "b1", "voyages-v1") == []
    [b1, b2] = online_bots(registry, "expedition-v1")
    assert (b1.bot_id, b1.capacity, b1.matches, b1.free) == ("b1", 5, 2, 3)
    assert b1.gateways == ("127.0.0.1:g1", "127.0.0.1:g2") and b2.to_json()["free"] == 1
    registry.unregister("s3")
    assert [b.bot_id for b in online_bots(registry)] == ["b1"]
    registry.drop_gateway(relay_address="127.0.0.1:g2")
    assert [s.session_id for s in registry.sessions()] == ["s1"]


def test_silent_gateways_sessions_vanish_and_heartbeats_keep_them(
    registry: SessionRegistry, clock: Clock
) -> None:
    registry.register(session("s1", "b1", "g1"))
    registry.register(session("s2", "b2", "g2"))
    registry.heartbeat("g1", "127.0.0.1:g1", ["s1"])
    registry.heartbeat("g2", "127.0.0.1:g2", ["s2"])
    assert set(registry.live_gateways()) == {"g1", "g2"}
    clock.now += 0.7 * TTL
    registry.heartbeat("g1", "127.0.0.1:g1", ["s1"])
    clock.now += 0.6 * TTL  # g2 silent for longer than the TTL, g1 not
    assert [s.session_id for s in registry.sessions()] == ["s1"]
    assert set(registry.live_gateways()) == {"g1"}


def test_revocations_are_read_after_a_cursor(registry: SessionRegistry) -> None:
    registry.publish_revocation("old")
    empty, cursor = registry.revocations_since(-1)
    assert empty == []
    registry.publish_revocation("b1")
    registry.publish_revocation("b2")
    revoked, cursor = registry.revocations_since(cursor)
    assert revoked == ["b1", "b2"]
    assert registry.revocations_since(cursor) == ([], cursor)


def _lose_everything(registry: SessionRegistry) -> None:
    """What a Redis restarted without its data (or a deleted registry file) leaves."""
    if isinstance(registry, RedisRegistry):
        for key in registry.client.scan_iter(f"{registry.prefix}:*"):
            registry.client.delete(key)
    else:
        conn = registry._conn()
        conn.execute("DELETE FROM sessions")
        conn.execute("DELETE FROM gateways")


def test_a_store_that_lost_its_data_has_every_open_session_again_after_one_heartbeat(
    registry: SessionRegistry,
) -> None:
    registry.register(session("s1", "b1", "g1", capacity=3))
    registry.register(session("s2", "b2", "g1"))
    registry.register(session("gone", "b3", "g1"))
    registry.set_matches("s1", 2)
    registry.unregister("gone")
    _lose_everything(registry)
    assert registry.sessions() == [] and registry.live_gateways() == {}
    registry.heartbeat("g1", "127.0.0.1:g1", ["s1", "s2"])
    [b1, b2] = online_bots(registry)
    assert (b1.bot_id, b1.capacity, b1.matches, b2.bot_id) == ("b1", 3, 2, "b2")
    assert set(registry.live_gateways()) == {"g1"}


def test_a_registry_file_from_before_asked_version_and_decisions_gains_them(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:  # the sessions table as it was before these columns
        conn.execute(
            "CREATE TABLE sessions (session_id TEXT PRIMARY KEY, bot_id TEXT NOT NULL, bot_name TEXT NOT NULL,"
            " gateway_id TEXT NOT NULL, relay_address TEXT NOT NULL, games TEXT NOT NULL,"
            " capacity INTEGER NOT NULL, matches INTEGER NOT NULL, connected_at REAL NOT NULL,"
            " heartbeat_at REAL NOT NULL)"
        )
    registry = SqliteRegistry(path, ttl=10)
    now = time.time()
    session = SessionInfo(
        "s1", "7", "marco", "gw", "127.0.0.1:1", ("expedition-v1",), 2, 0, now, now, 4, "v1.2", "127.0.0.1:2"
    )
    registry.register(session)
    registry.heartbeat("gw", "127.0.0.1:1", ["s1"])
    [found] = registry.sessions()
    assert (found.asked, found.capacity, found.bot_version) == (4, 2, "v1.2")
    assert found.decisions_address == "127.0.0.1:2"


def test_a_session_carries_its_gateways_decision_address(registry: SessionRegistry) -> None:
    import dataclasses

    registry.register(dataclasses.replace(session("s1", "b1", "g1"), decisions_address="10.0.0.7:50053"))
    registry.register(session("s2", "b2", "g1"))  # one written without it reads as ""
    registry.heartbeat("g1", "127.0.0.1:g1", ["s1", "s2"])
    found = {s.session_id: s.decisions_address for s in registry.sessions()}
    assert found == {"s1": "10.0.0.7:50053", "s2": ""}


def test_gateways_carry_their_admission_claim_and_one_without_reads_as_admitting(
    registry: SessionRegistry,
) -> None:
    for g in ("g1", "g2", "g3"):
        registry.heartbeat(g, f"127.0.0.1:{g}", [])
    now = time.time()
    registry.report_admission("g1", "127.0.0.1:g1", now + 60)
    registry.report_admission("g2", "127.0.0.1:g2", 0.0)  # alive, not admitting
    states = registry.gateway_states()
    assert {g: s.admitting(now) for g, s in states.items()} == {"g1": True, "g2": False, "g3": True}
    assert states["g3"].admitting_until is None and states["g2"].relay_address == "127.0.0.1:g2"
    registry.report_admission("g1", "127.0.0.1:g1", now - 1)  # a claim not renewed lapses
    assert not registry.gateway_states()["g1"].admitting(now)
    registry.drop_gateway(gateway_id="g1")
    assert set(registry.gateway_states()) == {"g2", "g3"}
    registry.heartbeat("g1", "127.0.0.1:g1", [])  # back under the same id: no claim left from before
    assert registry.gateway_states()["g1"].admitting_until is None


def test_a_silent_gateways_claim_is_not_read(registry: SessionRegistry, clock: Clock) -> None:
    registry.heartbeat("g1", "127.0.0.1:g1", [])
    registry.report_admission("g1", "127.0.0.1:g1", clock.now + 3 * TTL)
    clock.now += 1.2 * TTL  # past the registry's TTL without a heartbeat
    registry.heartbeat("g2", "127.0.0.1:g2", [])
    assert set(registry.gateway_states()) == {"g2"}


def test_each_bots_sessions_are_read_by_bot(registry: SessionRegistry) -> None:
    registry.register(session("s1", "b1", "g1"))
    registry.register(session("s2", "b1", "g2"))
    registry.register(session("s3", "b2", "g1"))
    assert sorted(s.session_id for s in registry.sessions_of_bot("b1")) == ["s1", "s2"]
    registry.unregister("s1")
    registry.drop_gateway(gateway_id="g2")
    assert registry.sessions_of_bot("b1") == [] and registry.sessions_of_bot("nobody") == []
    assert [s.session_id for s in registry.sessions_of_bot("b2")] == ["s3"]


def test_bot_hosts_say_which_bots_they_run_and_until_when_they_are_up(registry: SessionRegistry) -> None:
    now = time.time()
    registry.report_host("host-a", ["3", "4"], now + 3)
    registry.report_host("host-b", ["5"], 0.0)  # stopped on purpose
    states = registry.host_states()
    assert set(states) == {"host-a", "host-b"}
    assert states["host-a"].bot_ids == ("3", "4") and states["host-a"].ready(now)
    assert not states["host-b"].ready(now)
    assert [h.host_id for h in bot_host_states(registry, "4")] == ["host-a"]
    assert bot_host_states(registry, "9") == []  # a bot no host runs
    registry.report_host("host-a", ["3"], now + 3)  # the next report replaces the last
    assert bot_host_states(registry, "4") == [] and not registry.host_states()["host-a"].ready(now + 4)
