"""What a leaderboard costs against the ladder's size: CPU per uncached request at 10, 1,000, 10,000 and
100,000 rated bots, for the first page and a deep page (90% of the way down), the leaderboard web page
(board page, win rate by seat) and the ladder's API record with its rated-bot count, as ratios to the
10-bot ladder; beside them, what placing the whole board from scratch costs (what every uncached page cost before
the board was maintained: every listed row loaded and placed by `standing.place`), and what one rated
two-seat match costs now that its transaction also moves the seats on the maintained board (and, beside
it, the same match with the board left alone, as before).

Everything runs in this process through Django's full request stack with the test client, on a throw-away
database (SQLite by default; PostgreSQL and Redis when DATABASE_URL / REDIS_URL are set: the database is
named `test_bench_leaderboard`, never the test suite's; results in results/leaderboard.json, or
leaderboard-sqlite.json for a run on SQLite). CPU is this process's plus, on PostgreSQL, the
database backend's (read from /proc), per request; the pages are served uncached (the cache is off). Each
variant runs for at least `BATCH_SECONDS` per round, the sizes and variants interleaved in `ROUNDS` rounds;
the table shows medians. A rated match is rolled back after it is measured, so every round sees the same
boards. The ladders are synthetic (load data from a fixed seed, not real results). The machine's load
average is printed before and after: the figures are only comparable with each other within one run.
"""

from __future__ import annotations

import base64
import contextlib
import math
import os
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

SIZES = (10, 1_000, 10_000, 100_000)
PAGE_SIZE = 50
DEEP = 0.9  # the deep page starts 90% of the way down the board
ROUNDS = 5
BATCH_SECONDS = 0.4
DATABASE_NAME = "test_bench_leaderboard"


def _populate(size: int, seed: int) -> int:
    """A ladder of `size` rated bots (skills spread as a ladder's are: sigma narrowing with games), its
    maintained board built once; the ladder's id."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from engine_service.games.rng import ChanceRng
    from ladder.bots.models import Bot
    from ladder.ladders.services import ladder_create
    from ladder.ratings.board import board_rebuild
    from ladder.ratings.elo import conservative
    from ladder.ratings.models import Rating

    ladder = ladder_create(game_id="expedition-v1", num_players=2, slug=f"size-{size}", name=f"{size} bots")
    users = get_user_model().objects
    owners = [users.create_user(f"owner-{size}-{i}") for i in range(20)]
    bots = Bot.objects.bulk_create(
        [Bot(owner=owners[i % 20], name=f"b{size}-{i}", games=["expedition-v1"]) for i in range(size)],
        batch_size=5000,
    )
    rng, now, rows = ChanceRng(seed), timezone.now(), []
    for bot in bots:
        games = 1 + rng.randbelow(300)
        sigma = max(0.8, 25 / 3 / math.sqrt(1 + games / 8)) + rng.randbelow(50) / 100
        mu = 15 + rng.randbelow(2001) / 100
        rows.append(
            Rating(
                ladder=ladder,
                bot=bot,
                elo=1200 + rng.randbelow(6000) / 10,
                mu=mu,
                sigma=sigma,
                conservative=conservative(mu, sigma),
                games=games,
                wins=rng.randbelow(games + 1),
                last_played_at=now,
            )
        )
    Rating.objects.bulk_create(rows, batch_size=5000)
    board_rebuild(ladder_id=ladder.pk)
    return ladder.pk


def _cursor_url(ladder_id: int, start: int, page_size: int = PAGE_SIZE) -> str:
    url = f"/api/v1/ladders/{ladder_id}/leaderboard/?page_size={page_size}"
    if start == 0:
        return url
    return url + "&cursor=" + base64.b64encode(f"p={start}".encode()).decode()


class _Cpu:
    """CPU seconds of this process and, on PostgreSQL, of its database backend."""

    def __init__(self) -> None:
        from django.db import connection

        self.backend: int | None = None
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                self.backend = int(cursor.fetchone()[0])

    def seconds(self) -> float:
        from bench.procfs import cpu_seconds

        return time.process_time() + (cpu_seconds([self.backend]) if self.backend else 0.0)


def _per_call(cpu: _Cpu, call: Callable[[], None]) -> tuple[float, float]:
    """(CPU ms, wall ms) per call, over calls made for at least BATCH_SECONDS."""
    count, started, cpu_started = 0, time.perf_counter(), cpu.seconds()
    while True:
        call()
        count += 1
        elapsed = time.perf_counter() - started
        if elapsed >= BATCH_SECONDS:
            return (cpu.seconds() - cpu_started) * 1000 / count, elapsed * 1000 / count


def _get(client: Any, url: str, expect_rows: int) -> Callable[[], None]:
    def call() -> None:
        response = client.get(url)
        if response.status_code != 200:
            raise RuntimeError(f"{url} answered {response.status_code}: {response.content[:200]!r}")
        if len(response.json()["results"]) != expect_rows:
            raise RuntimeError(f"{url}: {len(response.json()['results'])} rows, expected {expect_rows}")

    return call


def _page(client: Any, url: str, expect: str) -> Callable[[], None]:
    def call() -> None:
        response = client.get(url)
        if response.status_code != 200 or expect.encode() not in response.content:
            raise RuntimeError(f"{url} answered {response.status_code} without {expect!r}")

    return call


def _from_scratch(ladder_id: int) -> Callable[[], None]:
    """The board computed as every uncached page computed it before it was maintained."""
    from ladder.ladders.models import Ladder
    from ladder.ratings.models import Rating
    from ladder.ratings.standing import place, wilson_interval

    def call() -> None:
        ladder = Ladder.objects.get(pk=ladder_id)
        rows = list(
            Rating.objects.filter(ladder_id=ladder_id, season=ladder.season, bot__active=True, games__gte=1)
            .order_by("id")
            .values(
                "id", "elo", "mu", "sigma", "games", "wins", "bot_id", "bot__name", "bot__owner__username"
            )
        )
        placed = place([(r["mu"], r["sigma"]) for r in rows], provisional_sigma=ladder.provisional_sigma)
        for p in placed[:PAGE_SIZE]:
            wilson_interval(rows[p.index]["wins"], rows[p.index]["games"])

    return call


def _rated_match(ladder_id: int, seed: int, *, board: bool = True) -> Callable[[], None]:
    """One two-seat result rated (ledger rows, ratings, board moves; without `board`, the board left
    alone, as before it was maintained), then rolled back."""
    from django.db import transaction
    from django.utils import timezone

    from engine_service.games.rng import ChanceRng
    from ladder.ladders.models import Ladder
    from ladder.matches.services import match_create
    from ladder.ratings.models import Rating
    from ladder.ratings.services import SeatOutcome, ratings_apply_match

    ladder = Ladder.objects.get(pk=ladder_id)
    bots = list(Rating.objects.filter(ladder_id=ladder_id).order_by("id").values_list("bot_id", flat=True))
    rng = ChanceRng(seed)

    def call() -> None:
        a = bots[rng.randbelow(len(bots))]
        b = bots[(bots.index(a) + 1 + rng.randbelow(len(bots) - 1)) % len(bots)]
        with transaction.atomic(), _board_kept(board):
            match = match_create(ladder_id=ladder_id, bot_ids=[a, b], seed=1)
            outcomes = [SeatOutcome(0, a, 1, None), SeatOutcome(1, b, 2, None)]
            ratings_apply_match(
                ladder=ladder, match_id=match.pk, outcomes=outcomes, finished_at=timezone.now()
            )
            transaction.set_rollback(True)

    return call


@contextlib.contextmanager
def _board_kept(kept: bool) -> Iterator[None]:
    if kept:
        yield
        return
    with mock.patch("ladder.ratings.services.board_place"):
        yield


def _measure(ladders: dict[int, int]) -> dict[str, dict[int, list[tuple[float, float]]]]:
    from django.test import Client

    client, cpu = Client(), _Cpu()
    variants: dict[str, dict[int, Callable[[], None]]] = {
        "first page": {n: _get(client, _cursor_url(i, 0), min(n, PAGE_SIZE)) for n, i in ladders.items()},
        f"first page of {SIZES[0]} rows": {
            n: _get(client, _cursor_url(i, 0, SIZES[0]), SIZES[0]) for n, i in ladders.items()
        },
        "deep page": {
            n: _get(client, _cursor_url(i, int(n * DEEP) // PAGE_SIZE * PAGE_SIZE), min(n, PAGE_SIZE))
            for n, i in ladders.items()
        },
        "leaderboard web page": {
            n: _page(client, f"/ladders/size-{n}/", "Win rate by seat") for n in ladders
        },
        "ladder with its rated-bot count (API)": {
            n: _page(client, f"/api/v1/ladders/{i}/", f'"rated_bots":{n}') for n, i in ladders.items()
        },
        "whole board from scratch": {n: _from_scratch(i) for n, i in ladders.items()},
        "one rated match": {n: _rated_match(i, n) for n, i in ladders.items()},
        "one rated match, board not kept": {n: _rated_match(i, n, board=False) for n, i in ladders.items()},
    }
    samples: dict[str, dict[int, list[tuple[float, float]]]] = {v: {n: [] for n in ladders} for v in variants}
    for round_number in range(ROUNDS):
        for variant, calls in variants.items():
            for size, call in calls.items():
                call()  # warm
                samples[variant][size].append(_per_call(cpu, call))
        print(f"round {round_number + 1}/{ROUNDS} done", flush=True)
    return samples


def _report(samples: dict[str, dict[int, list[tuple[float, float]]]], meta: dict[str, Any]) -> None:
    from bench.common import print_table, write_results

    cpu = {v: {n: statistics.median(s[0] for s in by[n]) for n in by} for v, by in samples.items()}
    wall = {v: {n: statistics.median(s[1] for s in by[n]) for n in by} for v, by in samples.items()}
    smallest, full = SIZES[0], SIZES[1]  # the second ladder is the smallest with a full page of 50
    rows = []
    for variant in samples:
        for size in SIZES:
            ratio, to_full = (cpu[variant][size] / cpu[variant][base] for base in (smallest, full))
            figures = (cpu[variant][size], ratio, to_full, wall[variant][size])
            rows.append([variant, f"{size:,}", *(f"{x:.2f}" for x in figures)])
    headers = ["variant", "bots", "CPU ms (median)", f"vs {smallest:,} bots", f"vs {full:,} bots", "wall ms"]
    print_table(headers, rows)
    write_results(
        "leaderboard" if meta["database"] == "postgresql" else f"leaderboard-{meta['database']}",
        {
            **meta,
            "cpu_ms_per_call": {v: {str(n): round(x, 3) for n, x in by.items()} for v, by in cpu.items()},
            "wall_ms_per_call": {v: {str(n): round(x, 3) for n, x in by.items()} for v, by in wall.items()},
            "ratio_to_smallest": {
                v: {str(n): round(x / by[smallest], 3) for n, x in by.items()} for v, by in cpu.items()
            },
            f"ratio_to_{full}": {
                v: {str(n): round(x / by[full], 3) for n, x in by.items()} for v, by in cpu.items()
            },
            "all_rounds_cpu_ms": {
                v: {str(n): [round(s[0], 3) for s in by[n]] for n in by} for v, by in samples.items()
            },
        },
    )


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings.test")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test.utils import override_settings, setup_test_environment, teardown_test_environment

    setup_test_environment()
    connection.settings_dict.setdefault("TEST", {})["NAME"] = (
        DATABASE_NAME if connection.vendor == "postgresql" else None
    )
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with override_settings(LADDER_LEADERBOARD_CACHE_SECONDS=0):
            load_before = os.getloadavg()
            built = time.perf_counter()
            ladders = {size: _populate(size, seed=7 + size) for size in SIZES}
            built = time.perf_counter() - built
            print(
                f"load average before: {' '.join(f'{x:.2f}' for x in load_before)}; boards built in {built:.0f}s"
            )
            samples = _measure(ladders)
            load_after = os.getloadavg()
            print(
                f"database {connection.vendor}, uncached, page size {PAGE_SIZE}, deep page at {DEEP:.0%}, "
                f"{ROUNDS} interleaved rounds of >= {BATCH_SECONDS}s per variant; "
                f"load average after: {' '.join(f'{x:.2f}' for x in load_after)}"
            )
            _report(
                samples,
                {
                    "database": connection.vendor,
                    "cache": settings.CACHES["default"]["BACKEND"],
                    "sizes": list(SIZES),
                    "page_size": PAGE_SIZE,
                    "deep_page_at": DEEP,
                    "rounds": ROUNDS,
                    "batch_seconds": BATCH_SECONDS,
                    "cpu": "this process + the PostgreSQL backend"
                    if connection.vendor == "postgresql"
                    else "this process",
                    "load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in load_after],
                    "populate_and_build_seconds": round(built, 1),
                },
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
