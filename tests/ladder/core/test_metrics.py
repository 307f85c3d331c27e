"""The web server's Prometheus endpoint: per-ladder match counts by status, read from the database; an
operator's token, when set, is required."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ladder.matches.services import match_create, match_mark_running

pytestmark = pytest.mark.django_db


def scrape(client, **headers) -> dict[tuple[str, str], float]:
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    families = {f.name: f for f in text_string_to_metric_families(response.content.decode())}
    return {
        (s.labels["ladder"], s.labels["status"]): s.value for s in families["caravanserai_matches"].samples
    }


def test_matches_are_counted_per_ladder_and_status(client, ladder2, house_bots):
    ids = [
        match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in house_bots[:2]], seed=s).pk
        for s in (1, 2, 3)
    ]
    assert match_mark_running(match_id=ids[0])
    counts = scrape(client)
    assert counts[(ladder2.slug, "QUEUED")] == 2
    assert counts[(ladder2.slug, "RUNNING")] == 1


def test_the_operators_token_is_required_when_set(client, settings, ladder2):
    settings.LADDER_METRICS_TOKEN = "scrape-secret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert scrape(client, HTTP_AUTHORIZATION="Bearer scrape-secret") == {}
