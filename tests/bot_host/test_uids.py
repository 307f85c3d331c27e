"""Uids for hosted bots are unique on the machine: handed out under one lock that every host takes, never
while a process of the uid lives or a live host holds it, and only after its keyrings and temporary files
are cleared. Real processes under real uids (as root), the pool's lock directory in a temporary folder."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import time
from dataclasses import replace
from multiprocessing.queues import Queue
from pathlib import Path

import pyseccomp
import pytest

from bot_host.host import BotHost, HostSettings
from bot_host.uids import (
    HELPER_PYTHONS,
    SETPRIV,
    UidError,
    UidPool,
    _keyctl_number,
    _start_time,
    uids_in_use,
)
from tests.bot_host.conftest import FakeSource, HostRig, example_archive
from tests.bot_host.uid_hosts import allocate_many
from tests.engine_service.gateway.harness import WAIT

FIRST = 64000


def as_uid(uid: int, *command: str) -> list[str]:
    return [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *command]


def running_as(uid: int, seconds: float = WAIT) -> None:
    deadline = time.monotonic() + seconds
    while uid not in uids_in_use():
        assert time.monotonic() < deadline, f"no process runs as uid {uid} after {seconds:g}s"
        time.sleep(0.01)


def test_hosts_allocating_at_once_never_get_the_same_uid(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    got: Queue[list[int]] = context.Queue()
    barrier = context.Barrier(6)
    hosts = [(str(tmp_path), FIRST, got, barrier, WAIT) for _ in range(6)]
    workers = [context.Process(target=allocate_many, args=args) for args in hosts]
    for worker in workers:
        worker.start()
    uids = [uid for _ in workers for uid in got.get(timeout=WAIT)]
    for worker in workers:
        worker.join(WAIT)
    assert len(uids) == 24 and len(set(uids)) == 24
    assert all(FIRST <= uid < FIRST + 40 for uid in uids)


def test_a_uid_is_not_handed_out_while_a_process_of_it_lives(tmp_path: Path) -> None:
    pool = UidPool(FIRST + 100, 2, directory=tmp_path, temp_dirs=())
    survivor = subprocess.Popen(as_uid(FIRST + 100, "/bin/sleep", "600"))
    try:
        running_as(FIRST + 100)  # setpriv has switched to the uid (until then the process is root's)
        assert pool.allocate() == FIRST + 101  # FIRST + 100 still has a process (no host holds it)
        with pytest.raises(UidError, match="in use"):
            pool.allocate()
    finally:
        survivor.send_signal(signal.SIGKILL)
        survivor.wait()
    assert pool.allocate() == FIRST + 100


def test_a_live_hosts_lease_is_kept_and_a_dead_hosts_lease_is_taken_over(tmp_path: Path) -> None:
    other = subprocess.Popen(["/bin/sleep", "600"])  # another host, alive
    try:
        (tmp_path / str(FIRST + 200)).write_text(f"{other.pid} {_start_time(other.pid)}\n")
        (tmp_path / str(FIRST + 201)).write_text("999999999 12345\n")  # a host that died
        pool = UidPool(FIRST + 200, 2, directory=tmp_path, temp_dirs=())
        assert pool.allocate() == FIRST + 201
        pool.release(FIRST + 200)  # not ours: nothing happens
        assert (tmp_path / str(FIRST + 200)).read_text().startswith(str(other.pid))
    finally:
        other.kill()
        other.wait()


def keyring_bytes(uid: int) -> int:
    """The size of the uid's user keyring's list of keys (KEYCTL_READ with no buffer), read as the uid."""
    script = "import ctypes,sys; print(ctypes.CDLL(None).syscall(int(sys.argv[1]), 11, -4, None, 0))"
    python = next(p for p in HELPER_PYTHONS if os.access(p, os.X_OK))
    done = subprocess.run(
        as_uid(uid, python, "-I", "-S", "-c", script, str(_keyctl_number())),
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def test_a_uid_is_handed_out_with_its_keyrings_and_temporary_files_cleared(tmp_path: Path) -> None:
    uid = FIRST + 300
    python = next(p for p in HELPER_PYTHONS if os.access(p, os.X_OK))
    add = "import ctypes,sys; ctypes.CDLL(None).syscall(int(sys.argv[1]), b'user', b'left', b'secret', 6, -4)"
    number = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, "add_key")
    subprocess.run(as_uid(uid, python, "-I", "-S", "-c", add, str(number)), check=True)
    assert keyring_bytes(uid) > 0  # a key left in the user keyring, as a bot before the filter could
    temp = tmp_path / "tmp"
    temp.mkdir()
    (temp / "left-behind").write_text("data for the next bot")
    os.chown(temp / "left-behind", uid, uid)
    (temp / "not-its").write_text("root's")
    pool = UidPool(uid, 1, directory=tmp_path / "uids", temp_dirs=(str(temp),))
    assert pool.allocate() == uid
    assert keyring_bytes(uid) == 0
    assert sorted(p.name for p in temp.iterdir()) == ["not-its"]


def test_two_bot_hosts_on_one_machine_run_their_bots_under_different_uids(rig: HostRig) -> None:
    rig.source.add(1, example_archive())
    assert rig.until(lambda: rig.connected(1)), rig.log(1)
    other_source = FakeSource()
    settings: HostSettings = replace(
        rig.host.settings, host_id="other-host", state_dir=rig.state_dir / "other"
    )
    other = BotHost(settings, other_source, rig.host.runtimes)  # same uid range, same machine-wide lock
    try:
        other_source.add(2, example_archive())
        other.step()
        assert rig.host.running[1].uid != other.running[2].uid
        assert {rig.host.running[1].uid, other.running[2].uid} <= set(range(settings.uid_base, 63000))
    finally:
        other.shutdown()
