"""Every command of infra/Procfile and infra/compose.yaml started once as written, against real services
(compose's own PostgreSQL and Redis from their commands; the Procfile on the machine's PostgreSQL and Redis
with a database and key prefixes of this run, or on SQLite and the embedded broker), with the environment
the files give, mapped to local ports and directories by the rules in tests/infra/launch.py. Compose's
processes start in its depends_on order, the Procfile's after its migrate, all else in parallel. Each must
come up (its health endpoint, gRPC health, PING, query or log line; a one-shot: exit 0) and, stopped in
the reverse order, exit with status 0 within its grace period after SIGTERM (compose: its
stop_grace_period, 10 s by default; the Procfile: 10 s)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.infra.deployment import load_compose, load_procfile
from tests.infra.launch import DeploymentRun, Launch, not_started, up_check
from tests.scale.cluster import haproxy

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(haproxy() is None, reason="HAProxy is not installed (make install)"),
]
UP_SECONDS = 150
PROCFILE_GRACE = 10.0


def _grace(launch: Launch) -> float:
    return launch.process.stop_grace if launch.process.source.startswith("compose") else PROCFILE_GRACE


class Bringup:
    """Start each launch once what it waits for holds (started, healthy, completed successfully), and
    record when each came up or completed, in seconds from its own start."""

    def __init__(self, run: DeploymentRun) -> None:
        self.run = run
        self.probes: dict[str, tuple[str, Callable[[], bool]]] = {}
        self.came_up: dict[str, float] = {}
        self.completed: dict[str, float] = {}

    def ready_for(self, launch: Launch) -> bool:
        names = {x.name: x for x in self.run.launches}
        holds = {
            "service_started": lambda n: names[n].proc is not None,
            "service_healthy": lambda n: n in self.came_up,
            "service_completed_successfully": lambda n: n in self.completed,
        }
        return all(holds[condition](name) for name, condition in launch.after.items())

    def step(self) -> None:
        for launch in self.run.launches:
            if launch.proc is None and self.ready_for(launch):
                self.run.start(launch)
                if not launch.one_shot:
                    self.probes[launch.name] = up_check(launch)
        for launch in self.run.launches:
            if launch.proc is None or launch.name in self.came_up or launch.name in self.completed:
                continue
            status, since = launch.proc.popen.poll(), round(time.monotonic() - launch.started, 2)
            if launch.one_shot and status is not None:
                assert status == 0, f"{launch.name} exited with {status}:\n{launch.proc.output()[-3000:]}"
                self.completed[launch.name] = since
            elif not launch.one_shot:
                assert status is None, f"{launch.name} exited with {status}:\n{launch.proc.output()[-3000:]}"
                if self.probes[launch.name][1]():
                    self.came_up[launch.name] = since

    def wait(self, timeout: float) -> None:
        until = time.monotonic() + timeout
        while len(self.came_up) + len(self.completed) < len(self.run.launches) and time.monotonic() < until:
            self.step()
            time.sleep(0.2)
        waiting = {
            x.name: self.probes[x.name][0] if x.name in self.probes else f"not started, waits for {x.after}"
            for x in self.run.launches
            if x.name not in self.came_up and x.name not in self.completed
        }
        assert not waiting, f"not up within {timeout:.0f}s: {waiting}\n" + "\n".join(
            f"--- {x.name}\n{x.proc.output()[-2000:]}"
            for x in self.run.launches
            if x.name in waiting and x.proc
        )


def _stop_in_reverse_order(run: DeploymentRun) -> dict[str, tuple[int | None, float]]:
    """SIGTERM first to what nothing still running waits for, as compose stops dependents first."""
    running = [x for x in run.launches if not x.one_shot]
    stopped: dict[str, tuple[int | None, float]] = {}
    while running:
        needed = {name for x in running for name in x.after}
        group = [x for x in running if x.name not in needed]
        stopped |= run.stop(group, _grace)
        running = [x for x in running if x not in group]
    return stopped


def test_every_procfile_and_compose_command_comes_up_and_stops_cleanly(tmp_path: Path):
    server = os.environ.get("DATABASE_URL", "").strip()
    run = DeploymentRun(tmp_path, database_url=server if server.startswith("postgres") else "")
    try:
        run.launches = run.compose_launches() + run.procfile_launches(os.environ.get("REDIS_URL", "").strip())
        sources = {launch.process.source for launch in run.launches}
        services = set(load_compose()["services"]) - set(not_started())
        assert sources >= {f"compose service {s}" for s in services}
        assert sources >= {f"Procfile {p}" for p in load_procfile()}
        if not_started():  # said, never silent
            print("\nstood in for:", not_started())

        bringup = Bringup(run)
        bringup.wait(UP_SECONDS)
        stopped = _stop_in_reverse_order(run)
        unclean = {name: status for name, status in stopped.items() if status[0] != 0}
        assert not unclean, f"not a clean exit after SIGTERM (status, seconds): {unclean}\n" + "\n".join(
            f"--- {x.name}\n{x.proc.output()[-2000:]}" for x in run.launches if x.name in unclean and x.proc
        )
        print("\ncompleted (s):", bringup.completed, "\nup after (s):", bringup.came_up)
        print("SIGTERM -> exit (status, s):", stopped)
    finally:
        run.cleanup()
