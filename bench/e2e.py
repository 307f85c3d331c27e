"""Shared by the end-to-end benches: the environment of a bench stack, seatings, waiting for a stack to be
ready, and reading back what its matches did (timings, decisions per seat kind, faults).

Builds on the process stack of the worker tests (`tests.workers.stack.Stack`): PostgreSQL and Redis when
DATABASE_URL and REDIS_URL are set, the embedded SQLite defaults otherwise. Reads the database; writes
nothing but what `Stack` does.
"""

from __future__ import annotations

import json
import subprocess
import time
import zlib
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tests.workers.stack import PYTHON, ROOT, Stack, wait_for

# production timings (Stack's own are shortened for the tests), and no matchmaking of its own
BENCH_ENV = {
    "CARAVANSERAI_MATCHMAKING_SECONDS": "3600",
    "CARAVANSERAI_LEASE_SECONDS": "15",
    "CARAVANSERAI_SWEEP_SECONDS": "20",
    "CARAVANSERAI_RETRY_BACKOFF": "5",
    "CARAVANSERAI_MAX_QUEUED_PER_LADDER": "8",
}
# a server-caused fault: with bots answering far inside their decision time, these are never the bot's
SERVER_FAULT_KINDS = ("timeout", "disconnect")


def backend(stack: Stack) -> str:
    return "PostgreSQL + Redis" if stack.server_url and stack.redis_url else "embedded (SQLite)"


def seatings(stack: Stack, n: int, *, house_second: bool = False) -> list[list[int]]:
    """`n` two-player seatings rotating over the stack's bots (the random house bot second, if asked)."""
    bots = sorted(int(b) for b in stack.info["tokens"])
    second = [stack.info["house"][0]] * n if house_second else [bots[(i + 1) % len(bots)] for i in range(n)]
    return [[bots[i % len(bots)], second[i]] for i in range(n)]


def wait_ready(stack: Stack, workers: list[str]) -> None:
    """Every worker consuming and every bot's stream open at the gateway."""
    for name in workers:
        wait_for(lambda n=name: " ready." in stack.procs[n].output(), 90, f"worker {name}")
    wait_for(lambda: _connected_bots(stack) >= stack.n_bots, 60, "every bot connected")


def _connected_bots(stack: Stack) -> int:
    from engine_service.gateway.registry import open_registry

    registry = open_registry(
        redis_url=stack.redis_url or None,
        path=stack.env["CARAVANSERAI_REGISTRY_PATH"],
        prefix=stack.env["CARAVANSERAI_REGISTRY_PREFIX"],
    )
    try:
        return len({s.bot_id for s in registry.sessions()})
    finally:
        registry.close()


def db_connections(stack: Stack) -> int | None:
    """Connections open to the stack's PostgreSQL database now (None on SQLite)."""
    if not stack.server_url:
        return None
    sql = "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
    return int(stack.query(sql)[0][0]) - 1  # not counting this one


def _when(value: Any) -> float:
    if value is None:
        return float("nan")
    stamp = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).timestamp()  # SQLite's are naive UTC


@dataclass
class MatchRow:
    id: int
    status: str
    steps: int
    attempts: int
    queued: float
    started: float
    finished: float
    error: str

    @property
    def seconds(self) -> float:
        return self.finished - self.started


def match_rows(stack: Stack, ids: list[int]) -> list[MatchRow]:
    marks = ",".join(str(int(i)) for i in ids)
    rows = stack.query(
        "SELECT id, status, COALESCE(steps, 0), attempts, queued_at, started_at, finished_at, error"
        f" FROM matches_match WHERE id IN ({marks}) ORDER BY id"
    )
    return [
        MatchRow(int(r[0]), str(r[1]), int(r[2]), int(r[3]), _when(r[4]), _when(r[5]), _when(r[6]), str(r[7]))
        for r in rows
    ]


def fault_kinds(stack: Stack, ids: list[int]) -> Counter[str]:
    """Every fault recorded in these matches' seats, counted by kind."""
    marks = ",".join(str(int(i)) for i in ids)
    rows = stack.query(f"SELECT faults FROM matches_seat WHERE match_id IN ({marks})")
    raw = (json.loads(r) if isinstance(r, str) else r for (r,) in rows)
    return Counter(fault["kind"] for faults in raw for fault in faults)


def remote_decisions(stack: Stack, ids: list[int]) -> dict[int, int]:
    """Per match, the decisions made by remote seats (relayed through the gateway), from its stored replay."""
    marks = ",".join(str(int(i)) for i in ids)
    counts = {}
    for match_id, data in stack.query(
        f"SELECT match_id, data FROM replays_replay WHERE match_id IN ({marks})"
    ):
        record = json.loads(zlib.decompress(bytes(data)))
        remote = {s["seat"] for s in record["seats"] if s["kind"] == "remote"}
        counts[int(match_id)] = sum(1 for seat, _ in record["actions"] if seat in remote)
    return counts


def play_batch(stack: Stack, ladder: int, seating: list[list[int]], first_seed: int) -> tuple[list[int], int]:
    """Queue these matches and wait until each is DONE or ERROR; their ids and the peak number RUNNING at
    once (the database polled every 0.1 s)."""
    ids = stack.queue_matches(ladder, seating, first_seed)
    peak = 0
    until = time.monotonic() + 900
    while time.monotonic() < until:
        counts = dict(stack.query(_STATUS_COUNTS.format(marks=",".join(map(str, ids)))))
        peak = max(peak, int(counts.get("RUNNING", 0)))
        if counts.get("DONE", 0) + counts.get("ERROR", 0) == len(ids):
            return ids, peak
        time.sleep(0.1)
    raise AssertionError(f"{len(ids)} matches did not finish within 900 s")


_STATUS_COUNTS = "SELECT status, COUNT(*) FROM matches_match WHERE id IN ({marks}) GROUP BY status"


FEEDER = """
import json, sys, django
django.setup()
from ladder.matches.services import match_create
from workers.matches import run_match
for line in sys.stdin:
    ladder, seatings, first_seed = json.loads(line)
    ids = [match_create(ladder_id=ladder, bot_ids=b, seed=first_seed + i).pk for i, b in enumerate(seatings)]
    for match_id in ids:
        run_match.delay(match_id)
    print(json.dumps(ids), flush=True)
"""


class Feeder:
    """One long-lived process that creates matches and sends their tasks on request: queuing a few matches
    every second costs milliseconds, not a Django start-up each time."""

    def __init__(self, stack: Stack) -> None:
        self.popen = subprocess.Popen(
            [PYTHON, "-c", FEEDER], cwd=ROOT, env=stack.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip

    def queue(self, ladder: int, seating: list[list[int]], first_seed: int) -> list[int]:
        assert self.popen.stdin is not None and self.popen.stdout is not None
        self.popen.stdin.write(json.dumps([ladder, seating, first_seed]) + "\n")
        self.popen.stdin.flush()
        return list(json.loads(self.popen.stdout.readline()))

    def close(self) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.close()
        self.popen.wait(30)
