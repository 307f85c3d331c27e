"""CPU and memory of running processes, read from Linux's /proc, for the benches that run a process stack.

`Meter` follows named process trees (a process and its live descendants) between `start()` and `stop()` (or
over a `with` block): CPU seconds (utime + stime of every live process in the tree, plus cutime + cstime for
its reaped children), the peak of the tree's summed resident memory (sampled by a background thread), and
how busy the whole machine was. Reads only; Linux only.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (field 3 onwards), None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()


def descendants(root: int) -> list[int]:
    """`root` and every live process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def cpu_seconds(pids: Iterable[int]) -> float:
    """utime + stime + cutime + cstime of each process, in seconds."""
    total = 0
    for pid in pids:
        if (fields := _stat(pid)) is not None:
            total += sum(int(v) for v in fields[11:15])
    return total / TICK


def rss_bytes(pids: Iterable[int]) -> int:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    return total


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values) - idle, sum(values)


@dataclass
class _Tree:
    root: int
    cpu_at_start: float = 0.0
    cpu: float = 0.0
    rss_peak: int = 0


class Meter:
    """CPU and peak memory of named process trees over one measured window (`with Meter(...) as m:`)."""

    def __init__(self, roots: dict[str, list[int]], interval: float = 0.5) -> None:
        self.groups = {name: [_Tree(pid) for pid in pids] for name, pids in roots.items()}
        self.interval = interval
        self.wall = 0.0
        self.machine_busy = 0.0  # the fraction of all cores' time spent busy over the window
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample_loop, name="meter", daemon=True)

    def __enter__(self) -> Meter:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        for tree in self._trees():
            tree.cpu_at_start = cpu_seconds(descendants(tree.root))
        self._machine = machine_jiffies()
        self._started = time.perf_counter()
        self._thread.start()

    def stop(self) -> None:
        self.wall = time.perf_counter() - self._started
        busy, total = machine_jiffies()
        self.machine_busy = (busy - self._machine[0]) / max(1, total - self._machine[1])
        self._stop.set()
        self._thread.join()
        for tree in self._trees():
            tree.cpu = cpu_seconds(descendants(tree.root)) - tree.cpu_at_start

    def _trees(self) -> list[_Tree]:
        return [tree for trees in self.groups.values() for tree in trees]

    def _sample_loop(self) -> None:
        while not self._stop.wait(self.interval):
            for tree in self._trees():
                pids = descendants(tree.root)
                tree.rss_peak = max(tree.rss_peak, rss_bytes(pids))

    def report(self) -> dict[str, dict[str, float]]:
        """Per name: CPU seconds, CPU per wall second, and peak RSS (MB) summed over its trees (each tree's
        own peak, so an upper bound for several trees)."""
        out = {}
        for name, trees in self.groups.items():
            cpu = sum(t.cpu for t in trees)
            out[name] = {
                "processes": len(trees),
                "cpu_seconds": cpu,
                "cpu_per_wall_second": cpu / self.wall if self.wall else 0.0,
                "rss_peak_mb": sum(t.rss_peak for t in trees) / 2**20,
            }
        return out
