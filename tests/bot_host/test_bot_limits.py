"""Limits hold for a hosted bot as a whole, not per process: its forked children share one memory budget
and one CPU quota (its control group), measured by the group's own counters. Real sandboxes (bubblewrap)
and a real gateway, as in test_escapes."""

from __future__ import annotations

import re
import time
from dataclasses import replace

import pytest

from tests.bot_host.conftest import LIMITS, HostRig, bot_archive

pytestmark = pytest.mark.slow

BOT = 5
MEMORY = 256 << 20
CHILD_MIB = 120  # three children: 360 MiB wanted, each one alone far below the bot's 256 MiB


def test_forked_children_that_each_allocate_share_the_bots_memory(rig: HostRig) -> None:
    rig.with_limits(replace(LIMITS, memory_bytes=MEMORY), ALLOC_MIB=str(CHILD_MIB))
    rig.source.add(BOT, bot_archive("fork_alloc.py"))
    assert rig.until(lambda: len(children_ended(rig.log(BOT))) == 3, timeout=120), rig.log(BOT)
    log = rig.log(BOT)
    killed = re.findall(r"^CHILD (\d) killed by signal 9$", log, flags=re.M)
    assert killed, log  # per process, each child's 120 MiB was allowed: all three held it before
    assert rig.host.running[BOT].cgroup.memory_peak_bytes() <= MEMORY
    assert rig.host.running[BOT].process.state == "running"  # the bot itself lives on


def children_ended(log: str) -> set[str]:
    """The children of fork_alloc.py that have their memory or were killed."""
    return {a or b for a, b in re.findall(r"^(?:ALLOC (\d) done|CHILD (\d) killed)", log, flags=re.M)}


def test_forked_spinners_are_held_to_the_bots_cpu_quota_together(rig: HostRig) -> None:
    cores = 0.5
    rig.with_limits(replace(LIMITS, cpu_cores=cores, cpu_seconds=600))
    began = time.monotonic()
    rig.source.add(BOT, bot_archive("fork_spin.py"))
    assert rig.until(lambda: rig.logged(BOT, "SPINNERS 3")), rig.log(BOT)
    group = rig.host.running[BOT].cgroup
    assert len(group.pids()) >= 4  # the bot and its three spinners (and bubblewrap) in one group
    assert rig.until(lambda: group.cpu_usage_ns() >= 1_000_000_000, timeout=120)
    used = group.cpu_usage_ns() / 1e9
    elapsed = time.monotonic() - began  # read after the usage: the group has lived no longer than this
    # Four spinners on two cores would use up to 2 CPU-s a second; the quota allows `cores` (and a busy
    # machine only lowers the usage, so this bound holds at any load). One period's grace for the last one.
    assert used <= cores * elapsed + 0.1, (used, elapsed)
    assert rig.host.running[BOT].process.starts == 1  # held back, never killed for it
