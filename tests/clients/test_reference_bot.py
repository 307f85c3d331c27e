"""The example bot written from the games' references alone (clients/python/examples/reference_bot.py)
plays a full match of every game through the local runner, the server in miniature, against the greedy
house bot: no fault and every record verified (the runner re-checks each record as the ladder does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_service.gateway.local import LocalRunner, LocalSettings
from tests.engine_service.gateway.harness import BotProcess

GAMES = [("expedition-v1", {}), ("voyages-v1", {}), ("mp2-v1", {"caravans": True}), ("dragonda-v1", {})]


@pytest.mark.parametrize(("game", "options"), GAMES, ids=[g for g, _ in GAMES])
def test_the_reference_bot_plays_every_game_without_a_fault(tmp_path: Path, game: str, options: dict) -> None:
    settings = LocalSettings(
        game=game, options=options, port=0, house="greedy", decision_seconds=5.0, bank_seconds=60.0,
        wait=120.0, out=tmp_path,
    )  # fmt: skip  # a loaded machine may slow the bot's start and its moves: the wait ends when it connects
    runner = LocalRunner(settings, say=lambda line: None).start()
    bot = BotProcess("reference", runner.target, runner.token, tmp_path)
    try:
        [record] = runner.run()
    finally:
        runner.close(final="done")
        bot.stop()
    assert record.faults == [] and record.result is not None
    assert record.seats[0].kind == "remote" and record.steps > 20
