"""Stubs are generated at build time into an ignored package, never committed."""

from __future__ import annotations

import subprocess

from engine_service.gateway import codegen
from tests.engine_service.gateway.harness import ROOT


def test_stubs_are_generated_not_committed() -> None:
    directory = codegen.generate()
    assert (directory / "caravanserai/bot/v1/bot_pb2.py").is_file()
    relay = (directory / "caravanserai/relay/v1/relay_pb2.py").read_text()
    assert "from engine_service.gateway._generated.caravanserai.bot.v1 import bot_pb2" in relay
    assert codegen._up_to_date()
    tracked = subprocess.run(
        ["git", "ls-files", "engine_service/gateway/_generated"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert tracked == ""
    ignored = subprocess.run(
        ["git", "check-ignore", "engine_service/gateway/_generated/x.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert ignored.returncode == 0
