"""Limits hold for a hosted bot as a whole, not per process: its forked children share one memory budget
and one CPU quota (its control group), measured by the group's own counters, and a bot next to a spinner
and the demo's hostile example still plays a whole match without a fault (under deadlines a busy machine does
not reach: the group's quota is checked where it is measured, on its own counters). Each attack runs as a
Python bot (os.fork) and as a Node bot (child_process.spawn of node children). Real sandboxes (bubblewrap)
and a real gateway, as in test_escapes."""

from __future__ import annotations

import re
import time
from dataclasses import replace

import pytest

from bot_host.examples import example_archive, hostile_archive
from bot_host.sandbox import Limits
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.referee import run_match, verify
from tests.bot_host.conftest import BOTS, LIMITS, HostRig, bot_archive, make_archive, within_memory_limit
from tests.engine_service.gateway.harness import GAME, PATIENT
from tests.engine_service.gateway.test_relay import house

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("bot_limits_gateway")]  # the module's gateway, once

BOT = 5
MEMORY = 256 << 20
CHILD_MIB = 120  # three children: 360 MiB wanted, each one alone far below the bot's 256 MiB
RUNTIMES = ["python", "node"]
# A node process runs about a dozen threads (V8's and libuv's), and the process limit counts threads:
# four node processes need more than the suite's 32.
NODE_PROCESSES = 96
# Eight node children of 200 MiB (1.6 GiB) under 1.25 GiB, each alone far below it (each node process's
# address space is the limit plus the 1.5 GiB V8 reserves unused: `NODE_RESERVED_BYTES`).
NODE_MEMORY, NODE_CHILDREN, NODE_CHILD_MIB = 1280 << 20, 8, 200


def attack_archive(rig: HostRig, runtime: str, name: str) -> bytes:
    """The attack bot `name` (fork_alloc, fork_spin, ...) for `runtime`; skipped where node is missing."""
    if runtime == "python":
        return bot_archive(f"{name}.py")
    if "node" not in rig.host.runtimes:
        pytest.skip("this machine has no node runtime (node and clients/node/node_modules)")
    return make_archive({"bot.js": (BOTS / f"{name}.js").read_text()}, runtime="node", entry="bot.js")


def limits_for(runtime: str, **changes: float) -> Limits:
    processes = NODE_PROCESSES if runtime == "node" else LIMITS.processes
    return replace(LIMITS, processes=processes, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_forked_children_that_each_allocate_share_the_bots_memory(rig: HostRig, runtime: str) -> None:
    archive = attack_archive(rig, runtime, "fork_alloc")
    memory, children, mib = (
        (NODE_MEMORY, NODE_CHILDREN, NODE_CHILD_MIB) if runtime == "node" else (MEMORY, 3, CHILD_MIB)
    )
    env = {"ALLOC_MIB": str(mib), "ALLOC_CHILDREN": str(children)}
    rig.with_limits(limits_for(runtime, memory_bytes=memory), **env)
    rig.source.add(BOT, archive)
    assert rig.until(lambda: len(children_ended(rig.log(BOT))) == children), rig.log(BOT)
    log = rig.log(BOT)
    killed = re.findall(r"^CHILD (\d) killed by signal 9$", log, flags=re.M)
    assert killed, log  # per process, each child's memory was allowed: all of them held it before
    assert within_memory_limit(rig.host.running[BOT].cgroup.memory_peak_bytes(), memory)
    assert rig.host.running[BOT].process.state == "running"  # the bot itself lives on


def children_ended(log: str) -> set[str]:
    """The children of fork_alloc that have their memory or were killed."""
    return {a or b for a, b in re.findall(r"^(?:ALLOC (\d) done|CHILD (\d) killed)", log, flags=re.M)}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_forked_spinners_are_held_to_the_bots_cpu_quota_together(rig: HostRig, runtime: str) -> None:
    cores = 0.5
    archive = attack_archive(rig, runtime, "fork_spin")
    rig.with_limits(limits_for(runtime, cpu_cores=cores, cpu_seconds=600))
    began = time.monotonic()
    rig.source.add(BOT, archive)
    assert rig.until(lambda: rig.logged(BOT, "SPINNERS 3")), rig.log(BOT)
    group = rig.host.running[BOT].cgroup
    assert rig.until(lambda: len(group.pids()) >= 4)  # the bot and its three spinners in one group
    assert rig.until(lambda: group.cpu_usage_ns() >= 1_000_000_000)
    used = group.cpu_usage_ns() / 1e9
    elapsed = time.monotonic() - began  # read after the usage: the group has lived no longer than this
    # Four spinners on two cores would use up to 2 CPU-s a second; the quota allows `cores` (and a busy
    # machine only lowers the usage, so this bound holds at any load). One period's grace for the last one.
    assert used <= cores * elapsed + 0.1, (used, elapsed)
    assert rig.host.running[BOT].process.starts == 1  # held back, never killed for it


SPINNER, HOSTILE, PLAYER = 5, 6, 3


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_hosted_bot_keeps_its_clock_next_to_a_spinner_and_the_hostile_example(
    rig: HostRig, runtime: str
) -> None:
    """The spinner (of the player's runtime) and the hostile example each get their one core and the same
    weight as any bot: the player still plays its match, no fault, on a machine they would otherwise fill."""
    spinner = attack_archive(rig, runtime, "fork_spin")
    rig.with_limits(limits_for(runtime, cpu_seconds=600))  # held back, never killed for it
    rig.source.add(SPINNER, spinner)
    rig.source.add(HOSTILE, hostile_archive())
    started = rig.until(lambda: rig.logged(SPINNER, "SPINNERS 3") and rig.connected(HOSTILE), 180)
    assert started, rig.state_of(SPINNER, HOSTILE)
    rig.source.add(PLAYER, example_archive(runtime))
    assert rig.until(lambda: rig.connected(PLAYER)), rig.log(PLAYER)
    seat = RemoteSeat(str(PLAYER), f"hosted-{PLAYER}", rig.registry)
    record = run_match(GAME, 2, 93, [seat, house(94)], time_control=PATIENT)
    assert record.result is not None and record.faults == [], record.faults
    verify(record)
    for attacker in (SPINNER, HOSTILE):
        assert rig.host.running[attacker].cgroup.cpu_usage_ns() > 0
    assert rig.host.running[PLAYER].process.crashes == 0


def test_a_node_bot_plays_under_a_memory_limit_below_what_v8_reserves(rig: HostRig) -> None:
    """A process's address space is the bot's memory limit plus what its runtime reserves unused: a Node bot
    under 256 MiB starts and plays (with the address space capped at the memory limit, node aborts before
    its first line below about 750 MiB), while the group holds what it uses."""
    if "node" not in rig.host.runtimes:
        pytest.skip("this machine has no node runtime (node and clients/node/node_modules)")
    rig.with_limits(limits_for("node", memory_bytes=MEMORY))
    rig.source.add(PLAYER, example_archive("node"))
    assert rig.until(lambda: rig.connected(PLAYER)), rig.log(PLAYER)
    seat = RemoteSeat(str(PLAYER), f"hosted-{PLAYER}", rig.registry)
    record = run_match(GAME, 2, 95, [seat, house(96)], time_control=PATIENT)
    assert record.result is not None and record.faults == [], record.faults
    assert within_memory_limit(rig.host.running[PLAYER].cgroup.memory_peak_bytes(), MEMORY)
