"""The local runner is the server in miniature: options, players, a fixed seat, several matches at once on
one stream, a wait for the bot between matches, a final Goodbye the SDK obeys, and the restart and
revocation rehearsals, each with the Python SDK as the bot.

The SDK bot answers at once, under `PATIENT` deadlines; every wait is for an event (`WAIT` at most), and a
grace is long enough for a loaded machine to bring the bot back."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from engine_service.gateway import local
from engine_service.gateway.local import LOCAL_TOKEN_PREFIX, LocalError, LocalRunner
from engine_service.referee import verify
from tests.engine_service.gateway.harness import GAME, SDK_PATH, WAIT, local_settings, wait_for

sys.path.insert(0, str(SDK_PATH))

from caravanserai_bot import Bot, BotRefused, Client, Match, MatchResult


class Counting(Bot):
    name = "counting"
    games = (GAME,)

    def __init__(self, capacity: int = 1) -> None:
        self.max_concurrent_matches = capacity
        self.open = 0
        self.most_at_once = 0
        self.lock = threading.Lock()

    def decide(self, observation: dict[str, Any], legal_actions: Any) -> str:
        return str(legal_actions[-1].id)

    def on_match_start(self, match: Match) -> None:
        with self.lock:
            self.open += 1
            self.most_at_once = max(self.most_at_once, self.open)

    def on_match_end(self, match: Match | None, result: MatchResult) -> None:
        with self.lock:
            self.open -= 1


class _Bot:
    """A Python SDK client on its own thread; `error` holds what `play()` raised."""

    def __init__(self, target: str, token: str, bot: Bot) -> None:
        self.client = Client(bot, target, token, initial_backoff=0.1, max_backoff=0.5)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.client.run()
        except BaseException as exc:
            self.error = exc


def _run(runner: LocalRunner) -> list[Any]:
    try:
        records = runner.run()
    finally:
        runner.close(final=f"played {len(runner.records)} match(es)")
    return records


def test_bad_settings_are_refused_before_anything_starts(tmp_path: Path) -> None:
    for changes, words in (
        ({"players": 9}, "2-5 players"),
        ({"seat": 2}, "--seat must be within 0-1"),
        ({"parallel": 0}, "--parallel must be at least 1"),
        ({"options": {"strategic_two_player": "maybe"}}, "strategic_two_player"),
    ):
        with pytest.raises(LocalError, match=words):
            LocalRunner(local_settings(tmp_path, **changes))


def test_a_generated_token_never_reads_as_an_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # token_urlsafe's alphabet holds '-': unprefixed, one token in 64 made `--token -x...` an argparse error
    monkeypatch.setattr(local.secrets, "token_urlsafe", lambda nbytes: "-" + "x" * (nbytes - 1))
    runner = LocalRunner(local_settings(tmp_path))
    try:
        assert runner.token.startswith(LOCAL_TOKEN_PREFIX) and not runner.token.startswith("-")
        parser = argparse.ArgumentParser()
        parser.add_argument("--token")
        assert parser.parse_args(["--token", runner.token]).token == runner.token
    finally:
        runner.close()


def test_parallel_matches_with_options_a_fixed_seat_and_a_final_goodbye(tmp_path: Path) -> None:
    lines: list[str] = []
    runner = LocalRunner(
        local_settings(
            tmp_path, matches=3, parallel=2, seat=1, players=3, options={"strategic_two_player": False}
        ),
        say=lines.append,
    ).start()
    bot = _Bot(runner.target, runner.token, Counting(capacity=2))
    records = _run(runner)
    assert len(records) == 3 and all(r.seats[1].kind == "remote" and r.num_players == 3 for r in records)
    assert all(r.faults == [] for r in records)
    for record in records:
        verify(record)
    assert bot.client.bot.most_at_once == 2  # type: ignore[attr-defined]
    bot.thread.join(WAIT)
    assert not bot.thread.is_alive() and bot.error is None  # Goodbye: the SDK stopped, no reconnecting
    assert bot.client.finished == "played 3 match(es)"
    assert sum("match " in line and "seat 1" in line for line in lines) == 3


def test_a_bot_that_comes_back_between_matches_is_waited_for(tmp_path: Path) -> None:
    runner = LocalRunner(local_settings(tmp_path, matches=2, grace=1.0), say=lambda line: None).start()
    first = Client(Counting(), runner.target, runner.token, max_matches=1)  # leaves after one match
    threading.Thread(target=first.run, daemon=True).start()
    records: list[Any] = []
    done = threading.Thread(target=lambda: records.extend(_run(runner)), daemon=True)
    done.start()
    wait_for(lambda: first.results, what="the first match")
    time.sleep(3.0)  # away for longer than the reconnect grace when the second match is due
    second = _Bot(runner.target, runner.token, Counting())
    done.join(WAIT)
    assert len(records) == 2 and all(r.faults == [] for r in records)  # no forfeit at step 0
    second.thread.join(WAIT)
    assert second.client.finished is not None


def test_rehearsed_gateway_restart_resumes_the_match(tmp_path: Path) -> None:
    lines: list[str] = []
    runner = LocalRunner(local_settings(tmp_path, restart_at_step=4, grace=WAIT), say=lines.append).start()
    bot = _Bot(runner.target, runner.token, Counting())
    [record] = _run(runner)
    assert record.faults == [] and [i["kind"] for i in record.incidents] == ["gateway_lost", "resumed"]
    assert any("restarting the gateway" in line for line in lines)
    assert bot.client.connections >= 2
    bot.thread.join(WAIT)
    assert bot.client.finished is not None


def test_rehearsed_revocation_forfeits_by_disconnect_and_plays_no_more(tmp_path: Path) -> None:
    lines: list[str] = []
    # the seat waits for the revoked bot until its deadline (it cannot come back): a short one, far from
    # what the bot's answers take
    runner = LocalRunner(
        local_settings(tmp_path, matches=2, revoke_at_step=4, decision_seconds=10.0, bank_seconds=0.0),
        say=lines.append,
    ).start()
    bot = _Bot(runner.target, runner.token, Counting())
    [record] = _run(runner)
    [fault] = [f for f in record.faults if f.seat == 0]
    assert fault.kind == "disconnect" and fault.forfeit and "revoked" in fault.reason
    assert record.result is not None and record.result["reason"] == "disconnect"
    assert any("not played (the token was revoked)" in line for line in lines)
    bot.thread.join(WAIT)
    assert isinstance(bot.error, BotRefused) and "revoked" in str(bot.error)
