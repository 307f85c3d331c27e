"""Every frame of a recorded match of each game and option variant drawn in headless Chromium, as the table
and as each seat, with no script error and no seat's view showing another seat's hidden items: the full
form of tests/ladder/web/test_replay_viewer.py::test_every_frame_draws_for_every_seat, which draws a
sample of the frames in the suite (as the table; each seat a share of it).

It runs that test twice side by side, every frame (VIEWER_FRAME_STRIDE=1) and the suite's sample, on the
embedded defaults (SQLite), and reports each variant's seconds for both and their ratio: what the sample
saves, and the cost of drawing a whole match.

Run: `python -m bench viewer`; writes bench/results/viewer.json (with the load average it ran at).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from bench.common import print_table, write_results

ROOT = Path(__file__).resolve().parent.parent
TEST = "tests/ladder/web/test_replay_viewer.py::test_every_frame_draws_for_every_seat"
HEADERS = ["variant", "every frame s", "sample s", "ratio"]


def run(stride: str | None) -> tuple[dict[str, float], int]:
    """Each variant's seconds with VIEWER_FRAME_STRIDE=`stride` (None: the suite's default), and pytest's
    exit status."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "VIEWER_FRAME_STRIDE")
    }
    if stride is not None:
        env["VIEWER_FRAME_STRIDE"] = stride
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        argv = [sys.executable, "-m", "pytest", "-q", "-n", "0", f"--junitxml={report}", TEST]
        status = subprocess.run(argv, cwd=ROOT, env=env).returncode
        cases = ET.parse(report).getroot().iter("testcase") if report.exists() else iter(())
        return {
            c.get("name", "").split("[", 1)[-1].rstrip("]"): float(c.get("time", 0)) for c in cases
        }, status


def main() -> int:
    load = [round(v, 2) for v in os.getloadavg()]
    every, every_status = run("1")
    sample, sample_status = run(None)
    rows = [
        [name, f"{every[name]:.1f}", f"{sample.get(name, 0):.1f}", f"{every[name] / sample[name]:.1f}"]
        for name in every
        if sample.get(name)
    ]
    print(f"every frame against the suite's sample, load average {load} at the start")
    print_table(HEADERS, rows)
    write_results(
        "viewer",
        {
            "load_average": load,
            "every_frame_seconds": every,
            "sample_seconds": sample,
            "passed": every_status == 0 and sample_status == 0,
        },
    )
    return every_status or sample_status
