"""The relay's decision port: its framing, its settings, where a gateway registers it, and that stopping the
gateway closes it (the workers' connections end, new ones are refused)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from engine_service.gateway.auth import InMemoryVerifier
from engine_service.gateway.config import ConfigError, GatewayConfig
from engine_service.gateway.registry import SqliteRegistry
from engine_service.gateway.relay_frames import CLOSING, FrameBuffer, FrameError, frame
from engine_service.gateway.server import GatewayThread
from tests.engine_service.gateway.harness import RawBot, Stack, wait_for_bot


def test_frames_are_cut_from_reads_of_any_size() -> None:
    payloads = [b"first", CLOSING, b"x" * 70_000, b"last"]
    wire = b"".join(frame(p) for p in payloads)
    for size in (1, 3, 4, 5, 4096, len(wire)):
        frames = FrameBuffer()
        found = []
        for start in range(0, len(wire), size):
            found += frames.feed(wire[start : start + size])
        assert found == payloads and len(frames) == 0, size
    assert FrameBuffer().feed(frame(b"one")) == [b"one"]


def test_an_oversized_frame_is_refused() -> None:
    with pytest.raises(FrameError, match="over the limit of 16"):
        FrameBuffer(limit=16).feed((17).to_bytes(4, "big"))
    assert FrameBuffer(limit=16).feed(frame(b"s" * 16)) == [b"s" * 16]


def test_the_decision_address_defaults_to_the_relays_host_on_any_port() -> None:
    config = GatewayConfig.from_env({"CARAVANSERAI_RELAY_ADDR": "127.0.0.2:7000"})
    assert config.decisions_bind() == ("127.0.0.2", 0)
    assert config.advertised_decisions(7001) == "127.0.0.2:7001"
    deployed = GatewayConfig.from_env(
        {
            "CARAVANSERAI_RELAY_ADDR": "0.0.0.0:50052",
            "CARAVANSERAI_RELAY_ADVERTISE": "10.0.0.5:50052",
            "CARAVANSERAI_RELAY_DECISIONS_ADDR": "0.0.0.0:50053",
        }
    )
    assert deployed.decisions_bind() == ("0.0.0.0", 50053)
    assert deployed.advertised_decisions(50053) == "10.0.0.5:50053"  # the host workers reach the relay at
    told = deployed.with_(decisions_advertise="gw1.internal:6000")
    assert told.advertised_decisions(50053) == "gw1.internal:6000"


@pytest.mark.parametrize("value", ["50053", "host:", "host:port", "host:70000"])
def test_a_malformed_decision_address_names_its_variable(value: str) -> None:
    for name in ("CARAVANSERAI_RELAY_DECISIONS_ADDR", "CARAVANSERAI_RELAY_DECISIONS_ADVERTISE"):
        with pytest.raises(ConfigError, match=name):
            GatewayConfig.from_env({name: value})


def test_sessions_register_the_decision_address_the_gateway_is_ready_on(stack: Stack) -> None:
    bot = RawBot(stack.gateway.target, "tok-raw1").connect()
    try:
        wait_for_bot(stack.registry, "raw1")
        [found] = [s for s in stack.registry.sessions() if s.bot_id == "raw1"]
        assert found.decisions_address == stack.gateway.ready["decisions_address"]
        assert found.decisions_address != found.relay_address
        host, port = found.decisions_address.rsplit(":", 1)
        socket.create_connection((host, int(port)), timeout=5).close()
    finally:
        bot.close()


def test_stopping_the_gateway_closes_its_decision_port(tmp_path: Path) -> None:
    config = GatewayConfig(
        bot_address="127.0.0.1:0",
        relay_address="127.0.0.1:0",
        registry_path=tmp_path / "registry.sqlite3",
    )
    gateway = GatewayThread(config, InMemoryVerifier(), SqliteRegistry(tmp_path / "registry.sqlite3"))
    gateway.start()
    host, port = gateway.decisions_target.rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) == gateway.gateway.decisions_port  # type: ignore[union-attr]
    worker = socket.create_connection((host, int(port)), timeout=5)
    gateway.stop()
    assert worker.recv(16) == b""  # the worker's connection ended
    worker.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=5)
