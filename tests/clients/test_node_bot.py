"""The Node.js example bot (no Python on its path) against a real gateway, the Python SDK bot and house bots."""

from __future__ import annotations

import os
import subprocess

import pytest

from engine_service.gateway.registry import sessions_for_bot
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, run_match, verify
from engine_service.referee.match import final_ranks
from tests.engine_service.gateway.harness import (
    GAME,
    NODE_DIR,
    TOLERANT,
    WAIT,
    BotProcess,
    Stack,
    ensure_node_modules,
    wait_for,
    wait_for_bot,
)

pytestmark = pytest.mark.xdist_group("node_bot_stack")  # the module's gateway, started once


@pytest.fixture(scope="module", autouse=True)
def node_modules() -> None:
    ensure_node_modules()


def test_node_bot_plays_the_python_sdk_bot_and_a_house_bot(stack: Stack) -> None:
    node = BotProcess("node", stack.gateway.target, "tok-gamma", stack.workdir, "--seed", "9")
    python = BotProcess("random", stack.gateway.target, "tok-alpha", stack.workdir, "--seed", "2")
    try:
        wait_for_bot(stack.registry, "gamma")
        wait_for_bot(stack.registry, "alpha")
        matches = [
            (
                41,
                [
                    RemoteSeat("gamma", "node-random", stack.registry),
                    RemoteSeat("alpha", "py-random", stack.registry),
                ],
            ),
            (
                42,
                [
                    HouseSeat(make_policy("greedy", 4), "house-greedy"),
                    RemoteSeat("gamma", "node-random", stack.registry),
                ],
            ),
        ]
        for seed, seats in matches:
            record = run_match(GAME, 2, seed, seats, time_control=TOLERANT)
            state = verify(record)
            assert state.result().to_json() == record.result["game"]
            assert final_ranks(state.result().ranks, record.forfeits) == record.result["ranks"]
            assert record.faults == []
            scores = record.result["game"]["scores"]
            line = wait_for(
                lambda match_id=record.match_id: next(
                    (ln for ln in node.output().splitlines() if f"{match_id} ended" in ln), None
                ),
                what="the Node bot to hear the result",
            )
            assert f"scores {scores}".replace(" ", "") in line.replace(" ", "")
    finally:
        node.stop()
        python.stop()
    assert "connected as node-random" in node.output()


def test_node_bot_with_a_bad_token_is_refused(stack: Stack) -> None:
    node = BotProcess("node", stack.gateway.target, "bad-token", stack.workdir)
    assert node.proc.wait(WAIT) == 2
    assert "UNAUTHENTICATED" in node.output() and "not reconnecting" in node.output()


def test_node_bot_reports_the_version_the_bot_host_gives(stack: Stack) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": "/tmp", "CARAVANSERAI_BOT_VERSION": "uploaded-9"}
    command = ["node", str(NODE_DIR / "bot.js"), "--target", stack.gateway.target, "--token", "tok-gamma"]
    node = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_bot(stack.registry, "gamma")
        [session] = sessions_for_bot(stack.registry, "gamma")
        assert session.bot_version == "uploaded-9"
    finally:
        node.terminate()
        node.wait(10)
