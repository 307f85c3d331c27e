"""One control group per hosted bot: its whole process tree shares one memory, process and CPU budget.

The host creates a bot's group before the sandbox starts and removes it (killing whatever is left in it)
when the bot stops; the sandbox's first process joins the group before it executes bubblewrap
(`bot_host.launch`), so every process of the bot is counted from the start. Two backends, chosen by what the
machine offers (`detect`):

- cgroup v2 (production): the host's own group must be delegated to it (systemd `Delegate=yes`, or a
  container's writable cgroup) with the memory, pids and cpu controllers available. The host moves itself
  into a leaf `<own>/host`, so the groups of its bots, under `<own>/bots/`, never count against it; each bot
  gets memory.max, memory.swap.max 0, pids.max, cpu.max (its cores) and the same cpu.weight and io.weight
  as every other bot (a fair share under contention).
- cgroup v1 (hybrid machines): one directory per hierarchy under the host's own group
  (`<own>/caravanserai-bots/<bot>` in memory, pids, cpu, cpuacct, and blkio when mounted):
  memory.limit_in_bytes and memory.memsw.limit_in_bytes (required when the machine has swap),
  pids.max, cpu.cfs_quota_us over cpu.cfs_period_us and the same cpu.shares for every bot.

A machine that offers neither is refused (`CgroupUnavailable`, saying what is missing): the host never runs
a bot with weaker limits than it was told. Bots cannot reach any of this: their sandbox has no /sys, a
cgroup namespace of its own and no capabilities.

Layer: bot host plumbing. It writes only below the host's own control group; it must not import Django.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

CPU_PERIOD_US = 100_000
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
V2_CONTROLLERS = ("memory", "pids", "cpu")
REMOVE_SECONDS = 10.0

log = logging.getLogger("caravanserai.bot_host")


class CgroupUnavailable(RuntimeError):
    """This machine cannot give each bot its own limits (the message says what is missing)."""


@dataclass(frozen=True)
class BotLimits:
    """What one bot's whole process tree may use together."""

    memory_bytes: int
    processes: int
    cpu_cores: float

    def __post_init__(self) -> None:
        if self.memory_bytes < 1 << 20 or self.processes < 1 or not 0.01 <= self.cpu_cores <= 1024:
            raise ValueError(f"unusable bot limits: {self}")

    def cpu_quota_us(self) -> int:
        return round(self.cpu_cores * CPU_PERIOD_US)


class BotCgroup(Protocol):
    """One bot's group: where its first process writes its pid, what it has used, and its removal."""

    name: str

    def procs_files(self) -> tuple[str, ...]: ...
    def pids(self) -> set[int]: ...
    def cpu_usage_ns(self) -> int: ...
    def memory_peak_bytes(self) -> int: ...
    def remove(self) -> None: ...


class Backend(Protocol):
    name: str

    def create(self, name: str, limits: BotLimits) -> BotCgroup: ...


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _read_pids(files: Iterable[Path]) -> set[int]:
    found: set[int] = set()
    for path in files:
        with contextlib.suppress(FileNotFoundError):
            found.update(int(line) for line in path.read_text().split())
    return found


def _empty_and_remove(dirs: list[Path], kill: Callable[[], None], rmdir: Callable[[Path], None]) -> None:
    """Kill until no process is left, then remove every directory (a dying process can keep it busy). A
    group that will not go is logged and left: making a group of that name again removes it first."""
    deadline = time.monotonic() + REMOVE_SECONDS
    while True:
        kill()
        try:
            for directory in dirs:
                if directory.exists():
                    rmdir(directory)
            return
        except OSError as exc:
            if time.monotonic() > deadline:
                log.warning("the bot's group %s is left behind: %s", dirs[0], exc)
                return
        time.sleep(0.02)


def _kill_all(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@dataclass
class V2Cgroup:
    name: str
    path: Path
    rmdir: Callable[[Path], None] = os.rmdir

    def procs_files(self) -> tuple[str, ...]:
        return (str(self.path / "cgroup.procs"),)

    def pids(self) -> set[int]:
        return _read_pids([self.path / "cgroup.procs"])

    def cpu_usage_ns(self) -> int:
        for line in (self.path / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) * 1000
        return 0

    def memory_peak_bytes(self) -> int:
        peak = self.path / "memory.peak"
        return int(peak.read_text()) if peak.exists() else int((self.path / "memory.current").read_text())

    def remove(self) -> None:
        def kill() -> None:
            if (self.path / "cgroup.kill").exists():
                _write(self.path / "cgroup.kill", "1")
            _kill_all(self.pids())

        _empty_and_remove([self.path], kill, self.rmdir)


class V2:
    """cgroup v2: `own` is the host's delegated group (its directory in the cgroup2 mount)."""

    name = "cgroup v2"

    def __init__(self, own: Path, *, rmdir: Callable[[Path], None] = os.rmdir) -> None:
        self.own = own
        self.rmdir = rmdir
        self.bots = own / "bots"
        available = set((own / "cgroup.controllers").read_text().split())
        missing = [c for c in V2_CONTROLLERS if c not in available]
        if missing:
            raise CgroupUnavailable(
                f"cgroup v2 at {own} does not delegate the {', '.join(missing)} controller(s) to the host "
                "(run it with systemd's Delegate=yes or in a container with a writable cgroup)"
            )
        self.controllers = [c for c in (*V2_CONTROLLERS, "io") if c in available]
        self._take_leaf()

    def _take_leaf(self) -> None:
        """The host into `<own>/host` (no process may sit beside child groups), then the controllers on for
        the bots. Only the host itself moves: another process left in its group (outside the machine's root
        group) makes the kernel refuse the controllers, and the host is refused with it."""
        enable = " ".join(f"+{c}" for c in self.controllers)
        try:
            (self.own / "host").mkdir(exist_ok=True)
            _write(self.own / "host" / "cgroup.procs", str(os.getpid()))
            _write(self.own / "cgroup.subtree_control", enable)
            self.bots.mkdir(exist_ok=True)
            _write(self.bots / "cgroup.subtree_control", enable)
        except OSError as exc:
            raise CgroupUnavailable(f"cannot delegate cgroup v2 controllers below {self.own}: {exc}") from exc

    def create(self, name: str, limits: BotLimits) -> V2Cgroup:
        group = V2Cgroup(name, self.bots / name, self.rmdir)
        if group.path.exists():
            group.remove()  # left by a host that died: nothing of it may survive into a new bot
        group.path.mkdir()
        _write(group.path / "memory.max", str(limits.memory_bytes))
        _write(group.path / "memory.swap.max", "0")
        _write(group.path / "pids.max", str(limits.processes))
        _write(group.path / "cpu.max", f"{limits.cpu_quota_us()} {CPU_PERIOD_US}")
        _write(group.path / "cpu.weight", "100")
        if "io" in self.controllers and (group.path / "io.weight").exists():
            _write(group.path / "io.weight", "default 100")
        return group


@dataclass
class V1Cgroup:
    name: str
    dirs: dict[str, Path]  # controller -> the bot's directory in its hierarchy (shared mounts repeat)

    def _unique(self) -> list[Path]:
        return list(dict.fromkeys(self.dirs.values()))

    def procs_files(self) -> tuple[str, ...]:
        return tuple(str(d / "cgroup.procs") for d in self._unique())

    def pids(self) -> set[int]:
        return _read_pids(d / "cgroup.procs" for d in self._unique())

    def cpu_usage_ns(self) -> int:
        return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text())

    def memory_peak_bytes(self) -> int:
        return int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text())

    def remove(self) -> None:
        _empty_and_remove(self._unique(), lambda: _kill_all(self.pids()), os.rmdir)


class V1:
    """cgroup v1: `own` maps each needed controller to the host's own directory in that hierarchy."""

    name = "cgroup v1"

    def __init__(self, own: dict[str, Path], *, swap_in_use: bool) -> None:
        missing = [c for c in V1_CONTROLLERS if c not in own]
        if missing:
            raise CgroupUnavailable(f"cgroup v1 has no {', '.join(missing)} hierarchy mounted")
        self.own = own
        self.memsw = (own["memory"] / "memory.memsw.limit_in_bytes").exists()
        if swap_in_use and not self.memsw:
            raise CgroupUnavailable(
                "cgroup v1 memory has no swap accounting (memory.memsw.*) but the machine has swap: boot "
                "with swapaccount=1 or turn swap off, or a bot could use swap past its memory limit"
            )

    def create(self, name: str, limits: BotLimits) -> V1Cgroup:
        dirs = {c: path / "caravanserai-bots" / name for c, path in self.own.items()}
        group = V1Cgroup(name, dirs)
        if any(d.exists() for d in dirs.values()):
            group.remove()
        try:
            for directory in group._unique():
                directory.mkdir(parents=True)
            self._limit(dirs, limits)
        except OSError as exc:
            group.remove()
            raise CgroupUnavailable(f"cannot set up the bot's cgroup v1 groups {name}: {exc}") from exc
        return group

    def _limit(self, dirs: dict[str, Path], limits: BotLimits) -> None:
        memory = dirs["memory"]
        _write(memory / "memory.limit_in_bytes", str(limits.memory_bytes))
        if self.memsw:
            _write(memory / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        _write(dirs["pids"] / "pids.max", str(limits.processes))
        _write(dirs["cpu"] / "cpu.cfs_period_us", str(CPU_PERIOD_US))
        _write(dirs["cpu"] / "cpu.cfs_quota_us", str(limits.cpu_quota_us()))
        _write(dirs["cpu"] / "cpu.shares", "1024")
        weight = dirs.get("blkio", Path("/nonexistent")) / "blkio.bfq.weight"
        if weight.exists():
            _write(weight, "100")


@dataclass(frozen=True)
class Mount:
    point: Path
    root: str
    kind: str  # "cgroup" or "cgroup2"
    controllers: frozenset[str]


def mounts(mountinfo: str) -> list[Mount]:
    """The cgroup file systems in /proc/self/mountinfo's text."""
    found = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and tail and tail[0] in ("cgroup", "cgroup2"):
            options = set(tail[2].split(",")) if len(tail) > 2 else set()
            found.append(Mount(Path(fields[4]), fields[3], tail[0], frozenset(options)))
    return found


def own_dir(mount: Mount, group_path: str) -> Path:
    """This process's group as a directory of `mount` (its path is relative to the mount's root)."""
    relative = os.path.relpath(group_path, mount.root)
    if relative.startswith(".."):
        raise CgroupUnavailable(f"this process's group {group_path} is outside the mount at {mount.point}")
    return (mount.point / relative).resolve()


def _memberships(proc_cgroup: str) -> dict[str, str]:
    """Controller (or "" for the cgroup2 line) -> this process's group path, from /proc/self/cgroup."""
    found: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            found[name] = path
    return found


def _v1_dirs(found: list[Mount], member: dict[str, str]) -> dict[str, Path]:
    own: dict[str, Path] = {}
    for mount in found:
        if mount.kind != "cgroup":
            continue
        for controller in (*V1_CONTROLLERS, "blkio"):
            if controller in mount.controllers and controller in member:
                own[controller] = own_dir(mount, member[controller])
    return own


def detect(mountinfo: str | None = None, proc_cgroup: str | None = None, swaps: str | None = None) -> Backend:
    """The backend this machine offers (cgroup v2 with delegated controllers first, then v1); refused with
    what is missing when neither is usable."""
    mountinfo = mountinfo if mountinfo is not None else Path("/proc/self/mountinfo").read_text()
    proc_cgroup = proc_cgroup if proc_cgroup is not None else Path("/proc/self/cgroup").read_text()
    swaps = swaps if swaps is not None else Path("/proc/swaps").read_text()
    found, member = mounts(mountinfo), _memberships(proc_cgroup)
    problems = []
    for mount in found:
        if mount.kind == "cgroup2" and "" in member:
            try:
                return V2(own_dir(mount, member[""]))
            except CgroupUnavailable as exc:
                problems.append(str(exc))
    v1_dirs = _v1_dirs(found, member)
    if v1_dirs:
        try:
            return V1(v1_dirs, swap_in_use=len(swaps.strip().splitlines()) > 1)
        except CgroupUnavailable as exc:
            problems.append(str(exc))
    raise CgroupUnavailable(
        "hosted bots need a control group each (cgroup v2 with the memory, pids and cpu controllers "
        "delegated to the host, or cgroup v1 memory, pids, cpu and cpuacct hierarchies): "
        + ("; ".join(problems) or "no cgroup file system is mounted")
    )
