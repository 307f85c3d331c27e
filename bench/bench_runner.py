"""The concurrent match runner's efficiency: one worker process, 16 two-player Expedition matches between
remote bots (Python SDK processes) that think 50 ms per decision.

In one run: one match played alone, then 16 queued at once. Efficiency = (the lone match, queued to
finished) / (the 16, first queued to last finished): 1.0 means 16 matches cost no more wall time than one.
Since matches differ in length (random bots), it is also given per decision: the lone match's seconds per
decision over the 16's mean. The peak number of matches RUNNING at once is polled from the database every
0.1 s. Runs on PostgreSQL and Redis when DATABASE_URL and REDIS_URL are set, on the embedded defaults
otherwise.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from bench.common import load_average, print_table, write_results
from bench.e2e import (
    BENCH_ENV,
    backend,
    fault_kinds,
    match_rows,
    play_batch,
    seatings,
    wait_ready,
)
from bench.procfs import Meter

MATCHES = 16
THINK_SECONDS = 0.05
FIRST_SEED = 3000


def measure(stack) -> dict:  # type: ignore[no-untyped-def]
    ladder = stack.info["ladders"]["2"]
    alone_ids, _ = play_batch(stack, ladder, seatings(stack, 1), FIRST_SEED)
    (alone,) = match_rows(stack, alone_ids)
    roots = {"worker": [stack.procs["worker1"].popen.pid], "gateway": [stack.procs["gateway"].popen.pid]}
    with Meter(roots) as meter:
        ids, peak = play_batch(stack, ladder, seatings(stack, MATCHES), FIRST_SEED + 1)
    rows = match_rows(stack, ids)
    span = max(r.finished for r in rows) - min(r.queued for r in rows)
    per_decision = statistics.mean(r.seconds / r.steps for r in rows)
    lone = alone.finished - alone.queued
    return {
        "alone": {"seconds": lone, "steps": alone.steps, "seconds_per_decision": alone.seconds / alone.steps},
        "together": {
            "matches": MATCHES,
            "seconds": span,
            "steps_mean": statistics.mean(r.steps for r in rows),
            "seconds_per_decision_mean": per_decision,
            "peak_running": peak,
            "done": sum(r.status == "DONE" for r in rows),
            "faults": dict(fault_kinds(stack, ids)),
            "processes": meter.report(),
        },
        "efficiency": lone / span,
        "efficiency_per_decision": (alone.seconds / alone.steps) / per_decision,
    }


def report(data: dict) -> None:
    alone, together = data["alone"], data["together"]
    print(f"{MATCHES} two-player expedition-v1 matches, bots thinking {THINK_SECONDS * 1000:.0f} ms, "
          f"one worker process, backend: {data['backend']}")  # fmt: skip
    print_table(
        ["run", "seconds", "decisions/match", "ms per decision", "peak RUNNING"],
        [
            ["one match alone", f"{alone['seconds']:.2f}", alone["steps"],
             f"{alone['seconds_per_decision'] * 1000:.1f}", 1],
            [f"{MATCHES} at once", f"{together['seconds']:.2f}", f"{together['steps_mean']:.0f}",
             f"{together['seconds_per_decision_mean'] * 1000:.1f}", together["peak_running"]],
        ],
    )  # fmt: skip
    cpu = together["processes"]
    print(
        f"efficiency (alone / all {MATCHES}): {data['efficiency']:.3f}; per decision: "
        f"{data['efficiency_per_decision']:.3f}; {together['done']}/{MATCHES} DONE, faults {together['faults']}; "
        f"CPU per wall second: worker {cpu['worker']['cpu_per_wall_second']:.2f}, "
        f"gateway {cpu['gateway']['cpu_per_wall_second']:.2f}"
    )


def main() -> int:
    from tests.workers.stack import Stack

    with tempfile.TemporaryDirectory() as tmp:
        stack = Stack(
            Path(tmp), workers=1, bot_delay=THINK_SECONDS, bot_concurrency=15, bots=7, env=BENCH_ENV
        )
        try:
            stack.start()
            wait_ready(stack, ["worker1"])
            data = {"backend": backend(stack), "load_average_before": load_average(), **measure(stack)}
        finally:
            stack.stop()
    report(data)
    write_results("runner", {"game": "expedition-v1", "think_seconds": THINK_SECONDS, **data})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
