"""End-to-end match throughput: the same seeded 2-player Expedition matches played

1. by the referee alone, in one process, with in-process random bots (the ceiling: no network, no database);
2. end to end: matches queued with `run_match`, played by one Celery worker process through the gateway's
   relay against remote random bots (Python SDK processes), recorded with replay verification and ratings;
3. the same with two worker processes,

reported as matches per minute with the ratios end-to-end / referee-alone and two workers / one. Runs on
PostgreSQL and Redis when DATABASE_URL and REDIS_URL are set, on the embedded defaults otherwise (a
temporary database and broker). Uses the end-to-end process stack of the worker tests.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from pathlib import Path

from bench.common import print_table, write_results
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, run_match

MATCHES = 24
GAME = "expedition-v1"

QUEUE = """
import json, sys, django
django.setup()
from ladder.matches.services import match_create
from workers.matches import run_match
ladder, bots, first_seed, n = json.loads(sys.argv[1])
ids = []
for i in range(n):
    pair = [bots[i % len(bots)], bots[(i + 1) % len(bots)]]
    match = match_create(ladder_id=ladder, bot_ids=pair, seed=first_seed + i)
    ids.append(match.pk)
for match_id in ids:
    run_match.delay(match_id)
print(json.dumps(ids))
"""


def referee_alone(seeds: list[int]) -> float:
    started = time.perf_counter()
    for seed in seeds:
        seats = [HouseSeat(make_policy("random", seed=seed * 10 + i)) for i in range(2)]
        run_match(GAME, 2, seed, seats)
    return time.perf_counter() - started


def end_to_end(stack, concurrency: int, first_seed: int) -> float:  # type: ignore[no-untyped-def]
    from tests.workers.stack import PYTHON, ROOT, wait_for

    worker = stack.start_worker(f"bench-c{concurrency}", concurrency=concurrency)
    wait_for(lambda: " ready." in worker.output(), 60, "the worker")
    bots = sorted(int(b) for b in stack.info["tokens"])
    args = json.dumps([stack.info["ladders"]["2"], bots, first_seed, MATCHES])
    started = time.perf_counter()
    ids = json.loads(
        subprocess.run(
            [PYTHON, "-c", QUEUE, args], cwd=ROOT, env=stack.env, check=True, capture_output=True, text=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    marks = ",".join(str(i) for i in ids)
    wait_for(
        lambda: (
            stack.query(f"SELECT COUNT(*) FROM matches_match WHERE status = 'DONE' AND id IN ({marks})")[0][0]
            == len(ids)
        ),
        600,
        "the matches",
    )
    elapsed = time.perf_counter() - started
    worker.stop(timeout=20)
    del stack.procs[worker.name]
    return elapsed


def main() -> int:
    from tests.workers.stack import Stack

    seeds = list(range(1000, 1000 + MATCHES))
    alone = referee_alone(seeds)
    with tempfile.TemporaryDirectory() as tmp:
        stack = Stack(Path(tmp), workers=0, beat=False, bot_delay=0.0, bot_concurrency=4)
        try:
            stack.start()
            one = end_to_end(stack, 1, 1000)
            two = end_to_end(stack, 2, 1000)
            backend = "PostgreSQL + Redis" if stack.server_url and stack.redis_url else "embedded (SQLite)"
            stack.assert_rated_exactly_once()
        finally:
            stack.stop()
    per_min = {k: MATCHES / v * 60 for k, v in {"alone": alone, "one": one, "two": two}.items()}
    print(f"{MATCHES} two-player {GAME} matches, random bots, backend: {backend}")
    print_table(
        ["setup", "seconds", "matches/min", "vs referee alone"],
        [
            ["referee alone, in-process bots, 1 process", f"{alone:.2f}", f"{per_min['alone']:.0f}", "1.00"],
            ["end to end, remote bots, 1 worker process", f"{one:.2f}", f"{per_min['one']:.0f}",
             f"{per_min['one'] / per_min['alone']:.3f}"],
            ["end to end, remote bots, 2 worker processes", f"{two:.2f}", f"{per_min['two']:.0f}",
             f"{per_min['two'] / per_min['alone']:.3f}"],
        ],
    )  # fmt: skip
    print(f"two worker processes / one: {per_min['two'] / per_min['one']:.2f}x")
    write_results(
        "matches",
        {
            "matches": MATCHES,
            "game": GAME,
            "backend": backend,
            "seconds": {"referee_alone": alone, "one_worker": one, "two_workers": two},
            "matches_per_minute": per_min,
            "ratio_end_to_end_vs_referee": per_min["one"] / per_min["alone"],
            "ratio_two_workers_vs_one": per_min["two"] / per_min["one"],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
