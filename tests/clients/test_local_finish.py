"""The local runner's last word: the Node bot, told `Goodbye`, exits 0 instead of reconnecting."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_service.gateway.local import LocalRunner, LocalSettings
from tests.engine_service.gateway.harness import BotProcess, ensure_node_modules


@pytest.fixture(scope="module", autouse=True)
def node_modules() -> None:
    ensure_node_modules()


def test_node_bot_stops_at_the_local_runners_goodbye(tmp_path: Path) -> None:
    settings = LocalSettings(
        port=0, house="random", decision_seconds=2.0, bank_seconds=2.0, wait=30.0, out=tmp_path
    )
    runner = LocalRunner(settings, say=lambda line: None).start()
    node = BotProcess("node", runner.target, runner.token, tmp_path)
    try:
        [record] = runner.run()
        assert record.faults == []
    finally:
        runner.close(final="played 1 match(es)")
    assert node.proc.wait(15) == 0
    assert "server said goodbye: played 1 match(es); exiting" in node.output()
