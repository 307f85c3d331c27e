"""The one-command demo on embedded defaults: it starts everything, bots play rated matches, progress is
printed, and SIGTERM (like Ctrl-C) stops every process it started; `--minutes` stops it by itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def demo_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def processes_using(path: Path) -> list[str]:
    """Command lines of live processes whose environment or arguments mention `path`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            blob = Path(f"/proc/{pid}/environ").read_bytes() + Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if str(path).encode() in blob:
            found.append(
                Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            )
    return found


def test_demo_plays_matches_and_stops_cleanly_on_sigterm(tmp_path):
    var = tmp_path / "var"
    args = [
        "--web-port",
        "0",
        "--gateway-port",
        "0",
        "--relay-port",
        "0",
        "--var-dir",
        str(var),
        "--minutes",
        "3",
    ]
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "infra" / "demo.py"), *args],
        cwd=ROOT,
        env=demo_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if sum(1 for ln in lines if ln.lstrip().startswith("match ")) >= 3:
                break
        assert sum(1 for ln in lines if ln.lstrip().startswith("match ")) >= 3, "".join(lines)
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=90)
        lines.append(rest)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    output = "".join(lines)
    assert proc.returncode == 0, output
    assert "leaderboard    http://127.0.0.1:" in output and "/ladders/expedition-v1-2p/" in output
    assert "all processes stopped" in output
    assert (var / "ladder.sqlite3").exists() and (var / "celery-broker.sqlite3").exists()
    assert processes_using(var) == []


def test_demo_stops_by_itself_after_its_minutes(tmp_path):
    var = tmp_path / "var"
    args = ["--web-port", "0", "--gateway-port", "0", "--relay-port", "0", "--var-dir", str(var), "--no-node"]
    result = subprocess.run(
        [sys.executable, str(ROOT / "infra" / "demo.py"), *args, "--minutes", "0.3"],
        cwd=ROOT,
        env=demo_env(),
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches played in" in result.stdout and "all processes stopped" in result.stdout
    assert "demo-random-node" not in result.stdout
    assert processes_using(var) == []


def test_demo_refuses_bad_arguments():
    result = subprocess.run(
        [sys.executable, str(ROOT / "infra" / "demo.py"), "--minutes", "-1"], capture_output=True, text=True
    )
    assert result.returncode == 2 and "--minutes must be positive" in result.stderr
