"""The web server's Prometheus endpoint (`/metrics`, prometheus-client): matches queued, running and
finished per ladder, and rating rows whose counts cannot be right (more wins than games), counted from the
database at scrape time, so every web process reports the same truth; and, from the session registry's
capacity reports, the tables matchmaking holds back for capacity per ladder and each live worker's free
threads and search-pool wait.

Set LADDER_METRICS_TOKEN to require `Authorization: Bearer <token>`; unset, the endpoint is open (it shows
counts only, never a seed, a hand or a bot's token). Workers and gateways serve their own process metrics.

Layer: a read-only view over the database. It must not write or cache.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator

from django.conf import settings
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from engine_service.gateway.registry import CapacityReport
from ladder.bots.presence import registry
from ladder.ladders.capacity import held_tables
from ladder.ladders.models import Ladder
from ladder.matches.models import Match
from ladder.ratings.audit import rating_rows_inconsistent


class LadderCollector(Collector):
    """`caravanserai_matches{ladder, game, status}`: how many matches each ladder has in each status."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "caravanserai_matches",
            "Matches per ladder and status (QUEUED and RUNNING are the queue and the matches in flight)",
            labels=["ladder", "game", "status"],
        )
        rows = Match.objects.values("ladder__slug", "ladder__game_id", "status").annotate(n=Count("id"))
        for row in rows.order_by("ladder__slug", "status"):
            family.add_metric([row["ladder__slug"], row["ladder__game_id"], row["status"]], row["n"])
        yield family


class InconsistentRatingsCollector(Collector):
    """`caravanserai_rating_rows_inconsistent{ladder, game}`: rating rows with more wins than games (0 for a
    sound ladder); the leaderboard shows them without a win rate interval, `ratings_recompute --check`
    names what differs from the match records."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "caravanserai_rating_rows_inconsistent",
            "Rating rows per ladder whose wins exceed their games (bad data: audit with ratings_recompute --check)",
            labels=["ladder", "game"],
        )
        counts = dict(
            rating_rows_inconsistent()
            .values("ladder_id")
            .annotate(n=Count("id"))
            .values_list("ladder_id", "n")
        )
        for ladder_id, slug, game_id in Ladder.objects.order_by("slug").values_list("id", "slug", "game_id"):
            family.add_metric([slug, game_id], counts.get(ladder_id, 0))
        yield family


class CapacityCollector(Collector):
    """`caravanserai_tables_waiting_for_capacity{ladder}` (matchmaking's last run) and, per live worker,
    `caravanserai_worker_free_threads{worker}` and `caravanserai_worker_search_longest_wait_seconds{worker}`."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        held = GaugeMetricFamily(
            "caravanserai_tables_waiting_for_capacity",
            "Tables matchmaking held back in its last run until workers, search pools and gateways have room",
            labels=["ladder"],
        )
        waiting = held_tables().per_ladder
        for slug in Ladder.objects.filter(active=True).order_by("slug").values_list("slug", flat=True):
            held.add_metric([slug], waiting.get(slug, 0))
        yield held
        free = GaugeMetricFamily(
            "caravanserai_worker_free_threads", "Match threads a live worker reports free", labels=["worker"]
        )
        wait = GaugeMetricFamily(
            "caravanserai_worker_search_longest_wait_seconds",
            "The longest wait of a search decision for a free search process in the last 30 s, per worker",
            labels=["worker"],
        )
        for worker, report in sorted(_worker_reports().items()):
            free.add_metric([worker], max(0, report.payload["threads"] - report.payload["busy"]))
            wait.add_metric([worker], report.payload["search_longest_wait"])
        yield free
        yield wait


def _worker_reports() -> dict[str, CapacityReport]:
    try:
        return registry().capacity_reports("worker")
    except Exception:  # the registry away: no worker figures this scrape
        return {}


REGISTRY = CollectorRegistry(auto_describe=False)
REGISTRY.register(LadderCollector())
REGISTRY.register(InconsistentRatingsCollector())
REGISTRY.register(CapacityCollector())


def metrics_view(request: HttpRequest) -> HttpResponse:
    token = getattr(settings, "LADDER_METRICS_TOKEN", "")
    if token:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            return HttpResponse(
                "metrics need the operator's bearer token\n", status=401, content_type="text/plain"
            )
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)
