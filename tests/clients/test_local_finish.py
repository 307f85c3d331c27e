"""The local runner's last word: the Node bot, told `Goodbye`, exits 0 instead of reconnecting."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_service.gateway.local import LocalRunner
from tests.engine_service.gateway.harness import WAIT, BotProcess, ensure_node_modules, local_settings


@pytest.fixture(scope="module", autouse=True)
def node_modules() -> None:
    ensure_node_modules()


def test_node_bot_stops_at_the_local_runners_goodbye(tmp_path: Path) -> None:
    runner = LocalRunner(local_settings(tmp_path), say=lambda line: None).start()
    node = BotProcess("node", runner.target, runner.token, tmp_path)
    try:
        [record] = runner.run()
        assert record.faults == []
    finally:
        runner.close(final="played 1 match(es)")
    assert node.proc.wait(WAIT) == 0
    assert "server said goodbye: played 1 match(es); exiting" in node.output()
