"""The Python SDK and its example bots against a real gateway: matches through the relay, faults reported."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from engine_service.gateway.registry import sessions_for_bot
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, run_match, verify
from engine_service.referee.match import final_ranks
from tests.engine_service.gateway.harness import (
    GAME,
    SDK_PATH,
    TOLERANT,
    WAIT,
    BotProcess,
    Stack,
    wait_for,
    wait_for_bot,
)

sys.path.insert(0, str(SDK_PATH))  # the SDK as a bot author uses it (not installed into the project venv)

from caravanserai_bot import Bot, BotRefused, Client, Fault, LegalAction, Match, MatchResult
from caravanserai_bot.client import hello_version

pytestmark = pytest.mark.xdist_group("python_sdk_stack")  # the module's gateway, started once


def check_replay(record: MatchRecord) -> None:
    state = verify(record)
    assert record.result is not None
    assert state.result().to_json() == record.result["game"]
    assert final_ranks(state.result().ranks, record.forfeits) == record.result["ranks"]


def test_sdk_random_bot_and_external_greedy_bot_play_each_other(stack: Stack) -> None:
    alpha = BotProcess("random", stack.gateway.target, "tok-alpha", stack.workdir, "--seed", "3")
    beta = BotProcess("greedy", stack.gateway.target, "tok-beta", stack.workdir, "--seed", "5")
    try:
        wait_for_bot(stack.registry, "alpha")
        wait_for_bot(stack.registry, "beta")
        for seed, seats in (
            (
                31,
                [
                    RemoteSeat("beta", "py-greedy", stack.registry),
                    RemoteSeat("alpha", "py-random", stack.registry),
                ],
            ),
            (
                32,
                [
                    RemoteSeat("alpha", "py-random", stack.registry),
                    HouseSeat(make_policy("greedy", 1), "house"),
                ],
            ),
        ):
            record = run_match(GAME, 2, seed, seats, time_control=TOLERANT)
            check_replay(record)
            assert record.faults == []
            scores = record.result["game"]["scores"]
            wait_for(
                lambda match_id=record.match_id: f"{match_id} ended: rank" in alpha.output(),
                what="the bot to hear the result",
            )
            assert f"scores {scores}" in alpha.output()
    finally:
        alpha.stop()
        beta.stop()


class Recorder(Bot):
    """A bot that plays the first legal action, raises once (a crash in `decide`) and keeps what it hears."""

    name = "recorder"
    games = (GAME,)

    def __init__(self) -> None:
        self.calls = 0
        self.started: list[Match] = []
        self.ended: list[MatchResult] = []
        self.faults: list[Fault] = []

    def decide(self, observation: dict[str, Any], legal_actions: Sequence[LegalAction]) -> str:
        self.calls += 1
        assert observation["game_id"] == GAME and all(isinstance(a, LegalAction) for a in legal_actions)
        if self.calls == 2:
            raise RuntimeError("a bug in the bot")
        return legal_actions[0].id

    def on_match_start(self, match: Match) -> None:
        self.started.append(match)

    def on_match_end(self, match: Match | None, result: MatchResult) -> None:
        self.ended.append(result)

    def on_fault(self, match_id: str, fault: Fault) -> None:
        self.faults.append(fault)


def test_sdk_in_process_reports_results_and_faults(stack: Stack) -> None:
    bot = Recorder()
    client = Client(bot, stack.gateway.target, "tok-sdk", max_matches=1)
    records: list[MatchRecord] = []

    def referee() -> None:
        wait_for_bot(stack.registry, "sdk")
        seats = [
            HouseSeat(make_policy("random", 2), "house"),
            RemoteSeat("sdk", "sdk-in-tests", stack.registry),
        ]
        records.append(run_match(GAME, 2, 33, seats, time_control=TOLERANT))

    thread = threading.Thread(target=referee)
    thread.start()
    asyncio.run(asyncio.wait_for(client.play(), WAIT))
    thread.join(WAIT)
    [record] = records
    check_replay(record)
    [fault] = record.faults
    assert fault.kind == "malformed" and fault.seat == 1 and "empty action id" in fault.reason
    [match] = bot.started
    assert match.match_id == record.match_id and match.seat == 1 and match.opponents == ("house",)
    assert match.time_control == type(match.time_control)(
        TOLERANT.decision_seconds, TOLERANT.time_bank_seconds, 3
    )
    [result] = bot.ended
    assert list(result.scores) == record.result["game"]["scores"] and result.rank == record.result["ranks"][1]
    assert [f.kind for f in result.faults] == ["malformed"] and result.faults[0].step == fault.step
    assert [f.kind for f in bot.faults] == ["malformed"]


def test_sdk_bad_token_is_refused_without_retrying(stack: Stack) -> None:
    client = Client(Recorder(), stack.gateway.target, "wrong-token")
    with pytest.raises(BotRefused) as info:
        asyncio.run(asyncio.wait_for(client.play(), WAIT))
    assert info.value.code.name == "UNAUTHENTICATED" and client.connections == 1


def test_the_hello_reports_the_version_the_bot_host_gives(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CARAVANSERAI_BOT_VERSION", " uploaded-7 ")  # the host passes the uploaded version
    alpha = BotProcess("random", stack.gateway.target, "tok-alpha", stack.workdir)
    try:
        wait_for_bot(stack.registry, "alpha")
        [session] = sessions_for_bot(stack.registry, "alpha")
        assert session.bot_version == "uploaded-7"
    finally:
        alpha.stop()


def test_hello_version_is_the_bots_own_unless_the_environment_names_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bot = Recorder()
    bot.version = "3.1"
    monkeypatch.delenv("CARAVANSERAI_BOT_VERSION", raising=False)
    assert hello_version(bot) == "3.1"
    monkeypatch.setenv("CARAVANSERAI_BOT_VERSION", "   ")
    assert hello_version(bot) == "3.1"
    monkeypatch.setenv("CARAVANSERAI_BOT_VERSION", "hosted-2")
    assert hello_version(bot) == "hosted-2"
