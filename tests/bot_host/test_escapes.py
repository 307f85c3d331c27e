"""Hosted bots that try to get out: every attempt fails or the bot is killed, the host and another hosted
bot keep running, and the bot's own log (what its owner sees) says why. Real sandboxes (bubblewrap) and a
real gateway on a Unix-domain socket."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from tests.bot_host.conftest import LIMITS, HostRig, bot_archive

pytestmark = pytest.mark.slow

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
    assert rig.until(lambda: rig.host.running[ATTACKER].process.starts >= 2, timeout=40)
    process = rig.host.running[ATTACKER].process
    assert "CPU time limit" in process.last_exit
    assert "CPU time limit" in process.log.text()  # the owner's log says why
    report = rig.source.reports[ATTACKER]
    assert report.crashes >= 1 and "CPU time limit" in report.detail
    still_fine(rig)
    assert sample("caravanserai_hosted_bot_crashes_total") - crashes >= 1  # the operators' metrics
    assert sample("caravanserai_hosted_bot_restarts_total") - restarts >= 1
    assert sample("caravanserai_hosted_bots_running") in (1.0, 2.0)


def sandboxes_of(app_dir: Path) -> list[int]:
    """Processes still alive whose command line binds `app_dir` (bwrap and its namespace's init)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(app_dir) in (proc / "cmdline").read_bytes().decode(
                errors="replace"
            ):
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_a_sandbox_stopped_while_it_sets_up_leaves_nothing_behind(rig: HostRig) -> None:
    rig.source.add(ATTACKER, bot_archive("spin.py"))
    for _ in range(5):
        rig.host.step()  # starts it
        entry = rig.host.running[ATTACKER]
        app_dir = Path(entry.process.argv[entry.process.argv.index("/bot") - 1])
        rig.host.shutdown()  # at once, while bwrap is still making the sandbox
        deadline = time.monotonic() + 5
        while sandboxes_of(app_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sandboxes_of(app_dir) == []
