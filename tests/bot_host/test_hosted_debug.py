"""A hosted bot's stderr tied to the step it was written at: a sandboxed Python SDK bot that prints to stderr
in `decide` has each line in its decision's debug text in the record (for its owner), and the same lines in
the host's log of the bot."""

from __future__ import annotations

import pytest

from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.referee import run_match, verify
from tests.bot_host.conftest import HostRig, make_archive
from tests.engine_service.gateway.harness import GAME, PATIENT
from tests.engine_service.gateway.test_relay import house

pytestmark = pytest.mark.slow

BOT = """
import os
import sys

from caravanserai_bot import Bot, run


class Printing(Bot):
    name = "printing"

    def decide(self, observation, legal_actions):
        print(f"thinking at step {observation['step']}", file=sys.stderr, flush=True)
        return legal_actions[0].id


run(Printing(), os.environ["CARAVANSERAI_TARGET"], os.environ["CARAVANSERAI_TOKEN"])
"""


def test_a_hosted_bots_stderr_is_its_decisions_debug_text(rig: HostRig) -> None:
    rig.source.add(6, make_archive({"bot.py": BOT}))
    assert rig.until(lambda: rig.connected(6)), rig.log(6)
    record = run_match(
        GAME, 2, 73, [RemoteSeat("6", "hosted-6", rig.registry), house(74)], time_control=PATIENT
    )
    verify(record)
    steps = [step for step, (seat, _) in enumerate(record.actions) if seat == 0]
    assert record.faults == [] and sorted(record.debug) == steps
    assert all(record.debug[step] == f"thinking at step {step}" for step in steps)
    assert rig.until(lambda: rig.logged(6, f"thinking at step {steps[-1]}")), rig.log(6)  # and in its log
