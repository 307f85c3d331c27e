"""200 matches at once on this machine: two-player Expedition matches between remote bots (Python SDK
processes) that think 100 ms per decision, seat 2 taken by the random house bot (so 200 remote seats fit
in 15 bot processes of 16 matches each, the ladder's most per bot).

200 matches are queued, 10 a second, and every match that finishes is replaced at once by a new one with
the same seating, so 200 stay in flight; a window of 120 s is measured once nearly all of them run. Over that window: matches/min, decisions/s (all
seats, and those relayed to remote bots), each process group's CPU (seconds of CPU per wall second, from
/proc, each process with its children) and peak resident memory, how busy the whole machine was, and the
faults the server caused: with bots answering in 100 ms against a 5 s decision time, every timeout or
disconnect recorded in a seat is the server's, as is every match ending ERROR. Matches retried after an
infrastructure failure and lost leases are counted too. Runs on PostgreSQL and Redis when DATABASE_URL and
REDIS_URL are set, on the embedded defaults otherwise. Two worker processes (one per core of this machine);
BENCH_LOAD_WORKERS=N runs another number.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import psycopg

from bench.common import load_average, percentile, print_table, write_results
from bench.e2e import (
    BENCH_ENV,
    SERVER_FAULT_KINDS,
    Feeder,
    MatchRow,
    backend,
    db_connections,
    fault_kinds,
    match_rows,
    remote_decisions,
    seatings,
    wait_ready,
)
from bench.procfs import Meter
from tests.workers.stack import Stack, wait_for

CONCURRENT = 200
THINK_SECONDS = 0.1
# one per core: a worker process's match loop is bound by the GIL to one core (BENCH_LOAD_WORKERS=1 compares)
WORKERS = int(os.environ.get("BENCH_LOAD_WORKERS", "2"))
BOTS, BOT_CAPACITY = 15, 16
WINDOW_SECONDS = 120
FIRST_SEED = 5000
RAMP_PER_SECOND = 10
FINAL = ("DONE", "ERROR")


def _statuses(stack: Stack, ids: list[int]) -> dict[int, str]:
    marks = ",".join(map(str, ids))
    rows = stack.query(f"SELECT id, status FROM matches_match WHERE id IN ({marks})")
    return {int(i): str(s) for i, s in rows}


def _overlap(row: MatchRow, start: float, end: float) -> float:
    """The fraction of the match's play inside [start, end]."""
    inside = max(0.0, min(row.finished, end) - max(row.started, start))
    return inside / row.seconds if row.seconds > 0 else 0.0


def _spread(values: list[float]) -> dict[str, float]:
    return (
        {"mean": statistics.mean(values), "p95": percentile(values, 95), "max": max(values)} if values else {}
    )


class LoadRun:
    """Queues CONCURRENT matches, RAMP_PER_SECOND at a time so that they do not all finish together, and
    replaces each finished one at once. The window (metered) opens when nearly all of them are RUNNING and
    lasts WINDOW_SECONDS; each poll in it records how many run and how many database connections are open."""

    def __init__(self, stack: Stack, feeder: Feeder, meter: Meter) -> None:
        self.stack, self.feeder, self.meter = stack, feeder, meter
        self.ladder = stack.info["ladders"]["2"]
        self.pending = seatings(stack, CONCURRENT, house_second=True)
        self.slot: dict[int, list[int]] = {}  # match id in flight -> its seating
        self.ids: list[int] = []
        self.running: list[int] = []
        self.connections: list[int | None] = []  # None on SQLite
        self.polls_refused = 0  # polls the database turned away (for example: too many connections)
        self.start = self.end = 0.0

    def keep_in_flight(self) -> None:
        give_up = time.time() + 240
        while not self.start or time.time() - self.start < WINDOW_SECONDS:
            assert self.start or time.time() < give_up, f"{CONCURRENT} matches never ran at once"
            self.tick()
            time.sleep(1.0)
        self.meter.stop()
        self.end = time.time()

    def tick(self) -> None:
        try:
            statuses = _statuses(self.stack, list(self.slot)) if self.slot else {}
            connections = db_connections(self.stack)
        except (psycopg.OperationalError, sqlite3.OperationalError):
            self.polls_refused += 1
            return
        running = sum(s == "RUNNING" for s in statuses.values())
        if not self.start and not self.pending and running >= CONCURRENT * 0.95:
            self.meter.start()
            self.start = time.time()
        if self.start:
            self.running.append(running)
            self.connections.append(connections)
        again = [self.slot.pop(i) for i, s in statuses.items() if s in FINAL]
        again += [self.pending.pop() for _ in range(min(RAMP_PER_SECOND, len(self.pending)))]
        if again:
            new = self.feeder.queue(self.ladder, again, FIRST_SEED + len(self.ids))
            self.slot.update(zip(new, again, strict=True))
            self.ids += new

    def throughput(self, rows: list[MatchRow]) -> dict:
        seconds = self.end - self.start
        remote = remote_decisions(self.stack, self.ids)
        done = [r for r in rows if r.status == "DONE"]
        relayed = sum(remote.get(r.id, 0) * _overlap(r, self.start, self.end) for r in done)
        finished = sum(self.start <= r.finished <= self.end for r in done)
        groups = self.meter.report()
        return {
            "window_seconds": seconds,
            "matches": len(self.ids),
            "running_mean": statistics.mean(self.running),
            "running_min": min(self.running),
            "db_connections_peak": max((c for c in self.connections if c is not None), default=None),
            "polls_refused": self.polls_refused,
            "finished_in_window": finished,
            "matches_per_minute": finished / seconds * 60,
            "decisions_per_second": sum(r.steps * _overlap(r, self.start, self.end) for r in done) / seconds,
            "relayed_decisions_per_second": relayed / seconds,
            "match_seconds_mean": statistics.mean(r.seconds for r in done),
            # queued to RUNNING, for matches queued inside the window: how fast a worker takes a new match
            "queue_wait_seconds": _spread(
                [r.started - r.queued for r in rows if self.start <= r.queued <= self.end]
            ),
            "ms_per_relayed_decision": 1000
            * statistics.mean(r.seconds / remote[r.id] for r in done if remote.get(r.id)),
            "processes": groups,
            "machine_busy": self.meter.machine_busy,
            "cpu_us_per_relayed_decision": {
                name: g["cpu_seconds"] / relayed * 1e6 for name, g in groups.items()
            },
        }

    def faults(self, rows: list[MatchRow]) -> dict:
        faults = fault_kinds(self.stack, self.ids)
        errors = sum(r.status == "ERROR" for r in rows)
        workers = [self.stack.procs[f"worker{w + 1}"].output() for w in range(WORKERS)]
        return {
            "faults": dict(faults),
            "server_faults": sum(faults[k] for k in SERVER_FAULT_KINDS) + errors,
            "error_matches": errors,
            "retried_matches": sum(r.attempts > 1 for r in rows),
            "infrastructure_errors": dict(Counter(r.error[:90] for r in rows if r.error)),
            "lease_lost": sum(log.count("lease was lost") for log in workers),
        }


def measure(stack: Stack) -> dict:
    roots = {
        "worker": [stack.procs[f"worker{w + 1}"].popen.pid for w in range(WORKERS)],
        "gateway": [stack.procs["gateway"].popen.pid],
        "bots": [p.popen.pid for name, p in stack.procs.items() if name.startswith("bot")],
    }
    feeder = Feeder(stack)
    run = LoadRun(stack, feeder, Meter(roots))
    try:
        run.keep_in_flight()
    finally:
        feeder.close()
    wait_for(lambda: all(s in FINAL for s in _statuses(stack, run.ids).values()), 600, "the last matches")
    rows = match_rows(stack, run.ids)
    return {**run.throughput(rows), **run.faults(rows)}


def report(data: dict) -> None:
    print(f"{CONCURRENT} two-player expedition-v1 matches in flight, bots thinking {THINK_SECONDS * 1000:.0f} ms "
          f"(house random in seat 2), {WORKERS} worker processes, {data['window_seconds']:.0f} s window, "
          f"backend: {data['backend']}")  # fmt: skip
    print(
        f"running {data['running_mean']:.0f} on average (min {data['running_min']}); "
        f"{data['matches_per_minute']:.0f} matches/min; {data['decisions_per_second']:.0f} decisions/s "
        f"({data['relayed_decisions_per_second']:.0f} relayed); {data['ms_per_relayed_decision']:.0f} ms per relayed "
        f"decision; machine {data['machine_busy'] * 100:.0f}% busy; up to {data['db_connections_peak'] or 'n/a'} "
        f"database connections ({data['polls_refused']} polls refused); queued to RUNNING "
        f"{data['queue_wait_seconds'].get('mean', 0):.1f} s mean, {data['queue_wait_seconds'].get('p95', 0):.1f} s p95"
    )
    print_table(
        ["processes", "count", "CPU s per wall s", "peak RSS MB", "CPU us per relayed decision"],
        [
            [name, g["processes"], f"{g['cpu_per_wall_second']:.2f}", f"{g['rss_peak_mb']:.0f}",
             f"{data['cpu_us_per_relayed_decision'][name]:.0f}"]
            for name, g in data["processes"].items()
        ],
    )  # fmt: skip
    print(
        f"server faults: {data['server_faults']} (seat faults {data['faults']}, {data['error_matches']} ERROR); "
        f"{data['retried_matches']} matches retried, {data['lease_lost']} leases lost, of {data['matches']}"
    )
    for reason, count in data["infrastructure_errors"].items():
        print(f"  {count} x {reason}")


def main() -> int:
    env = {**BENCH_ENV, "CARAVANSERAI_MATCHES_PER_WORKER": str(CONCURRENT // WORKERS + 8)}
    with tempfile.TemporaryDirectory() as tmp:
        stack = Stack(
            Path(tmp),
            workers=WORKERS,
            bot_delay=THINK_SECONDS,
            bot_concurrency=BOT_CAPACITY,
            bots=BOTS,
            env=env,
        )
        try:
            stack.start()
            wait_ready(stack, [f"worker{w + 1}" for w in range(WORKERS)])
            data = {"backend": backend(stack), "load_average_before": load_average(), **measure(stack)}
        finally:
            stack.stop()
    report(data)
    write_results(
        "load",
        {"game": "expedition-v1", "concurrent": CONCURRENT, "think_seconds": THINK_SECONDS, "workers": WORKERS,
         "bot_processes": BOTS, "bot_capacity": BOT_CAPACITY, "house_second_seat": "random", **data},
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
