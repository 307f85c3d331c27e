"""The ladder tests' randomized series at full length. The suite runs each one shortened (its seed fixed,
every case its test names still reached); this runs the same tests with CARAVANSERAI_FULL_SERIES=1, which
gives each series its full size (`series` in tests/ladder/conftest.py):

- tests/ladder/ratings/test_board.py, random results keep the board identical to the computed one: seeds 1
  and 2, 110 rated results each on a 2-seat and a 4-seat ladder (the suite: seed 1, 80 results);
- tests/ladder/ratings/test_board.py, random skills moved one at a time: 150 moves (the suite: 50).

On the embedded defaults (SQLite), then on PostgreSQL and Redis too when DATABASE_URL and REDIS_URL are set
(pytest's test database, never the ladder's own). Reported per database: each test passed or failed and its
seconds, and the run's CPU seconds (pytest's process). Any failure makes the run fail. Results:
bench/results/ladder_series.json.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from bench.common import ROOT, print_table, write_results

FULL_SERIES = [
    "tests/ladder/ratings/test_board.py::test_random_results_keep_the_board_identical_to_the_computed_one",
    "tests/ladder/ratings/test_board.py::test_random_skills_moved_one_at_a_time_stay_identical",
]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(database: str, env: dict[str, str]) -> dict[str, Any]:
    """The full series on one database: each test's outcome and seconds, and the run's CPU seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        cpu, started = _children_cpu(), time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--junitxml={report}",
                *FULL_SERIES,
            ],
            cwd=ROOT,
            env={**env, "CARAVANSERAI_FULL_SERIES": "1"},
            capture_output=True,
            text=True,
        )
        cpu, seconds = _children_cpu() - cpu, time.monotonic() - started
        cases = ET.parse(report).getroot().iter("testcase") if report.exists() else iter(())
        tests = [
            {
                "test": case.get("name", ""),
                "passed": not any(case.find(kind) is not None for kind in ("failure", "error", "skipped")),
                "seconds": round(float(case.get("time", "0")), 2),
            }
            for case in cases
        ]
    if done.returncode or not tests:
        print(done.stdout[-3000:] + done.stderr[-2000:])
    return {
        "database": database,
        "passed": done.returncode == 0 and bool(tests) and all(t["passed"] for t in tests),
        "cpu_seconds": round(cpu, 1),
        "seconds": round(seconds, 1),
        "tests": tests,
    }


def main() -> int:
    load = [round(x, 2) for x in os.getloadavg()]
    embedded = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    runs = [run("sqlite", embedded)]
    if os.environ.get("DATABASE_URL"):
        runs.append(run("postgresql", dict(os.environ)))
    print_table(
        ["database", "test", "passed", "seconds"],
        [[r["database"], t["test"], t["passed"], t["seconds"]] for r in runs for t in r["tests"]],
    )
    for r in runs:
        print(f"{r['database']}: {r['cpu_seconds']} CPU-s in {r['seconds']} s, passed: {r['passed']}")
    write_results(
        "ladder_series",
        {"load_before": load, "load_after": [round(x, 2) for x in os.getloadavg()], "runs": runs},
    )
    return 0 if all(r["passed"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
