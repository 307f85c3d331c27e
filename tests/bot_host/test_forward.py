"""The bot host's own socket relayed to a gateway's TCP port (a gateway in another container, or the load
balancer): a sandboxed bot plays a whole match through it with no fault."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot_host.examples import example_archive
from bot_host.forward import SocketForwarder
from bot_host.host import BotHost
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.referee import run_match, verify
from tests.bot_host.conftest import HostRig
from tests.engine_service.gateway.harness import GAME, PATIENT
from tests.engine_service.gateway.test_relay import house

pytestmark = pytest.mark.slow


def test_a_bot_plays_through_the_hosts_forwarded_socket(rig: HostRig, tmp_path: Path) -> None:
    socket_path = tmp_path / "forwarded" / "bot.sock"
    forwarder = SocketForwarder(socket_path, "127.0.0.1", rig.gateway.bot_port).start()
    try:
        settings = rig.host.settings
        rig.host = BotHost(replace(settings, socket_path=socket_path), rig.source, rig.host.runtimes)
        rig.source.add(5, example_archive("python"))
        assert rig.until(lambda: rig.connected(5)), rig.log(5)
        record = run_match(
            GAME, 2, 91, [RemoteSeat("5", "hosted-5", rig.registry), house(92)], time_control=PATIENT
        )
        assert record.result is not None and record.faults == []
        verify(record)
        assert forwarder.connections >= 1
    finally:
        rig.host.shutdown()
        forwarder.stop()
    assert not socket_path.exists()


def test_a_forwarder_address_must_be_host_and_port() -> None:
    assert SocketForwarder.parse("lb:50051") == ("lb", 50051)
    for bad in ("lb", ":50051", "lb:http"):
        with pytest.raises(ValueError, match="host:port"):
            SocketForwarder.parse(bad)
