"""End-to-end match throughput with bots that answer at once: the same seeded 2-player Expedition matches
played

1. by the referee alone, in one process, with in-process random bots (the ceiling: no network, no database);
2. end to end: matches queued with `run_match` all at once, played by one Celery worker process (threads
   pool, CARAVANSERAI_MATCHES_PER_WORKER at its default of 64) through the gateway's relay against remote
   random bots (Python SDK processes, no think time), recorded with replay verification and ratings;
3. the same with two worker processes,

reported as matches per minute (first queued to last finished, from the database) with the ratios end to
end / referee alone and two workers / one, and the CPU time per relayed decision of the worker processes,
the gateway and the bots (from /proc). Runs on PostgreSQL and Redis when DATABASE_URL and REDIS_URL are
set, on the embedded defaults otherwise (a temporary database and broker). Uses the end-to-end process stack
of the worker tests.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.common import load_average, print_table, write_results
from bench.e2e import (
    BENCH_ENV,
    backend,
    fault_kinds,
    match_rows,
    play_batch,
    remote_decisions,
    seatings,
    wait_ready,
)
from bench.procfs import Meter
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, run_match

MATCHES = 48
GAME = "expedition-v1"
BOTS, BOT_CAPACITY = 7, 15  # 105 streams' worth of matches for the 96 seats


def referee_alone(seeds: list[int]) -> float:
    started = time.perf_counter()
    for seed in seeds:
        seats = [HouseSeat(make_policy("random", seed=seed * 10 + i)) for i in range(2)]
        run_match(GAME, 2, seed, seats)
    return time.perf_counter() - started


def end_to_end(stack, workers: int, first_seed: int) -> dict:  # type: ignore[no-untyped-def]
    names = [f"bench-w{workers}-{i + 1}" for i in range(workers)]
    for name in names:
        stack.start_worker(name, queues="matches")
    wait_ready(stack, names)
    roots = {
        "worker": [stack.procs[n].popen.pid for n in names],
        "gateway": [stack.procs["gateway"].popen.pid],
        "bots": [p.popen.pid for n, p in stack.procs.items() if n.startswith("bot")],
    }
    with Meter(roots) as meter:
        ids, peak = play_batch(stack, stack.info["ladders"]["2"], seatings(stack, MATCHES), first_seed)
    for name in names:
        stack.procs.pop(name).stop(timeout=20)
    rows = match_rows(stack, ids)
    relayed = sum(remote_decisions(stack, ids).values())
    groups = meter.report()
    return {
        "seconds": max(r.finished for r in rows) - min(r.queued for r in rows),
        "done": sum(r.status == "DONE" for r in rows),
        "peak_running": peak,
        "faults": dict(fault_kinds(stack, ids)),
        "relayed_decisions": relayed,
        "machine_busy": meter.machine_busy,
        "processes": groups,
        "cpu_us_per_relayed_decision": {k: g["cpu_seconds"] / relayed * 1e6 for k, g in groups.items()},
    }


def report(data: dict) -> None:
    alone, runs, per_min = data["seconds"]["referee_alone"], data["runs"], data["matches_per_minute"]
    print(f"{MATCHES} two-player {GAME} matches, random bots answering at once, backend: {data['backend']}")
    rows = [["referee alone, in-process bots, 1 process", f"{alone:.2f}", f"{per_min['alone']:.0f}", "1.000",
             "", "", "", ""]]  # fmt: skip
    for key, label in (("one", "1 worker process"), ("two", "2 worker processes")):
        run, cpu = runs[key], runs[key]["cpu_us_per_relayed_decision"]
        rows.append(
            [f"end to end, remote bots, {label}", f"{run['seconds']:.2f}", f"{per_min[key]:.0f}",
             f"{per_min[key] / per_min['alone']:.3f}", run["peak_running"], f"{cpu['worker']:.0f}",
             f"{cpu['gateway']:.0f}", f"{run['machine_busy'] * 100:.0f}%"]
        )  # fmt: skip
    print_table(
        ["setup", "seconds", "matches/min", "vs referee alone", "peak RUNNING", "worker us/decision",
         "gateway us/decision", "machine busy"],
        rows,
    )  # fmt: skip
    print(f"two worker processes / one: {data['ratio_two_workers_vs_one']:.2f}x; "
          f"faults: one {runs['one']['faults']}, two {runs['two']['faults']}")  # fmt: skip


def main() -> int:
    from tests.workers.stack import Stack

    alone = referee_alone(list(range(1000, 1000 + MATCHES)))
    with tempfile.TemporaryDirectory() as tmp:
        stack = Stack(
            Path(tmp),
            workers=0,
            beat=False,
            bot_delay=0.0,
            bot_concurrency=BOT_CAPACITY,
            bots=BOTS,
            env=BENCH_ENV,
        )
        try:
            stack.start()
            load = load_average()
            runs = {"one": end_to_end(stack, 1, 1000), "two": end_to_end(stack, 2, 1000)}
            name = backend(stack)
            stack.assert_rated_exactly_once()
        finally:
            stack.stop()
    per_min = {"alone": MATCHES / alone * 60, **{k: MATCHES / r["seconds"] * 60 for k, r in runs.items()}}
    data = {
        "matches": MATCHES,
        "game": GAME,
        "backend": name,
        "load_average_before": load,
        "seconds": {
            "referee_alone": alone,
            "one_worker": runs["one"]["seconds"],
            "two_workers": runs["two"]["seconds"],
        },
        "matches_per_minute": per_min,
        "ratio_end_to_end_vs_referee": per_min["one"] / per_min["alone"],
        "ratio_two_workers_vs_one": per_min["two"] / per_min["one"],
        "runs": runs,
    }
    report(data)
    write_results("matches", data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
