"""The control-group backends and the host's refusal without them. cgroup v1 is tested for real on
machines that offer it (a hybrid machine); the v2 backend writes into a fake cgroup tree in a temporary
folder, with every file it writes checked, since a real v2 tree with controllers may not be at hand; and
`python -m bot_host` refuses a machine without control groups, the filter or a bubblewrap that loads it."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import bot_host.__main__ as entry
from bot_host.cgroups import V1, V2, BotLimits, CgroupUnavailable, V1Cgroup, V2Cgroup, detect
from bot_host.seccomp_filter import SeccompUnavailable

LIMITS = BotLimits(memory_bytes=256 << 20, processes=40, cpu_cores=0.5)
NO_SWAP = "Filename\tType\tSize\tUsed\tPriority\n"
SWAP = NO_SWAP + "/swapfile file 1048572 0 -2\n"


def fake_v2(tmp_path: Path) -> Path:
    own = tmp_path / "cg" / "svc"
    own.mkdir(parents=True)
    (own / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (own / "cgroup.procs").write_text(f"{os.getpid()}\n")
    return own


def test_the_v2_backend_writes_the_host_leaf_the_controllers_and_each_bots_limits(tmp_path: Path) -> None:
    own = fake_v2(tmp_path)
    backend = V2(own, rmdir=shutil.rmtree)
    assert (own / "host" / "cgroup.procs").read_text() == str(os.getpid())
    assert (own / "cgroup.subtree_control").read_text() == "+memory +pids +cpu +io"
    assert (own / "bots" / "cgroup.subtree_control").read_text() == "+memory +pids +cpu +io"
    group = backend.create("bot-62001", LIMITS)
    path = own / "bots" / "bot-62001"
    written = {p.name: p.read_text() for p in path.iterdir()}
    assert written == {
        "memory.max": str(256 << 20),
        "memory.swap.max": "0",
        "pids.max": "40",
        "cpu.max": "50000 100000",
        "cpu.weight": "100",
    }
    assert group.procs_files() == (str(path / "cgroup.procs"),)
    (path / "cpu.stat").write_text("usage_usec 1500\nuser_usec 1000\n")
    assert group.cpu_usage_ns() == 1_500_000
    group.remove()
    assert not path.exists()


def test_a_v2_group_left_by_a_dead_host_is_removed_before_it_is_made_again(tmp_path: Path) -> None:
    backend = V2(fake_v2(tmp_path), rmdir=shutil.rmtree)
    stale = backend.bots / "bot-62002"
    stale.mkdir()
    (stale / "stale-file").write_text("left")
    backend.create("bot-62002", LIMITS)
    assert not (stale / "stale-file").exists() and (stale / "pids.max").read_text() == "40"


def test_v2_without_delegated_controllers_is_refused_naming_them(tmp_path: Path) -> None:
    own = fake_v2(tmp_path)
    (own / "cgroup.controllers").write_text("cpu io\n")
    with pytest.raises(CgroupUnavailable, match="memory, pids controller"):
        V2(own)
    assert not (own / "host").exists()  # nothing moved, nothing written


def mountinfo(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def test_detect_prefers_v2_then_v1_and_refuses_a_machine_with_neither(tmp_path: Path) -> None:
    fake_v2(tmp_path)
    v2_line = f"41 31 0:38 / {tmp_path / 'cg'} rw,relatime - cgroup2 cgroup2 rw"
    assert isinstance(detect(mountinfo(v2_line), "0::/svc\n", NO_SWAP), V2)
    v1 = tmp_path / "v1"
    lines = []
    for n, controller in enumerate(("memory", "pids", "cpu", "cpuacct")):
        (v1 / controller).mkdir(parents=True)
        lines.append(f"{32 + n} 31 0:{29 + n} / {v1 / controller} rw - cgroup cgroup rw,{controller}")
    (v1 / "memory" / "memory.memsw.limit_in_bytes").write_text("0")
    unified = f"41 31 0:38 / {tmp_path / 'empty'} rw - cgroup2 cgroup2 rw"
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "cgroup.controllers").write_text("\n")  # a hybrid machine's cgroup2: no controllers
    member = "8:pids:/\n4:memory:/\n2:cpuacct:/\n1:cpu:/\n0::/\n"
    backend = detect(mountinfo(*lines, unified), member, SWAP)
    assert isinstance(backend, V1) and backend.memsw
    (v1 / "memory" / "memory.memsw.limit_in_bytes").unlink()
    with pytest.raises(CgroupUnavailable, match="swap accounting"):
        detect(mountinfo(*lines, unified), member, SWAP)
    assert isinstance(detect(mountinfo(*lines), member, NO_SWAP), V1)  # no swap: none to account
    with pytest.raises(CgroupUnavailable, match="no cgroup file system"):
        detect(mountinfo("22 1 0:5 / /proc rw - proc proc rw"), "0::/\n", NO_SWAP)


def limit_values(group: V1Cgroup | V2Cgroup) -> dict[str, str]:
    if isinstance(group, V2Cgroup):
        files = ["memory.max", "memory.swap.max", "pids.max", "cpu.max"]
        return {name: (group.path / name).read_text().strip() for name in files}
    memory, pids, cpu = group.dirs["memory"], group.dirs["pids"], group.dirs["cpu"]
    return {
        "memory": (memory / "memory.limit_in_bytes").read_text().strip(),
        "pids": (pids / "pids.max").read_text().strip(),
        "cpu": (cpu / "cpu.cfs_quota_us").read_text().strip(),
    }


def test_this_machines_backend_limits_a_real_process_tree_and_removes_it() -> None:
    backend = detect()
    group = backend.create(f"test-{os.getpid()}", LIMITS)
    assert isinstance(group, V1Cgroup | V2Cgroup)
    join = 'for f; do echo $$ > "$f"; done; /bin/sleep 600 & exec /bin/sleep 600'
    sleeper = subprocess.Popen(["/bin/sh", "-c", join, "sh", *group.procs_files()])
    try:
        expected = (
            {
                "memory.max": str(256 << 20),
                "memory.swap.max": "0",
                "pids.max": "40",
                "cpu.max": "50000 100000",
            }
            if isinstance(group, V2Cgroup)
            else {"memory": str(256 << 20), "pids": "40", "cpu": "50000"}
        )
        assert limit_values(group) == expected
        while len(group.pids()) < 2:  # the shell (now sleep) and its child, both counted
            assert sleeper.poll() is None
            time.sleep(0.01)
        assert sleeper.pid in group.pids()
    finally:
        group.remove()  # kills whatever is in it
    assert sleeper.wait(30) == -9
    assert not any(Path(p).parent.exists() for p in group.procs_files())


def test_the_host_refuses_a_machine_without_control_groups(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def none() -> None:
        raise CgroupUnavailable("hosted bots need a control group each: no cgroup file system is mounted")

    monkeypatch.setattr(entry, "detect", none)
    assert entry.main([]) == 2
    err = capsys.readouterr().err
    assert "this machine cannot host bots" in err and "no cgroup file system" in err


def test_the_host_refuses_without_the_filter_or_a_bubblewrap_that_loads_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    old = tmp_path / "bwrap"
    old.write_text("#!/bin/sh\necho 'usage: bwrap [OPTIONS...] [--] COMMAND'\n")
    old.chmod(0o755)
    with pytest.raises(entry.HostingRefused, match="no --seccomp"):
        entry.check_machine(str(old))

    def no_library() -> None:
        raise SeccompUnavailable("the hosted bots' system-call filter needs libseccomp")

    monkeypatch.setattr(entry, "bot_filter", no_library)
    with pytest.raises(entry.HostingRefused, match="needs libseccomp"):
        entry.check_machine("/usr/bin/bwrap")


def test_the_demo_skips_hosting_where_the_machine_check_refuses(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`python -m bot_host --check`, in a process of its own, is what the demo asks before it hosts bots."""
    from bot_host.demo import hosting_possible

    assert hosting_possible() == ""  # this machine (root, cgroups, libseccomp, bubblewrap) can
    old = tmp_path / "bwrap"
    old.write_text("#!/bin/sh\necho 'usage: bwrap [OPTIONS...] [--] COMMAND'\n")
    old.chmod(0o755)
    monkeypatch.setenv("CARAVANSERAI_BOT_HOST_SANDBOX", str(old))
    assert "no --seccomp" in hosting_possible()
