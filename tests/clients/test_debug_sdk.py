"""The SDKs' debug texts: Python's `self.debug(...)` and Node's `this.debug(...)` inside a decision, and what
the decision writes to stderr meanwhile (in order, still on stderr too), reach the referee's record for that
step (through a real gateway); texts of overlapping decisions never mix, and a call outside a decision is
only logged."""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, run_match, verify
from tests.engine_service.gateway.harness import (
    GAME,
    SDK_PATH,
    TOLERANT,
    WAIT,
    BotProcess,
    Stack,
    ensure_node_modules,
    wait_for_bot,
)

sys.path.insert(0, str(SDK_PATH))  # the SDK as a bot author uses it (not installed into the project venv)

from caravanserai_bot import Bot, Client, LegalAction
from caravanserai_bot.bot import Request, decide_explained

pytestmark = pytest.mark.xdist_group("debug_sdk_stack")  # the module's gateway, started once


class Explaining(Bot):
    """Plays the first legal action and explains it in two calls; raises (and explains why) once."""

    name = "explaining"
    games = (GAME,)
    max_concurrent_matches = 2

    def __init__(self) -> None:
        # Two matches decide in two threads at once: next() hands each call its own number, where `+= 1` races.
        self.calls = itertools.count(1)

    def decide(self, observation: dict[str, Any], legal_actions: Sequence[LegalAction]) -> str:
        call = next(self.calls)
        self.debug("step", observation["step"], "of", observation["game_id"])
        print("stderr says", observation["step"], file=sys.stderr)
        self.debug(f"{len(legal_actions)} legal")
        if call == 3:
            self.debug("about to fail")
            raise RuntimeError("a bug in the bot")
        return legal_actions[0].id


def _seat_steps(record: MatchRecord, seat: int) -> list[int]:
    return [step for step, (who, _) in enumerate(record.actions) if who == seat]


def test_python_sdk_debug_texts_reach_the_record_by_step(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    bot = Explaining()
    with caplog.at_level(logging.INFO, logger="caravanserai_bot"):
        bot.debug("not in a decision")
    assert "debug() outside a decision (not sent): not in a decision" in caplog.text
    client = Client(bot, stack.gateway.target, "tok-sdk", max_matches=2)
    records: list[MatchRecord] = []

    def referee(seed: int) -> None:
        seats = [HouseSeat(make_policy("random", seed), "house"), RemoteSeat("sdk", "sdk", stack.registry)]
        records.append(run_match(GAME, 2, seed, seats, time_control=TOLERANT))

    def both() -> None:
        wait_for_bot(stack.registry, "sdk")
        threads = [threading.Thread(target=referee, args=(seed,)) for seed in (51, 52)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)

    thread = threading.Thread(target=both)
    thread.start()
    asyncio.run(asyncio.wait_for(client.play(), 2 * WAIT))
    thread.join(WAIT)
    assert len(records) == 2
    for record in records:
        verify(record)
        steps = _seat_steps(record, 1)
        assert sorted(record.debug) == steps  # every answer of the SDK seat, none of the house seat's
        for step in steps:
            lines = record.debug[step].split("\n")
            assert lines[:2] == [f"step {step} of {GAME}", f"stderr says {step}"]  # in order, never mixed
            assert lines[2].endswith(" legal")
    [failed] = [f for r in records for f in r.faults]
    failing = next(r for r in records if r.faults)
    assert failed.kind == "malformed" and failing.debug[failed.step].endswith("\nabout to fail")


def test_node_bot_debug_texts_reach_the_record_by_step(stack: Stack) -> None:
    ensure_node_modules()
    node = BotProcess("node", stack.gateway.target, "tok-gamma", stack.workdir, "--explain", "--seed", "4")
    try:
        wait_for_bot(stack.registry, "gamma")
        seats = [RemoteSeat("gamma", "node-random", stack.registry), HouseSeat(make_policy("random", 5), "h")]
        record = run_match(GAME, 2, 61, seats, time_control=TOLERANT)
    finally:
        node.stop()
    verify(record)
    steps = _seat_steps(record, 0)
    assert record.faults == [] and sorted(record.debug) == steps
    for step in steps:
        first, second = record.debug[step].split("\n")
        assert first.startswith("random: action ") and first.endswith(f"at step {step}")
        assert second.startswith("considered ") and second.endswith(" actions")  # its console.error
    assert "considered " in node.output()  # still written to stderr (a hosted bot's log)


class Quiet(Bot):
    """Writes to stderr but keeps it out of its debug text."""

    debug_stderr = False

    def decide(self, observation: dict[str, Any], legal_actions: Sequence[LegalAction]) -> str:
        print("only on stderr", file=sys.stderr)
        self.debug("said")
        return legal_actions[0].id


def test_a_bot_may_keep_its_stderr_out_of_the_debug_text(capsys: pytest.CaptureFixture[str]) -> None:
    request = Request(None, "m", "m:0", 0, {"step": 0, "game_id": GAME}, (LegalAction("a", "k"),), 1.0, 1.0)
    assert decide_explained(Quiet(), request) == ("a", "said", None)
    assert decide_explained(Explaining(), request) == ("a", f"step 0 of {GAME}\nstderr says 0\n1 legal", None)
    err = capsys.readouterr().err
    assert "only on stderr" in err and "stderr says 0" in err  # both still reach stderr
