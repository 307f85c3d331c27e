"""The example bot written from the games' references alone (clients/python/examples/reference_bot.py)
plays a full match of every game through the local runner, the server in miniature, against the greedy
house bot: no fault and every record verified (the runner re-checks each record as the ladder does).

The bot is waited for until its stream is registered, however long a loaded machine takes to start it; if
it exits first, the test fails at once with the bot's own output (and the gateway's log, kept at INFO)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from engine_service.gateway.local import LOCAL_BOT_ID, LocalRunner, LocalSettings
from engine_service.gateway.registry import sessions_for_bot
from tests.engine_service.gateway.harness import BotProcess

GAMES = [("expedition-v1", {}), ("voyages-v1", {}), ("mp2-v1", {"caravans": True}), ("dragonda-v1", {})]
CONNECT_SECONDS = 300  # a hang guard only: the wait ends when the bot connects, or at once if it exits


def wait_until_connected(runner: LocalRunner, bot: BotProcess) -> None:
    deadline = time.monotonic() + CONNECT_SECONDS
    while not sessions_for_bot(runner.registry, LOCAL_BOT_ID):
        code = bot.proc.poll()
        assert code is None, f"the bot exited with {code} before connecting:\n{bot.output()}"
        assert time.monotonic() < deadline, f"the bot did not connect:\n{bot.output()}"
        time.sleep(0.1)


@pytest.mark.timeout(3 * CONNECT_SECONDS)
@pytest.mark.parametrize(("game", "options"), GAMES, ids=[g for g, _ in GAMES])
def test_the_reference_bot_plays_every_game_without_a_fault(
    tmp_path: Path, game: str, options: dict, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="engine_service.gateway")
    settings = LocalSettings(
        game=game, options=options, port=0, house="greedy", decision_seconds=5.0, bank_seconds=60.0,
        wait=CONNECT_SECONDS, out=tmp_path,
    )  # fmt: skip  # a loaded machine may slow the bot's moves: a 60 s bank
    runner = LocalRunner(settings, say=lambda line: None).start()
    bot = BotProcess("reference", runner.target, runner.token, tmp_path)
    try:
        wait_until_connected(runner, bot)
        [record] = runner.run()
    finally:
        runner.close(final="done")
        bot.stop()
    assert record.faults == [] and record.result is not None, bot.output()
    assert record.seats[0].kind == "remote" and record.steps > 20
