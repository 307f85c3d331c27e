"""The web server's Prometheus endpoint (`/metrics`, prometheus-client): matches queued, running and
finished per ladder, counted from the database at scrape time, so every web process reports the same truth.

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

from ladder.matches.models import Match


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


REGISTRY = CollectorRegistry(auto_describe=False)
REGISTRY.register(LadderCollector())


def metrics_view(request: HttpRequest) -> HttpResponse:
    token = getattr(settings, "LADDER_METRICS_TOKEN", "")
    if token:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            return HttpResponse(
                "metrics need the operator's bearer token\n", status=401, content_type="text/plain"
            )
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)
