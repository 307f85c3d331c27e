"""Every command of infra/Procfile and infra/compose.yaml started once as written, against real services
(the machine's PostgreSQL with databases of this run, or SQLite; compose's own Redis from its command; the
Procfile on the machine's Redis with key prefixes of this run, or the embedded broker), with the
environment the files give, mapped to local ports and directories by the rules in tests/infra/launch.py.
Each must come up (its health endpoint, gRPC health, PING or log line) and exit with status 0 within its
grace period after SIGTERM (compose: its stop_grace_period, 10 s by default; the Procfile: 10 s).

The processes start in parallel: the one-shots first (both migrations, and Redis that compose's processes
need), then everything else at once."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.infra.deployment import load_compose, load_procfile
from tests.infra.launch import NOT_STARTED, DeploymentRun, Launch, up_check
from tests.scale.cluster import haproxy

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(haproxy() is None, reason="HAProxy is not installed (make install)"),
]
UP_SECONDS = 90
MIGRATE_SECONDS = 180
PROCFILE_GRACE = 10.0


def _wait_all(checks: dict[str, tuple[Launch, str, object]], timeout: float) -> dict[str, float]:
    """Poll every check until each passes: the seconds from each process's start. A process that exits
    fails."""
    started = time.monotonic()
    came_up: dict[str, float] = {}
    while len(came_up) < len(checks) and time.monotonic() - started < timeout:
        for name, (launch, _, probe) in checks.items():
            if name in came_up:
                continue
            assert launch.proc and launch.proc.popen.poll() is None, (
                f"{name} exited with {launch.proc.popen.returncode if launch.proc else '?'}:\n"
                f"{launch.proc.output()[-3000:] if launch.proc else ''}"
            )
            if probe():  # type: ignore[operator]
                came_up[name] = round(time.monotonic() - launch.started, 2)
        time.sleep(0.2)
    missing = {name: what for name, (_, what, _) in checks.items() if name not in came_up}
    assert not missing, f"not up within {timeout:.0f}s: {missing}\n" + "\n".join(
        f"--- {n}\n{checks[n][0].proc.output()[-2000:]}" for n in missing if checks[n][0].proc
    )
    return came_up


def _run_one_shot(run: DeploymentRun, launch: Launch, timeout: float) -> float:
    assert launch.proc is not None
    while launch.proc.popen.poll() is None and time.monotonic() - launch.started < timeout:
        time.sleep(0.1)
    assert launch.proc.popen.returncode == 0, f"{launch.name} failed:\n{launch.proc.output()[-3000:]}"
    return round(time.monotonic() - launch.started, 2)


def _grace(launch: Launch) -> float:
    return launch.process.stop_grace if launch.process.source.startswith("compose") else PROCFILE_GRACE


def test_every_procfile_and_compose_command_comes_up_and_stops_cleanly(tmp_path: Path):
    server = os.environ.get("DATABASE_URL", "").strip()
    run = DeploymentRun(tmp_path, database_url=server if server.startswith("postgres") else "")
    try:
        run.launches = run.compose_launches() + run.procfile_launches(os.environ.get("REDIS_URL", "").strip())
        names = {launch.process.source for launch in run.launches}
        assert names >= {f"compose service {s}" for s in set(load_compose()["services"]) - set(NOT_STARTED)}
        assert names >= {f"Procfile {p}" for p in load_procfile()}

        first = [x for x in run.launches if x.process.role in ("migrate", "redis")]
        for launch in first:
            run.start(launch)
        shots = {x.name: _run_one_shot(run, x, MIGRATE_SECONDS) for x in first if x.process.role == "migrate"}
        rest = [x for x in run.launches if x not in first]
        for launch in rest:
            run.start(launch)
        checks = {x.name: (x, *up_check(x)) for x in rest + [x for x in first if x.process.role == "redis"]}
        came_up = _wait_all(checks, UP_SECONDS)

        servers = [x for x in first if x.process.role == "redis"]  # stopped last, as compose does
        stopped = run.stop(rest, _grace) | run.stop(servers, _grace)
        unclean = {name: status for name, status in stopped.items() if status[0] != 0}
        assert not unclean, f"not a clean exit after SIGTERM (status, seconds): {unclean}\n" + "\n".join(
            f"--- {x.name}\n{x.proc.output()[-2000:]}" for x in run.launches if x.name in unclean and x.proc
        )
        print(
            "\none-shots (s):", shots, "\nup after (s):", came_up, "\nSIGTERM -> exit (status, s):", stopped
        )
    finally:
        run.cleanup()
