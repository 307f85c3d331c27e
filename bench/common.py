"""Helpers shared by the benchmarks: percentiles, 95% intervals of seeded series, seat rotations, a results
writer (which records the machine's load averages at the benchmark's start and end), table printing and a
module loaded as it was at a git revision (a bench's baseline)."""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"
ROOT = Path(__file__).resolve().parent.parent


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a share of `successes` in `n` (ties may count a half)."""
    if n == 0:
        return (0.0, 0.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], z: float = 1.96) -> tuple[float, float]:
    """The 95% normal interval of the mean of `values` (a point when there are fewer than two)."""
    if len(values) < 2:
        mean = statistics.fmean(values) if values else 0.0
        return (mean, mean)
    mean = statistics.fmean(values)
    half = z * statistics.stdev(values) / math.sqrt(len(values))
    return (mean - half, mean + half)


def rotations(lineup: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every seat rotation of a lineup, the lineup itself first."""
    return [lineup[i:] + lineup[:i] for i in range(len(lineup))]


def load_average() -> list[float]:
    """The machine's 1-, 5- and 15-minute load averages: other work on a shared machine moves every figure."""
    return [round(x, 2) for x in os.getloadavg()]


_load_at_start = load_average()


def mark_start() -> None:
    """A benchmark begins now: its results give the load average from here (`python -m bench` calls it
    before each module; importing this module counts as the start of a lone benchmark)."""
    global _load_at_start
    _load_at_start = load_average()


def write_results(name: str, data: dict[str, Any]) -> Path:
    """Write `data` as `results/<name>.json` with when it was measured and on what: Python, CPUs, and the
    machine's 1, 5 and 15-minute load averages when the benchmark began and when it wrote its results."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    machine = {
        "python": platform.python_version(),
        "cpu_count": _cpus(),
        "load_average_at_start": _load_at_start,
        "load_average_at_end": load_average(),
    }
    payload = {
        "benchmark": name,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine,
        **data,
    }
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"results written to {path}")
    return path


def _cpus() -> int:
    return os.cpu_count() or 1


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for index, row in enumerate(cells):
        print(
            "  ".join(
                c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if index == 0:
            print("  ".join("-" * w for w in widths))


def module_at_revision(path: str, revision: str, name: str) -> types.ModuleType:
    """The file at `path` (from the repository root) as it was at git `revision`, run as a new module `name`
    against today's code (what it imports is today's); loaded once per process."""
    if name in sys.modules:
        return sys.modules[name]
    git = ["git", "-C", str(ROOT)]
    shown = subprocess.run([*git, "show", f"{revision}:{path}"], capture_output=True, text=True)
    if shown.returncode:
        known = subprocess.run([*git, "cat-file", "-e", f"{revision}^{{commit}}"], capture_output=True)
        if known.returncode == 0:
            raise RuntimeError(f"{path} at {revision}: {shown.stderr.strip()}")
        raise RuntimeError(
            f"revision {revision} (the baseline of {name}) is not in the repository at {ROOT}; a shallow "
            f"clone lacks it: fetch it with `git fetch --unshallow` or `git fetch origin {revision}`"
        )
    module = types.ModuleType(name)
    module.__file__ = f"{revision}:{path}"
    sys.modules[name] = module  # before running it: dataclasses and pickling look their module up there
    try:
        exec(compile(shown.stdout, module.__file__, "exec"), module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def check_settings(
    name: str,
    check: Callable[..., dict[str, Any]],
    settings: Sequence[tuple[Any, ...]],
    per_setting: int,
    table: tuple[Sequence[str], Sequence[str]],
    jobs: int,
) -> int:
    """Each setting through `check(*setting, per_setting)` on `jobs` processes, each returning a row (counts,
    and its `failures`); prints `table` (headers, and the row keys under them), the sums of its counts after
    the first three columns (game, players, options; the last sum counts the failures), every failure and
    the load average; writes the results as `name`. Exit status 1 if anything failed."""
    load = [round(x, 2) for x in os.getloadavg()]
    started = time.monotonic()
    with ProcessPoolExecutor(jobs) as pool:
        rows = list(pool.map(check, *zip(*[(*s, per_setting) for s in settings], strict=True)))
    headers, keys = table
    print_table(headers, [["" if r[k] in (None, {}) else r[k] for k in keys] for r in rows])
    total = {k: sum(r[k] for r in rows) for k in keys[3:]}
    print(f"in all: {total}; load average {load} -> {[round(x, 2) for x in os.getloadavg()]}")
    for r in rows:
        for failure in r["failures"]:
            print("FAILED", failure)
    results = {"load_average_at_start": load, "seconds": round(time.monotonic() - started, 1)}
    write_results(name, {**results, "total": total, "settings": rows})
    return 1 if total[keys[-1]] else 0
