"""Hosted bots that try to get out: every attempt fails or the bot is killed, the host and another hosted
bot keep running, and the bot's own log (what its owner sees) says why. Real sandboxes (bubblewrap) and a
real gateway on a Unix-domain socket."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from bot_host.examples import hostile_archive
from tests.bot_host.conftest import BOTS, LIMITS, HostRig, bot_archive, make_archive, within_memory_limit
from tests.engine_service.gateway.harness import WAIT

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("escapes_gateway")]  # the module's gateway, once

VICTIM, ATTACKER = 1, 2
PROBES = [
    "net-internet",
    "net-loopback-gateway",
    "net-abstract-unix",
    *[f"read-host-{i}" for i in range(5)],
    "read-proc-1-environ",
    "write-bot-dir",
    "write-usr",
    "write-root",
    "write-sdk",
    "write-socket-dir",
    "big-file",
    "fill-disk",
    "memory",
    "see-processes",
]


def start_victim(rig: HostRig) -> None:
    rig.source.add(VICTIM, rig.victim)
    assert rig.until(lambda: rig.connected(VICTIM)), rig.log(VICTIM)


def still_fine(rig: HostRig) -> None:
    """The other hosted bot is still connected and never restarted; the host still steps."""
    rig.host.step()
    assert rig.connected(VICTIM)
    victim = rig.host.running[VICTIM].process
    assert (victim.state, victim.starts, victim.crashes) == ("running", 1, 0)


def test_every_probe_is_blocked(rig: HostRig) -> None:
    start_victim(rig)
    rig.source.add(ATTACKER, bot_archive("prober.py"))
    assert rig.until(lambda: "PROBES DONE" in rig.log(ATTACKER) if ATTACKER in rig.host.running else False)
    log = rig.log(ATTACKER)
    assert all(Path(p).is_file() for p in rig.host.settings.extra_env["PROBE_PATHS"].split(":"))
    results = dict(re.findall(r"^PROBE (\S+) (\S+)", log, flags=re.M))
    assert set(results) == set(PROBES), log
    assert [name for name, outcome in results.items() if outcome != "blocked"] == [], log
    uid = int(re.search(r"^UID (\d+)", log, flags=re.M).group(1))  # type: ignore[union-attr]
    assert uid == rig.host.running[ATTACKER].uid >= rig.host.settings.uid_base
    assert not list(Path(rig.state_dir, "versions").rglob("planted*"))
    still_fine(rig)


HARDENING = [
    "unshare-user",
    "unshare-mount",
    "clone-user",
    "setns",
    "mount",
    "keyctl",
    "add_key",
    "io_uring_setup",
    "ptrace",
    "bpf",
    "perf_event_open",
]


def probe_results(log: str) -> dict[str, str]:
    return dict(re.findall(r"^PROBE (\S+) (.*)$", log, flags=re.M))


def pid_1_is_hidden(log: str) -> None:
    """PID 1 of the sandbox is bubblewrap, whose command line names the host's paths: it cannot be read."""
    [seen] = re.findall(r"^PID1 (.*)$", log, flags=re.M)
    assert seen == "unreadable FileNotFoundError" or seen == "unreadable ENOENT", log


def test_namespaces_mounts_keyrings_io_uring_ptrace_bpf_and_perf_are_refused(rig: HostRig) -> None:
    start_victim(rig)
    rig.source.add(ATTACKER, bot_archive("hardening.py"))
    assert rig.until(lambda: rig.logged(ATTACKER, "PROBES DONE")), rig.log(ATTACKER)
    log = rig.log(ATTACKER)
    results = probe_results(log)
    assert set(results) == set(HARDENING), log
    assert {name: outcome for name, outcome in results.items() if outcome != "blocked EPERM"} == {}, log
    pid_1_is_hidden(log)
    still_fine(rig)


def node_archive(rig: HostRig, script: str, **extra: str) -> bytes:
    """The Node attack bot `script` (with `extra` files beside it); skipped where node is missing."""
    if "node" not in rig.host.runtimes:
        pytest.skip("this machine has no node runtime (node and clients/node/node_modules)")
    files = {"bot.js": (BOTS / script).read_text(), **extra}
    return make_archive(files, runtime="node", entry="bot.js")


# What a Node bot can reach: Node has no raw system calls, so it goes through the tools the sandbox shows
# under /usr (util-linux's unshare and mount; the system's python3, which runs hardening.py and so makes
# every call of HARDENING) and through libuv's io_uring (UV_USE_IO_URING=1 in a child node).
NODE_HARDENING = {
    "unshare-user": "Operation not permitted",
    "unshare-mount": "Operation not permitted",
    "mount": "must be superuser",  # util-linux refuses a non-root caller before the kernel is asked
    "libuv-io_uring": "no ring",
    **{f"py-{name}": "EPERM" for name in HARDENING},
}


def test_a_node_bot_reaches_no_namespace_mount_keyring_or_io_uring_by_any_way_node_has(rig: HostRig) -> None:
    start_victim(rig)
    hardening_py = (BOTS / "hardening.py").read_text()
    rig.source.add(ATTACKER, node_archive(rig, "hardening.js", **{"hardening.py": hardening_py}))
    assert rig.until(lambda: rig.logged(ATTACKER, "PROBES DONE")), rig.log(ATTACKER)
    log = rig.log(ATTACKER)
    results = probe_results(log)
    assert set(results) == set(NODE_HARDENING), log
    wrong = {
        name: outcome
        for name, outcome in results.items()
        if not (outcome.startswith("blocked") and NODE_HARDENING[name] in outcome)
    }
    assert wrong == {}, log
    pid_1_is_hidden(log)
    still_fine(rig)


def test_a_node_fork_bomb_is_refused_and_the_others_keep_running(rig: HostRig) -> None:
    start_victim(rig)
    rig.source.add(ATTACKER, node_archive(rig, "fork_bomb.js"))
    assert rig.until(lambda: rig.logged(ATTACKER, "FORK refused")), rig.log(ATTACKER)
    children = int(re.search(r"FORK refused after (\d+)", rig.log(ATTACKER)).group(1))  # type: ignore[union-attr]
    assert children < LIMITS.processes  # node's own threads count too
    assert rig.host.running[ATTACKER].process.starts == 1  # the node bot lived through the refusal
    still_fine(rig)


def test_a_node_bot_printing_nul_invalid_utf8_and_a_surrogate_is_reported_cleaned(rig: HostRig) -> None:
    """Through the real sandbox to the host's report (the PostgreSQL path of the same cleaning is
    test_host_isolation's)."""
    start_victim(rig)
    rig.source.add(ATTACKER, node_archive(rig, "nul_output.js"))
    assert rig.until(lambda: " end" in getattr(rig.source.reports.get(ATTACKER), "log", "")), rig.log(
        ATTACKER
    )
    log = rig.source.reports[ATTACKER].log
    assert "nul\ufffdhere \ufffd\ufffd sur \ufffd" in log and "\x00" not in log, log
    log.encode("utf-8")  # no lone surrogate either: it encodes strictly
    still_fine(rig)


def test_a_fork_bomb_is_refused_and_the_others_keep_running(rig: HostRig) -> None:
    start_victim(rig)
    rig.source.add(ATTACKER, bot_archive("fork_bomb.py"))
    assert rig.until(lambda: "FORK refused" in rig.log(ATTACKER) if ATTACKER in rig.host.running else False)
    children = int(re.search(r"FORK refused after (\d+)", rig.log(ATTACKER)).group(1))  # type: ignore[union-attr]
    assert children < LIMITS.processes
    still_fine(rig)
    unpacked = rig.state_dir / "versions" / rig.source.wanted.pop(ATTACKER).sha256
    assert unpacked.is_dir()
    rig.host.step()
    assert rig.source.reports[ATTACKER].state == "stopped"
    assert not unpacked.exists()  # a version no longer run leaves no files behind
    still_fine(rig)


def sample(name: str) -> float:
    return REGISTRY.get_sample_value(name, {"runtime": "python"}) or 0.0


def test_a_spinning_bot_is_killed_at_its_cpu_limit_and_restarted(rig: HostRig) -> None:
    start_victim(rig)
    crashes, restarts = (
        sample("caravanserai_hosted_bot_crashes_total"),
        sample("caravanserai_hosted_bot_restarts_total"),
    )
    rig.source.add(ATTACKER, bot_archive("spin.py"))
    # 3 CPU-s at a busy machine's share of a core take a while
    assert rig.until(lambda: rig.host.running[ATTACKER].process.starts >= 2, timeout=2 * WAIT)
    process = rig.host.running[ATTACKER].process
    assert "CPU time limit" in process.last_exit
    assert "CPU time limit" in process.log.text()  # the owner's log says why
    report = rig.source.reports[ATTACKER]
    assert report.crashes >= 1 and "CPU time limit" in report.detail
    still_fine(rig)
    assert sample("caravanserai_hosted_bot_crashes_total") - crashes >= 1  # the operators' metrics
    assert sample("caravanserai_hosted_bot_restarts_total") - restarts >= 1
    assert sample("caravanserai_hosted_bots_running") in (1.0, 2.0)


def alive(pids: set[int]) -> set[int]:
    """The processes of `pids` that still exist and are not zombies."""
    found = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.add(pid)
    return found


def test_a_sandbox_stopped_while_it_sets_up_leaves_nothing_behind(rig: HostRig) -> None:
    rig.source.add(ATTACKER, bot_archive("fork_spin.py"))
    for _ in range(5):
        rig.host.step()  # starts it
        entry = rig.host.running[ATTACKER]
        seen = entry.cgroup.pids() | {entry.process.pid or 0}  # the launcher or bwrap and its namespace's
        dirs = [Path(p).parent for p in entry.cgroup.procs_files()]
        rig.host.shutdown()  # at once, while bwrap is still making the sandbox
        assert not any(d.exists() for d in dirs)  # its groups are gone: nothing was left in them
        assert alive(seen) == set()
        assert ATTACKER not in rig.host.running


HOSTILE_LINE = re.compile(
    r"^HOSTILE forked (\d+) sleepers before the limit; \d+ children; spinner died (\d+), "
    r"allocator killed (\d+), allocator let go \d+, fork refused \d+$",
    flags=re.M,
)


def hostile_figures(log: str) -> tuple[int, int, int]:
    """The last report of the hostile example: sleepers forked to the limit, spinners and allocators lost."""
    found = HOSTILE_LINE.findall(log)
    return tuple(int(n) for n in found[-1]) if found else (0, 0, 0)  # type: ignore[return-value]


def test_the_demos_hostile_example_spins_forks_and_allocates_within_its_limits_and_connects(
    rig: HostRig,
) -> None:
    cores = 0.5
    rig.with_limits(replace(LIMITS, cpu_cores=cores), HOSTILE_REPORT_SECONDS="1")
    start_victim(rig)
    began = time.monotonic()
    rig.source.add(ATTACKER, hostile_archive())
    group = rig.host.running[ATTACKER].cgroup if rig.until(lambda: ATTACKER in rig.host.running) else None
    assert group is not None
    assert rig.until(lambda: rig.connected(ATTACKER)), rig.log(ATTACKER)
    # its spinners get a share of half a core on a busy machine: 3 CPU-s to lose one take a while
    done = rig.until(lambda: min(hostile_figures(rig.log(ATTACKER))) >= 1, timeout=2 * WAIT)
    assert done, rig.log(ATTACKER)  # it reached its process limit, lost a spinner (3 s CPU) and an allocator
    sleepers, _spinners, _killed = hostile_figures(rig.log(ATTACKER))
    print(HOSTILE_LINE.findall(rig.log(ATTACKER))[-1], f"peak {group.memory_peak_bytes() >> 20} MiB")
    assert sleepers < LIMITS.processes
    assert within_memory_limit(group.memory_peak_bytes(), LIMITS.memory_bytes)
    used = group.cpu_usage_ns() / 1e9
    assert used <= cores * (time.monotonic() - began) + 0.1, used
    assert rig.connected(ATTACKER)  # and it still plays (its main process was never the one killed)
    assert rig.host.running[ATTACKER].process.starts == 1
    still_fine(rig)
