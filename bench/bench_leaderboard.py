"""Leaderboard API throughput against a plain Django JSON view of the same rows, measured side by side in
one run: cached vs uncached API pages, and a deep cursor page vs the first page.

Everything runs in this process through Django's full request stack (middleware, URL routing, views) with
the test client, on a throw-away test database (SQLite by default; PostgreSQL and Redis when DATABASE_URL /
REDIS_URL are set). The data is a synthetic ladder of 2,000 rated bots drawn from a fixed seed (load data,
not real results). Variants are interleaved in rounds; the table shows the median requests per second.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

ROUNDS = 12
SECONDS_PER_ROUND = 0.5
BOTS = 2000
PAGE_SIZE = 50
DEEP_PAGE = 30  # the 30th page of 40

urlpatterns: list[Any] = []  # filled in `_urls()` once Django is set up (this module is the ROOT_URLCONF)


def _plain_view(request, ladder_id: int):  # type: ignore[no-untyped-def]
    """The baseline: one query, `values()`, JsonResponse; no DRF, no cursor, no cache, no ranks."""
    from django.http import JsonResponse

    from ladder.ratings.models import Rating

    rows = list(
        Rating.objects.filter(ladder_id=ladder_id, bot__active=True, games__gte=1)
        .order_by("-elo", "id")
        .values(
            "bot_id",
            "bot__name",
            "bot__owner__username",
            "elo",
            "mu",
            "sigma",
            "games",
            "wins",
            "last_played_at",
        )[:PAGE_SIZE]
    )
    return JsonResponse({"results": rows})


def _urls() -> None:
    from django.urls import include, path

    urlpatterns[:] = [
        path("plain/leaderboard/<int:ladder_id>/", _plain_view),
        path("", include("ladder.urls")),
    ]


def _populate() -> int:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from engine_service.games.rng import ChanceRng
    from ladder.bots.models import Bot
    from ladder.ladders.services import ladder_create
    from ladder.ratings.models import Rating

    ladder = ladder_create(game_id="expedition-v1", num_players=2)
    owners = [get_user_model().objects.create_user(f"owner{i}") for i in range(20)]
    bots = Bot.objects.bulk_create(
        [Bot(owner=owners[i % 20], name=f"load-bot-{i:04d}", games=["expedition-v1"]) for i in range(BOTS)]
    )
    rng = ChanceRng(7)
    now = timezone.now()
    Rating.objects.bulk_create(
        [
            Rating(
                ladder=ladder,
                bot=bot,
                elo=1200 + rng.randbelow(6000) / 10,
                mu=20 + rng.randbelow(1000) / 100,
                sigma=2 + rng.randbelow(500) / 100,
                games=1 + rng.randbelow(300),
                wins=rng.randbelow(100),
                last_played_at=now,
            )
            for bot in bots
        ]
    )
    return ladder.pk


def _rate(client, url: str, seconds: float) -> float:  # type: ignore[no-untyped-def]
    count = 0
    started = time.perf_counter()
    while True:
        response = client.get(url)
        if response.status_code != 200:
            raise RuntimeError(f"{url} answered {response.status_code}: {response.content[:200]!r}")
        count += 1
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return count / elapsed


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings.test")
    import django

    django.setup()
    from django.conf import settings
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import override_settings, setup_test_environment, teardown_test_environment

    from bench.common import print_table, write_results

    _urls()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with override_settings(ROOT_URLCONF=__name__):
            ladder_id = _populate()
            client = Client()
            api = f"/api/v1/ladders/{ladder_id}/leaderboard/?page_size={PAGE_SIZE}"
            url = api
            for _ in range(DEEP_PAGE - 1):
                url = client.get(url).json()["next"]
            deep = url.replace("http://testserver", "")
            variants = {
                "plain Django JSON view (first page)": (f"/plain/leaderboard/{ladder_id}/", None),
                "API first page, cached": (api, True),
                "API first page, uncached": (api, False),
                f"API page {DEEP_PAGE} (cursor), cached": (deep, True),
                f"API page {DEEP_PAGE} (cursor), uncached": (deep, False),
            }
            rates: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(ROUNDS):
                for name, (path, cached) in variants.items():
                    seconds = settings.LADDER_LEADERBOARD_CACHE_SECONDS if cached is not False else 0
                    with override_settings(LADDER_LEADERBOARD_CACHE_SECONDS=seconds or 300 if cached else 0):
                        cache.clear() if cached is False else None
                        client.get(path)  # warm (fills the cache for the cached variants)
                        rates[name].append(_rate(client, path, SECONDS_PER_ROUND))
            medians = {name: statistics.median(values) for name, values in rates.items()}
            plain = medians["plain Django JSON view (first page)"]
            first_uncached = medians["API first page, uncached"]
            rows = [
                [name, f"{rps:,.0f}", f"{rps / plain:.2f}", f"{rps / first_uncached:.2f}"]
                for name, rps in medians.items()
            ]
            print(
                f"database {connection.vendor}, cache {settings.CACHES['default']['BACKEND'].rsplit('.', 1)[-1]}, "
                f"{BOTS} rated bots, page size {PAGE_SIZE}, {ROUNDS} interleaved rounds of {SECONDS_PER_ROUND}s"
            )
            print_table(["variant", "req/s (median)", "vs plain", "vs API first uncached"], rows)
            write_results(
                "leaderboard",
                {
                    "database": connection.vendor,
                    "cache": settings.CACHES["default"]["BACKEND"],
                    "bots": BOTS,
                    "page_size": PAGE_SIZE,
                    "deep_page": DEEP_PAGE,
                    "rounds": ROUNDS,
                    "seconds_per_round": SECONDS_PER_ROUND,
                    "requests_per_second": {name: round(v, 1) for name, v in medians.items()},
                    "all_rounds": {name: [round(v, 1) for v in values] for name, values in rates.items()},
                    "ratios_vs_plain": {name: round(v / plain, 3) for name, v in medians.items()},
                    "cached_over_uncached_first_page": round(
                        medians["API first page, cached"] / first_uncached, 3
                    ),
                    "deep_over_first_page_uncached": round(
                        medians[f"API page {DEEP_PAGE} (cursor), uncached"] / first_uncached, 3
                    ),
                },
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
