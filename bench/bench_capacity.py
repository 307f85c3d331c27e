"""The capacity model of infra/README.md, computed from the measured results in bench/results/.

It measures nothing itself: it reads `runner.json`, `load.json`, `matches.json` and `engine.json` (written by
`python -m bench runner load matches engine`), derives the model's inputs from them, and prints the README's
"Capacity" tables: the measured figures, then cores, processes and memory per 1,000 concurrent matches and per
1 million matches a day for each game. `python -m bench capacity --write` puts them into infra/README.md
between its `capacity:begin`/`capacity:end` markers; tests/infra/test_capacity_model.py checks that the README
holds what the results give, so a rerun bench that is not carried into the README fails the suite.

The model: a match of game `g` makes `D_g` decisions, each taking the bot's think time `t` plus the server's
overhead `o`; the server's CPU per decision is the worker's `c_w` (measured on Expedition, plus twice the
difference in engine cost `e_g` for other games: the referee plays each step and the recording re-simulates
it) and the gateway's `c_g`. Processes are planned at PLAN_SHARE of a core, a worker holds at most
MATCHES_PER_WORKER matches, memory is a worker's base plus a cost per match in flight plus the gateway's.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import RESULTS

README = Path(__file__).resolve().parents[1] / "infra" / "README.md"
BEGIN, END = "<!-- capacity:begin -->", "<!-- capacity:end -->"
PLAN_SHARE = 0.7  # of a core per worker or gateway process
MATCHES_PER_WORKER = 64  # CARAVANSERAI_MATCHES_PER_WORKER's default
GAMES = {
    "expedition-v1": "Expedition",
    "voyages-v1": "Voyages",
    "mp2-v1": "Marco Polo II",
    "dragonda-v1": "Dragonda",
}
THINK = ((0.0, "0"), (0.1, "100 ms"), (1.0, "1 s"))


@dataclass(frozen=True)
class Inputs:
    worker_cpu: float  # c_w, seconds per relayed decision
    gateway_cpu: float  # c_g
    overhead: float  # o, seconds per decision
    worker_base_mb: float
    per_match_mb: float
    gateway_mb: float
    games: dict[str, tuple[float, float]]  # name: (decisions per match D, engine seconds per decision e)

    @property
    def expedition_engine(self) -> float:
        return self.games["Expedition"][1]


def _load(name: str) -> dict[str, Any]:
    return dict(json.loads((RESULTS / f"{name}.json").read_text()))


def inputs(runner: dict[str, Any], load: dict[str, Any], engine: dict[str, Any]) -> Inputs:
    """The model's inputs. Worker memory is the line through the runner's one process (16 matches) and the
    load run's processes (their share of its matches in flight)."""
    alone_mb = runner["together"]["processes"]["worker"]["rss_peak_mb"]
    alone_matches = runner["together"]["matches"]
    workers = load["processes"]["worker"]
    loaded_mb, loaded_matches = (
        workers["rss_peak_mb"] / workers["processes"],
        load["concurrent"] / workers["processes"],
    )
    per_match = (loaded_mb - alone_mb) / (loaded_matches - alone_matches)
    measured = {g["game_id"]: g for g in engine["games"]}
    games = {  # in GAMES' order
        name: (measured[g]["decisions_per_game"], 1.0 / measured[g]["decisions_per_second"])
        for g, name in GAMES.items()
        if g in measured
    }
    return Inputs(
        worker_cpu=load["cpu_us_per_relayed_decision"]["worker"] / 1e6,
        gateway_cpu=load["cpu_us_per_relayed_decision"]["gateway"] / 1e6,
        overhead=runner["alone"]["seconds_per_decision"] - runner["think_seconds"],
        worker_base_mb=round(alone_mb - per_match * alone_matches),
        per_match_mb=round(per_match, 2),
        gateway_mb=round(load["processes"]["gateway"]["rss_peak_mb"]),
        games=games,
    )


def _processes(worker_cores: float, gateway_cores: float, in_flight: float) -> tuple[int, int]:
    workers = max(math.ceil(worker_cores / PLAN_SHARE), math.ceil(in_flight / MATCHES_PER_WORKER))
    return workers, math.ceil(gateway_cores / PLAN_SHARE)


def _memory_gb(model: Inputs, workers: int, gateways: int, in_flight: float) -> float:
    mb = model.worker_base_mb * workers + model.per_match_mb * in_flight + model.gateway_mb * gateways
    return mb / 1024


def concurrent_rows(model: Inputs, matches: int = 1000) -> list[str]:
    rows = []
    for think, label in THINK:
        per_second = matches / (think + model.overhead)
        worker, gateway = per_second * model.worker_cpu, per_second * model.gateway_cpu
        w, g = _processes(worker, gateway, matches)
        memory = _memory_gb(model, w, g, matches)
        rows.append(
            f"| {label} | {per_second:,.0f} | {worker:.1f} | {gateway:.1f} | {w} + {g} | {memory:.1f} GB |"
        )
    return rows


def daily_rows(model: Inputs, per_day: float = 1e6) -> list[str]:
    rows = []
    for name, (decisions, engine) in model.games.items():
        worker_cpu = model.worker_cpu + 2 * (engine - model.expedition_engine)
        worker, gateway = (
            per_day * decisions * worker_cpu / 86400,
            per_day * decisions * model.gateway_cpu / 86400,
        )
        in_flight = [per_day * decisions * (think + model.overhead) / 86400 for think, _ in THINK]
        memory = [_memory_gb(model, *_processes(worker, gateway, m), m) for m in in_flight]
        flights = " / ".join(f"{m:,.0f}" for m in in_flight)
        rows.append(
            f"| {name} | {worker:.1f} + {gateway:.1f} | {flights} | {' / '.join(f'{m:.1f}' for m in memory)} GB |"
        )
    return rows


def measured_rows(
    runner: dict[str, Any], load: dict[str, Any], matches: dict[str, Any], model: Inputs
) -> list[str]:
    together, cpu = runner["together"], load["cpu_us_per_relayed_decision"]
    instant = matches["runs"]["one"]["cpu_us_per_relayed_decision"]
    rate = matches["matches_per_minute"]
    return [
        f"| 16 matches at once in one worker process (bots think 50 ms): efficiency, one alone / all 16 | "
        f"{runner['efficiency']:.3f} ({runner['efficiency_per_decision']:.3f} per decision); "
        f"{together['peak_running']} RUNNING at peak | `runner.json` |",
        f"| server overhead per decision, one match alone, `o` | {model.overhead * 1e3:.1f} ms "
        f"({runner['alone']['seconds_per_decision'] * 1e3:.1f} ms per decision at 50 ms think) | `runner.json` |",
        f"| {load['concurrent']} in flight, bots think 100 ms, house random in seat 2, {load['workers']} worker "
        f"processes | {load['matches_per_minute']:.0f} matches/min, {load['decisions_per_second']:.0f} decisions/s "
        f"({load['relayed_decisions_per_second']:.0f} relayed), {load['server_faults']} server faults | `load.json` |",
        f"| worker CPU per relayed decision, `c_w` (with one house decision and the recording) | {cpu['worker']:.0f} µs "
        f"({instant['worker']:.0f} µs with instant bots, all seats remote) | `load.json`, `matches.json` |",
        f"| gateway CPU per relayed decision, `c_g` | {cpu['gateway']:.0f} µs ({instant['gateway']:.0f} µs with "
        f"instant bots) | `load.json`, `matches.json` |",
        f"| worker memory | {model.worker_base_mb:.0f} MB per process + {model.per_match_mb} MB per match in flight "
        f"(one process with 16 matches: {together['processes']['worker']['rss_peak_mb']:.0f} MB; "
        f"{load['workers']} with {load['concurrent']}: {load['processes']['worker']['rss_peak_mb']:.0f} MB) | "
        "`runner.json`, `load.json` |",
        f"| gateway memory | {model.gateway_mb:.0f} MB ({load['concurrent']} matches in flight) | `load.json` |",
        f"| instant bots, end to end / referee alone | {matches['ratio_end_to_end_vs_referee']:.3f} "
        f"({rate['one']:.0f} vs {rate['alone']:.0f} matches/min); 2 worker processes / 1: "
        f"{matches['ratio_two_workers_vs_one']:.2f}x | `matches.json` |",
        "| decisions per match `D` (4 players) and engine cost per decision `e` | "
        + ", ".join(f"{n} {d:.0f} / {e * 1e6:.0f} µs" for n, (d, e) in model.games.items())
        + " | `engine.json` |",
    ]


def section() -> str:
    """The README's generated block, from the results as they are on disk."""
    runner, load, matches, engine = (_load(n) for n in ("runner", "load", "matches", "engine"))
    model = inputs(runner, load, engine)
    cpu = (model.worker_cpu + model.gateway_cpu) * 1e3
    lines = [
        BEGIN,
        "| figure | value | from |",
        "|---|---|---|",
        *measured_rows(runner, load, matches, model),
        "",
        f"`c = c_w + c_g` is about {cpu:.1f} ms per decision for every game. Per 1,000 concurrent matches (any game;",
        f"CARAVANSERAI_MATCHES_PER_WORKER = {MATCHES_PER_WORKER}, a process planned at {PLAN_SHARE} of a core):",
        "",
        "| bots think `t` | decisions/s | worker cores | gateway cores | worker + gateway processes | memory |",
        "|---|---|---|---|---|---|",
        *concurrent_rows(model),
        "",
        "Per 1 million matches a day (11.6 a second): cores (worker + gateway, the same for every `t`), matches in",
        "flight and memory:",
        "",
        "| game | cores | in flight at t = 0 / 100 ms / 1 s | memory at t = 0 / 100 ms / 1 s |",
        "|---|---|---|---|",
        *daily_rows(model),
        END,
    ]
    return "\n".join(lines)


def readme_section(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def main() -> int:
    block = section()
    if "--write" in sys.argv:
        text = README.read_text()
        README.write_text(text.replace(readme_section(text), block))
        print(f"written to {README}")
    else:
        print(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
