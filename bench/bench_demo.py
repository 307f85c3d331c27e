"""The demo, long: `make demo`'s whole ladder on embedded defaults for DEMO_MINUTES (30), as an operator runs
it, watched from outside. Does every ladder keep playing, and does a new bot registered on the web page get
its first rated result within a minute?

It starts `infra/demo.py --minutes N` (tests/infra/test_demo.py's `DemoRun`), reads the demo's SQLite
database once a minute (finished matches per ladder), and at DEMO_NEWCOMER_MINUTES (2, 12, 22) registers a
new bot on the web page as the demo user, starts the example random bot with the token the page shows (as
its command says) and measures the seconds from the bot's start to its first seat and to its first rated
result (a DONE, rated match with it seated). Reported: matches finished per ladder and the longest stretch
any ladder went without finishing one (minutes, from the demo's first finished match to the end); each
newcomer's seconds; the faults charged to bots over the run by kind (remote timeouts, house-seat faults,
forfeits), none of which the demo's well-behaved bots should earn (the hostile hosted bot's are listed apart;
each newcomer is stopped once it has its first rated result, so a match it still had in play ends in a
`disconnect` it did earn: its process was terminated); and the load average. Results:
bench/results/demo.json.

It must not change ladder code or settings: it writes only to its own temporary var directory and its
results file.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.common import load_average, write_results
from tests.infra.test_demo import DemoRun, register_bot_on_the_web, start_web_bot

POLL_SECONDS = 60.0
FIRST_RESULT_LIMIT_SECONDS = 300.0  # a newcomer waited for this long at most (the goal is 60)
HOSTILE = "demo-hostile"


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def done_per_ladder(demo: DemoRun) -> dict[str, int]:
    rows = demo.query(
        "SELECT l.slug, COUNT(m.id) FROM ladders_ladder l LEFT JOIN matches_match m"
        " ON m.ladder_id = l.id AND m.status = 'DONE' GROUP BY l.slug ORDER BY l.slug"
    )
    return {str(slug): int(n) for slug, n in rows}


def longest_gaps(demo: DemoRun, end: datetime) -> dict[str, float]:
    """Per ladder, the longest stretch in minutes without a finished match, from the run's first finish."""
    rows = demo.query("SELECT l.slug, m.finished_at FROM matches_match m JOIN ladders_ladder l ON l.id = m.ladder_id WHERE m.status = 'DONE' ORDER BY m.finished_at")  # fmt: skip
    if not rows:
        return {}
    start = min(datetime.fromisoformat(str(at)) for _, at in rows)
    by_ladder: dict[str, list[datetime]] = {}
    for slug, at in rows:
        by_ladder.setdefault(str(slug), []).append(datetime.fromisoformat(str(at)))
    gaps = {}
    for (slug,) in demo.query("SELECT slug FROM ladders_ladder WHERE active ORDER BY slug"):
        moments = [start, *by_ladder.get(str(slug), []), end]
        gaps[str(slug)] = round(max((b - a).total_seconds() for a, b in itertools.pairwise(moments)) / 60, 2)
    return gaps


def newcomer(demo: DemoRun, base: str, name: str) -> dict[str, Any]:
    """Register `name` on the web page, start its bot, and time its first seat and first rated result."""
    token = register_bot_on_the_web(base, name)
    started = time.monotonic()
    bot = start_web_bot(demo, token)
    seated_sql = "SELECT COUNT(*) FROM matches_seat s JOIN bots_bot b ON b.id = s.bot_id WHERE b.name = ?"
    rated_sql = (
        "SELECT COUNT(*) FROM matches_seat s JOIN bots_bot b ON b.id = s.bot_id JOIN matches_match m"
        " ON m.id = s.match_id WHERE b.name = ? AND m.status = 'DONE' AND m.rated"
    )
    out: dict[str, Any] = {"name": name, "first_seat_s": None, "first_rated_result_s": None}
    try:
        while time.monotonic() - started < FIRST_RESULT_LIMIT_SECONDS:
            if out["first_seat_s"] is None and demo.query(seated_sql, name)[0][0]:
                out["first_seat_s"] = round(time.monotonic() - started, 1)
            if demo.query(rated_sql, name)[0][0]:
                out["first_rated_result_s"] = round(time.monotonic() - started, 1)
                break
            time.sleep(0.5)
    finally:
        bot.terminate()
        bot.wait(10)
    say(f"newcomer {name}: {out}")
    return out


def faults_charged(demo: DemoRun) -> dict[str, Any]:
    rows = demo.query(
        "SELECT s.faults, s.forfeited, s.end_reason, b.is_house, b.name FROM matches_seat s"
        " JOIN bots_bot b ON b.id = s.bot_id JOIN matches_match m ON m.id = s.match_id WHERE m.status = 'DONE'"
    )
    out: Counter[str] = Counter()
    examples: list[str] = []
    for faults, forfeited, end_reason, is_house, name in rows:
        who = "hostile" if name == HOSTILE else "house" if is_house else "remote"
        for fault in json.loads(faults or "[]"):
            out[f"{who}_{fault.get('kind')}"] += 1
            if who != "hostile" and len(examples) < 5:
                examples.append(f"{name}: {fault.get('kind')} {fault.get('reason')}")
        if forfeited:
            out[f"{who}_forfeits_{end_reason or 'unknown'}"] += 1
    return {"by_kind": dict(sorted(out.items())), "examples": examples}


def run(minutes: float, newcomer_minutes: list[float]) -> dict[str, Any]:
    data: dict[str, Any] = {"minutes": minutes, "load_average_at_start": load_average(), "samples": []}
    with tempfile.TemporaryDirectory() as tmp:
        demo = DemoRun(Path(tmp) / "var", "--minutes", f"{minutes:g}")
        try:
            _, web = demo.first(r"(http://127\.0\.0\.1:\d+)/", 120)
            base, began = web.group(1), time.monotonic()
            pending = sorted(newcomer_minutes)
            data["newcomers"] = []
            next_poll = 0.0
            while demo.proc.poll() is None and time.monotonic() - began < minutes * 60 - 5:
                elapsed = time.monotonic() - began
                if pending and elapsed >= pending[0] * 60:
                    data["newcomers"].append(newcomer(demo, base, f"newcomer-{int(pending.pop(0))}"))
                elif elapsed >= next_poll:
                    sample = {
                        "minute": round(elapsed / 60, 1),
                        "done": done_per_ladder(demo),
                        "load": load_average(),
                    }
                    data["samples"].append(sample)
                    say(f"minute {sample['minute']}: {sample['done']} load {sample['load']}")
                    next_poll = elapsed + POLL_SECONDS
                time.sleep(1.0)
            end = datetime.fromisoformat(str(demo.query("SELECT datetime('now')")[0][0]))
            data["done_per_ladder"] = done_per_ladder(demo)
            data["longest_gap_minutes"] = longest_gaps(demo, end)
            data["faults_charged"] = faults_charged(demo)
        finally:
            data["exit_status"] = demo.stop(timeout=300)
            data["load_average_at_end"] = load_average()
            stopped = re.findall(r".*(?:put back|stopped).*", demo.output)
            data["stop_lines"] = stopped[-3:]
    return data


def main() -> int:
    minutes = float(os.environ.get("DEMO_MINUTES", "30"))
    newcomers = [float(m) for m in os.environ.get("DEMO_NEWCOMER_MINUTES", "2,12,22").split(",") if m]
    started = time.monotonic()
    data = run(minutes, [m for m in newcomers if m < minutes - 2])
    data["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps({k: v for k, v in data.items() if k != "samples"}, indent=1))
    write_results("demo", data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
