"""Overload bench: offer the real stack twice the capacity of its match worker for OVERLOAD_SECONDS and show
that overload becomes matches waiting to start, never faults charged to bots.

The stack is tests/workers/stack.py's in the Procfile's shape (gateway, ONE match worker, a scheduler worker
for matchmaking, beat, web, Python SDK bots answering a
random legal action after OVERLOAD_THINK = 0.1 s of a 5 s decision clock), on PostgreSQL + Redis when
DATABASE_URL / REDIS_URL are set, the embedded SQLite database and broker otherwise. The worker plays at most
OVERLOAD_SLOTS matches at once (CARAVANSERAI_MATCHES_PER_WORKER) and has one search process
(CARAVANSERAI_SEARCH_PROCESSES=1, so CARAVANSERAI_SEARCH_SEATS defaults to 3).

Capacity, concretely: the matches per minute that one match worker sustains at these settings, measured in
a calibration phase of the same run (OVERLOAD_CALIBRATION_SECONDS): OVERLOAD_SLOTS remote bots of capacity 2
on the 2-player Expedition ladder alone, no house bots, so the bots' slots fill exactly the worker's
OVERLOAD_SLOTS threads and nothing should wait (its queued peak is reported). capacity = slots x 60 / mean
match duration (started -> finished).

Overload (OVERLOAD_SECONDS, default 300): OVERLOAD_BOTS bots of capacity 2 in all (default 4 x
OVERLOAD_SLOTS) and the 3-player ladder opens. Twice the calibration's bots was not enough: a bot on two
ladders has at most one slot on each, so a 300 s run with 2 x slots bots offered only 1.3 x the worker's
threads, and 3 x slots 1.7 x. What the stack was
actually offered is measured: tables in flight (running + waiting) against the worker's slots, and the share
of the time a table was waiting. The 3-player ladder has house bots allowed, the fast ones (random, greedy)
retired for the phase so that its house seats are the searching ones (`search`, `mcts:120`; pairing takes
remote bots before house bots and a fast house bot before a slow one). The aim: matchmaking always has more
tables to start than the worker and the search pool can hold. Matchmaking admits within the worker's measured
headroom (workers/capacity.py), so most of the excess never becomes a match: it shows as tables held back for
capacity (matchmaking's report in the session registry, polled here), not as QUEUED matches. The offered load
is therefore tables in flight (running + queued) plus tables held back, against the worker's slots; the goal
is at least 2x. Reported: matches created, started and finished in the phase; matches waiting (QUEUED) at its
end and at peak; the start wait (created -> started_at) p50/p95 of those started, and the age of those still
waiting; the worker's busy slots; the search seats in flight at peak against CARAVANSERAI_SEARCH_SEATS; and the
faults charged to bots, by cause (timeouts of remote bots, any fault of a house seat, forfeits). The bots
answer in 0.1 s of a 5 s clock, so every fault in this run is the server's: the goal is 0 of each.

Results: bench/results/overload.json. Environment: OVERLOAD_SECONDS (300), OVERLOAD_CALIBRATION_SECONDS (120),
OVERLOAD_SLOTS (4), OVERLOAD_BOTS (4 x slots), OVERLOAD_THINK (0.1). It must not change ladder code or settings: it writes only to its
own stack's fresh database (which ladders and house bots are active in each phase), its temporary directory
and its results file.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import load_average, percentile, write_results
from engine_service.gateway.registry import SessionRegistry, open_registry
from tests.workers.stack import PYTHON, Stack, wait_for

SEARCH_PROCESSES = 1
SEARCH_SEATS = 3 * SEARCH_PROCESSES  # the configured default per search process (workers.config)
BOT_CAPACITY = 2
POLL_SECONDS = 1.0
SEARCHING_HOUSE = ("search", "mcts:120")  # both decide in the search pool (Expedition's `search` is 120 too)

CONFIGURE = """
import json, sys, django
django.setup()
from ladder.bots.models import Bot
from ladder.bots.services import house_bot_ensure
from ladder.ladders.models import Ladder
phase, two, three, searching = json.loads(sys.argv[1])
found = [house_bot_ensure(policy=policy).pk for policy in searching]
fast = Bot.objects.filter(is_house=True, house_policy__in=["random", "greedy"])
fast.update(active=phase != "overload")
Ladder.objects.filter(pk=two).update(active=True, house_bots_allowed=False)
Ladder.objects.filter(pk=three).update(active=phase == "overload", house_bots_allowed=True)
print(json.dumps(found))
"""


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError as exc:
        raise SystemExit(f"{name} must be a number, not {raw!r}") from exc
    if value <= 0:
        raise SystemExit(f"{name} must be positive, not {raw!r}")
    return value


def when(value: Any) -> datetime | None:
    """A timestamp as the database returns it (psycopg: aware datetime; SQLite: ISO text), naive UTC."""
    if value is None or value == "":
        return None
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


class OverloadStack(Stack):
    """The test stack with its bots started in two halves: the calibration's, then the overload's."""

    def start(self) -> Stack:
        self.prepare_database()
        self.start_gateway()
        self.start_worker("worker1", queues="matches")  # the Procfile's shape: matches on their own worker,
        self.start_worker("scheduler", queues="matchmaking,tournaments")  # matchmaking never behind them
        self.spawn(
            "beat", [PYTHON, "-m", "celery", "-A", "workers.celery_app", "beat", "-s", str(self.var / "beat")]
        )
        self.start_web()
        wait_for(self._web_up, 60, "the web server")
        return self

    def bot_ids(self) -> list[str]:
        return sorted(self.info["tokens"], key=int)

    def start_bots(self, bot_ids: list[str]) -> None:
        for bot_id in bot_ids:
            self.start_python_bot(int(bot_id), self.info["tokens"][bot_id], seed=int(bot_id))

    def configure(self, phase: str) -> list[int]:
        """Open the ladders of `phase` (calibration: 2-player only, no house bots; overload: the 3-player
        ladder too, its house seats filled only by the searching house bots); their ids."""
        ladders = self.info["ladders"]
        found = self.run_script(CONFIGURE, [phase, ladders["2"], ladders["3"], SEARCHING_HOUSE])
        return [int(pk) for pk in found]

    def registry(self) -> SessionRegistry:
        """The stack's session registry, as its processes open it (for matchmaking's capacity report)."""
        if getattr(self, "_registry", None) is None:
            self._registry = open_registry(
                redis_url=self.redis_url or None,
                path=self.env["CARAVANSERAI_REGISTRY_PATH"],
                prefix=self.env["CARAVANSERAI_REGISTRY_PREFIX"],
            )
        return self._registry

    def held_tables(self) -> tuple[int, list[str]]:
        """Tables matchmaking's last run held back for capacity, and its reasons."""
        held, reasons = 0, []
        for report in self.registry().capacity_reports("matchmaking").values():
            held += sum(int(n) for n in report.payload.get("held", {}).values())
            reasons += [str(r) for r in report.payload.get("reasons", [])]
        return held, reasons

    def now_db(self) -> datetime:
        row = self.query("SELECT CURRENT_TIMESTAMP")[0][0]
        moment = when(row)
        assert moment is not None
        return moment


@dataclass
class Sampler:
    """Peaks and means of the match states, polled from the database."""

    search_bots: list[int]
    samples: int = 0
    peak: Counter[str] = field(default_factory=Counter)
    total: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)  # held-back reasons, by the samples naming them

    def poll(self, stack: OverloadStack) -> None:
        counts = Counter(
            {
                str(s): int(n)
                for s, n in stack.query("SELECT status, COUNT(*) FROM matches_match GROUP BY status")
            }
        )
        counts["SEARCH_SEATS"] = int(
            stack.query(
                "SELECT COUNT(*) FROM matches_seat s JOIN matches_match m ON m.id = s.match_id"
                f" WHERE s.bot_id IN ({','.join(str(int(b)) for b in self.search_bots)})"
                " AND m.status IN ('NEW', 'QUEUED', 'RUNNING')",
            )[0][0]
        )
        counts["IN_FLIGHT"] = counts["NEW"] + counts["QUEUED"] + counts["RUNNING"]
        counts["HELD"], reasons = stack.held_tables()
        self.reasons.update(set(reasons))
        counts["OFFERED"] = counts["IN_FLIGHT"] + counts["HELD"]
        counts["WAITING_SAMPLES"] = int(counts["NEW"] + counts["QUEUED"] + counts["HELD"] > 0)
        self.samples += 1
        keys = ("NEW", "QUEUED", "RUNNING", "SEARCH_SEATS", "IN_FLIGHT", "HELD", "OFFERED", "WAITING_SAMPLES")
        for key in keys:
            self.peak[key] = max(self.peak[key], counts[key])
            self.total[key] += counts[key]

    def mean(self, key: str) -> float:
        return round(self.total[key] / self.samples, 2) if self.samples else 0.0


def run_phase(stack: OverloadStack, seconds: float, sampler: Sampler) -> None:
    until = time.monotonic() + seconds
    next_say = time.monotonic() + 30
    while time.monotonic() < until:
        sampler.poll(stack)
        if time.monotonic() >= next_say:
            say(f"  done {stack.done_count()}, peaks {dict(sampler.peak)}, load {load_average()}")
            next_say += 30
        time.sleep(POLL_SECONDS)


MATCHES_SQL = (
    "SELECT m.id, m.status, m.created_at, m.started_at, m.finished_at, m.ladder_id, m.attempts"
    " FROM matches_match m WHERE m.id > ? ORDER BY m.id"
)
SEATS_SQL = (
    "SELECT s.match_id, s.forfeited, s.end_reason, s.faults, b.is_house, b.house_policy"
    " FROM matches_seat s JOIN bots_bot b ON b.id = s.bot_id WHERE s.match_id > ? AND s.match_id <= ?"
)


def matches_after(stack: OverloadStack, after_id: int) -> list[tuple[Any, ...]]:
    return stack.query(MATCHES_SQL, (after_id,))


def calibration_figures(rows: list[tuple[Any, ...]], slots: int, seconds: float) -> dict[str, Any]:
    durations = [
        (finished - started).total_seconds()
        for _, status, _, started_at, finished_at, *_ in rows
        if status == "DONE"
        and (started := when(started_at)) is not None
        and (finished := when(finished_at)) is not None
    ]
    if not durations:
        raise SystemExit("calibration finished no match: raise OVERLOAD_CALIBRATION_SECONDS")
    mean = statistics.fmean(durations)
    return {
        "seconds": seconds,
        "matches_finished": len(durations),
        "match_seconds_mean": round(mean, 2),
        "match_seconds_p95": round(percentile(durations, 95), 2),
        "capacity_matches_per_minute": round(slots * 60 / mean, 2),
        "finished_per_minute_observed": round(len(durations) * 60 / seconds, 2),
    }


def wait_figures(rows: list[tuple[Any, ...]], now: datetime) -> dict[str, Any]:
    waits, ages = [], []
    for _, status, created_at, started_at, *_ in rows:
        created, started = when(created_at), when(started_at)
        if created is None:
            continue
        if started is not None:
            waits.append((started - created).total_seconds())
        elif status in ("NEW", "QUEUED"):
            ages.append((now - created).total_seconds())
    return {
        "start_wait_p50_s": round(percentile(waits, 50), 2),
        "start_wait_p95_s": round(percentile(waits, 95), 2),
        "start_wait_max_s": round(max(waits), 2) if waits else 0.0,
        "still_waiting": len(ages),
        "still_waiting_oldest_s": round(max(ages), 2) if ages else 0.0,
    }


def fault_figures(stack: OverloadStack, after_id: int, last_id: int) -> dict[str, Any]:
    """Faults charged to bots in matches after_id < id <= last_id, by cause; all are the server's here."""
    out: Counter[str] = Counter()
    examples: list[str] = []
    seats: Counter[str] = Counter()
    for match_id, forfeited, end_reason, faults, is_house, policy in stack.query(
        SEATS_SQL, (after_id, last_id)
    ):
        listed = json.loads(faults) if isinstance(faults, str) else list(faults or [])
        seats[str(policy) if is_house else "remote"] += 1
        for fault in listed:
            if is_house:
                out[f"house_{policy}_{fault.get('kind')}"] += 1
                out["house_seat_faults"] += 1
            elif fault.get("kind") == "timeout":
                out["remote_timeouts"] += 1
            else:
                out[f"remote_{fault.get('kind')}"] += 1
            if len(examples) < 5:
                examples.append(f"match {match_id}: {fault.get('kind')} {fault.get('reason')}")
        if forfeited:
            out["forfeits"] += 1
            out[f"forfeits_{end_reason or 'unknown'}"] += 1
    summary: dict[str, Any] = {"remote_timeouts": 0, "house_seat_faults": 0, "forfeits": 0, **out}
    summary["server_caused_total"] = sum(
        summary[k] for k in ("remote_timeouts", "house_seat_faults", "forfeits")
    ) + sum(v for k, v in out.items() if k.startswith("remote_") and k != "remote_timeouts")
    summary["examples"] = examples
    summary["seats_by_player"] = dict(seats)
    return summary


def overload_figures(
    stack: OverloadStack, rows: list[tuple[Any, ...]], sampler: Sampler, done_before: int
) -> dict[str, Any]:
    statuses = Counter(str(r[1]) for r in rows)
    queued_now = int(stack.query("SELECT COUNT(*) FROM matches_match WHERE status = 'QUEUED'")[0][0])
    by_ladder = Counter(int(r[5]) for r in rows)
    return {
        "matches_created": len(rows),
        "matches_started": sum(1 for r in rows if r[3] is not None),
        "matches_finished": statuses["DONE"],
        "matches_finished_all": stack.done_count() - done_before,
        "statuses": dict(statuses),
        "created_by_ladder": {str(k): v for k, v in sorted(by_ladder.items())},
        "retried": sum(1 for r in rows if int(r[6]) > 1),
        "queued_at_end": queued_now,
        "queued_peak": sampler.peak["QUEUED"],
        "new_peak": sampler.peak["NEW"],
        "running_peak": sampler.peak["RUNNING"],
        "running_mean": sampler.mean("RUNNING"),
        "queued_mean": sampler.mean("QUEUED"),
        "tables_in_flight_mean": sampler.mean("IN_FLIGHT"),
        "tables_in_flight_peak": sampler.peak["IN_FLIGHT"],
        "tables_held_for_capacity_mean": sampler.mean("HELD"),
        "tables_held_for_capacity_peak": sampler.peak["HELD"],
        "tables_offered_mean": sampler.mean("OFFERED"),
        "held_reasons": dict(sampler.reasons.most_common(6)),
        "share_of_time_with_a_table_waiting": sampler.mean("WAITING_SAMPLES"),
        "search_seats_peak": sampler.peak["SEARCH_SEATS"],
        "search_seats_limit": SEARCH_SEATS,
        **wait_figures(rows, stack.now_db()),
    }


def stack_env(slots: int) -> dict[str, str]:
    return {
        "CARAVANSERAI_MATCHES_PER_WORKER": str(slots),
        "CARAVANSERAI_SEARCH_PROCESSES": str(SEARCH_PROCESSES),
        "CARAVANSERAI_SEARCH_SEATS": str(SEARCH_SEATS),
        "CARAVANSERAI_MAX_QUEUED_PER_LADDER": "4",
        "CARAVANSERAI_LEASE_SECONDS": "15",
        "LADDER_LOG_LEVEL": "WARNING",
    }


def measure(stack: OverloadStack, slots: int, calibrate_s: float, overload_s: float) -> dict[str, Any]:
    ids = stack.bot_ids()
    search_bots = stack.configure("calibration")
    stack.start_bots(ids[:slots])
    say(f"calibration: {slots} bots x {BOT_CAPACITY} slots on the 2-player ladder, {calibrate_s:.0f}s")
    calibration_sampler = Sampler(search_bots)
    run_phase(stack, calibrate_s, calibration_sampler)
    calibration_rows = matches_after(stack, 0)
    calibration = calibration_figures(calibration_rows, slots, calibrate_s)
    calibration["running_mean"] = calibration_sampler.mean("RUNNING")
    calibration["queued_peak"] = calibration_sampler.peak["QUEUED"]
    last_calibration = max((int(r[0]) for r in calibration_rows), default=0)
    calibration["faults"] = fault_figures(stack, 0, last_calibration)
    say(f"calibration: {json.dumps(calibration)}")
    done_before = stack.done_count()
    stack.configure("overload")
    stack.start_bots(ids[slots:])
    say(f"overload: {len(ids)} bots, the 3-player ladder open with house bots, {overload_s:.0f}s")
    sampler = Sampler(search_bots)
    run_phase(stack, overload_s, sampler)
    rows = matches_after(stack, last_calibration)
    overload = overload_figures(stack, rows, sampler, done_before)
    last_id = max((int(r[0]) for r in rows), default=last_calibration)
    overload["faults"] = fault_figures(stack, last_calibration, last_id)
    calibration["remote_slots"] = slots * BOT_CAPACITY
    overload["remote_slots"] = len(ids) * BOT_CAPACITY
    overload["worker_slots"] = slots
    overload["offered_over_slots"] = round(overload["tables_offered_mean"] / slots, 2)
    return {"calibration": calibration, "overload": overload}


def main() -> int:
    overload_s = env_number("OVERLOAD_SECONDS", 300)
    calibrate_s = env_number("OVERLOAD_CALIBRATION_SECONDS", 120)
    slots = int(env_number("OVERLOAD_SLOTS", 4))
    bots = int(env_number("OVERLOAD_BOTS", 4 * slots))
    if bots < 2 * slots:
        raise SystemExit(f"OVERLOAD_BOTS must be at least twice OVERLOAD_SLOTS ({2 * slots}), not {bots}")
    think = env_number("OVERLOAD_THINK", 0.1)
    data: dict[str, Any] = {
        "database": "postgresql" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite",
        "broker": "redis" if os.environ.get("REDIS_URL") else "sqlite",
        "think_s": think,
        "bot_capacity": BOT_CAPACITY,
        "load_average_at_start": load_average(),
    }
    say(f"load average at start {data['load_average_at_start']}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        stack = OverloadStack(
            Path(tmp), workers=1, bots=bots, bot_delay=think, bot_concurrency=BOT_CAPACITY,
            env=stack_env(slots),
        )  # fmt: skip
        try:
            stack.start()
            data.update(measure(stack, slots, calibrate_s, overload_s))
        finally:
            data["load_average_at_end"] = load_average()
            stack.stop()
    data["seconds"] = round(time.monotonic() - started, 1)
    say(f"load average at end {data['load_average_at_end']}")
    report(data)
    write_results("overload", data)
    return 0


def report(data: dict[str, Any]) -> None:
    c, o = data["calibration"], data["overload"]
    print(
        f"\ncapacity: {c['capacity_matches_per_minute']} matches/min ({o['worker_slots']} slots, "
        f"match {c['match_seconds_mean']}s mean; observed {c['finished_per_minute_observed']}/min)"
    )
    print(
        f"overload: {o['remote_slots']} remote bot slots (calibration {c['remote_slots']}) and house seats"
        f" for {o['worker_slots']} worker slots: "
        f"created {o['matches_created']}, started {o['matches_started']}, finished {o['matches_finished']}"
        f" ({o['matches_finished_all']} in all); queued at end {o['queued_at_end']}, peak {o['queued_peak']}"
    )
    print(
        f"start wait p50 {o['start_wait_p50_s']}s, p95 {o['start_wait_p95_s']}s; still waiting "
        f"{o['still_waiting']} (oldest {o['still_waiting_oldest_s']}s); running peak {o['running_peak']}, "
        f"mean {o['running_mean']}; search seats peak {o['search_seats_peak']} / {o['search_seats_limit']}"
    )
    f = o["faults"]
    print(
        f"tables in flight (running + waiting) mean {o['tables_in_flight_mean']}, peak "
        f"{o['tables_in_flight_peak']}; held back for capacity mean {o['tables_held_for_capacity_mean']}, peak "
        f"{o['tables_held_for_capacity_peak']}; offered {o['offered_over_slots']}x the worker's slots; a table "
        f"waiting {o['share_of_time_with_a_table_waiting']:.0%} of the time"
    )
    print(f"held back because: {o['held_reasons']}")
    print(
        f"faults charged to bots (goal 0, all server-caused): remote timeouts {f['remote_timeouts']}, "
        f"house seat faults {f['house_seat_faults']}, forfeits {f['forfeits']}; total {f['server_caused_total']}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
