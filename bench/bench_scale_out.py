"""The scale-out rehearsal, long (`make rehearse-scale-out`): HAProxy (infra/haproxy.cfg) in front of three
gateways, three workers, beat, the web server, PostgreSQL and Redis, Python SDK and Node bots through HAProxy
only; then each fault across nodes in turn, several rounds each, with its figures printed as it goes:

- matches across nodes (matches per gateway and per worker, matches whose bots were on different gateways,
  streams HAProxy gave each gateway);
- kill -9 a gateway while matches run; drain a gateway (SIGTERM); kill -9 a worker; the workers cut off one
  gateway's relay port.

Needs DATABASE_URL (PostgreSQL; a database of its own is created next to it) and REDIS_URL (keys under
their own prefixes), and Debian's haproxy. Results: bench/results/scale_out.json. Environment:
SCALE_GATEWAYS (3), SCALE_WORKERS (3), SCALE_ROUNDS (rounds of each fault, 3), SCALE_MATCHES (matches
played before the faults, 30). The short version is a test: tests/scale/test_scale_out.py."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import write_results
from tests.scale import rehearsal
from tests.scale.cluster import Cluster, haproxy

PHASES = ("kill_gateway", "drain_gateway", "kill_worker", "cut_relay")
SUMMED = (
    "affected",
    "done",
    "cancelled",
    "called_off",
    "error",
    "unfinished",
    "lost",
    "rated_against_a_bot",
    "rounds",
)


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {key: sum(r[key] for r in runs) for key in SUMMED}
    out["rated_twice"] = max(r["rated_twice"] for r in runs)
    for key in runs[0]:
        if key.endswith("_s"):
            values = [r[key] for r in runs]
            out[key] = {"min": min(values), "max": max(values)}
    return out


def main() -> int:
    if haproxy() is None:
        print("skipped: HAProxy is not installed (make install puts Debian's package in)")
        return 0
    if not (os.environ.get("DATABASE_URL", "").startswith("postgres") and os.environ.get("REDIS_URL")):
        print("skipped: set DATABASE_URL (PostgreSQL) and REDIS_URL (make rehearse-scale-out does)")
        return 0
    gateways = int(os.environ.get("SCALE_GATEWAYS", "3"))
    workers = int(os.environ.get("SCALE_WORKERS", "3"))
    rounds = int(os.environ.get("SCALE_ROUNDS", "3"))
    matches = int(os.environ.get("SCALE_MATCHES", "30"))
    data: dict[str, Any] = {"gateways": gateways, "workers": workers, "rounds_per_fault": rounds}
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Cluster(
            Path(tmp), gateways=gateways, workers=workers, python_bots=6, node_bots=3, bot_delay=0.01
        )
        try:
            say(
                f"starting HAProxy, {gateways} gateways, {workers} workers, beat, web, 6 Python and 3 Node bots"
            )
            cluster.start()
            say(f"up: HAProxy sees {sorted(cluster.lb_up())}; bots by gateway {_counts(cluster)}")
            data["across_nodes"] = rehearsal.play(cluster, matches, timeout=600, say=say)
            say(f"across nodes: {json.dumps(data['across_nodes'])}")
            for phase in PHASES:
                runs = []
                for i in range(rounds):
                    say(f"{phase} {i + 1}/{rounds}")
                    figures = getattr(rehearsal, phase)(cluster, say=say)
                    runs.append(figures)
                    say(f"  {json.dumps(figures, default=str)}")
                    rehearsal.play(cluster, 3, say=lambda _: None)  # settle before the next fault
                data[phase] = {"summary": _summary(runs), "runs": runs}
                say(f"{phase} summary: {json.dumps(data[phase]['summary'])}")
            data["totals"] = rehearsal.totals(cluster)
            cluster.assert_rated_exactly_once()
        finally:
            cluster.stop()
    data["seconds"] = round(time.monotonic() - started, 1)
    report(data)
    write_results("scale_out", data)
    return 0


def _counts(cluster: Cluster) -> dict[str, int]:
    return {name: len(bots) for name, bots in sorted(cluster.bots_by_gateway().items())}


def report(data: dict[str, Any]) -> None:
    across = data["across_nodes"]
    print("\nmatches across nodes")
    print(
        f"  per gateway {across['matches_per_gateway']}, across gateways {across['matches_across_gateways']}"
    )
    print(f"  per worker {across['matches_per_worker']}, HAProxy streams {across['streams_per_gateway_lb']}")
    print("\nfaults (summed over the rounds)")
    for phase in PHASES:
        s = data[phase]["summary"]
        times = ", ".join(f"{k} {v['min']}-{v['max']}s" for k, v in s.items() if isinstance(v, dict))
        print(
            f"  {phase:13} affected {s['affected']}, done {s['done']}, called off {s['cancelled']}, "
            f"lost {s['lost']}, rated twice {s['rated_twice']}, rated against a bot {s['rated_against_a_bot']}, "
            f"rounds {s['rounds']}; {times}"
        )
    print(f"\ntotals: {json.dumps(data['totals'])}")


if __name__ == "__main__":
    raise SystemExit(main())
