"""No 500 from data: a rating row with more wins than games (a bad import, a bug) is shown without a win
rate interval on every standings view, warned about in the admin and counted in /metrics.

The broken ladder is made once for the module (`module_db`); each test's changes roll back after it."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ladder.ratings.audit import rating_rows_inconsistent
from ladder.ratings.models import Rating
from ladder.ratings.standing import counts_consistent
from tests.ladder.conftest import Field, field, play

pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("ratings-consistency")]
API = "/api/v1/"


@pytest.fixture(scope="module")
def broken(module_db) -> Field:
    """A ladder whose first bot's row says 57 wins in 43 games (the row seen answering 500), beside an
    unplayed one."""
    broken = field(3, name="Counted")
    ladder2, _ladder4, _owner, bots = broken
    for seed in range(1, 5):
        play(ladder2, [bots[seed % 3], bots[(seed + 1) % 3]], 700 + seed)
    Rating.objects.filter(ladder=ladder2, bot=bots[0]).update(games=43, wins=57)
    return broken


def test_counts_consistent():
    assert counts_consistent(0, 0) and counts_consistent(43, 43) and counts_consistent(1.5, 2)
    assert not counts_consistent(57, 43) and not counts_consistent(-1, 4)


def test_standings_show_an_inconsistent_row_without_an_interval(api, client, broken):
    ladder2, bots = broken.ladder2, broken.bots
    response = api.get(f"{API}ladders/{ladder2.pk}/leaderboard/")
    assert response.status_code == 200, response.content
    rows = {
        r["bot"]["id"] if isinstance(r.get("bot"), dict) else r["bot_id"]: r
        for r in response.json()["results"]
    }
    bad = rows[bots[0].pk]
    assert bad["games"] == 43 and bad["wins"] == 57
    assert bad["win_rate_low"] is None and bad["win_rate_high"] is None
    good = rows[bots[1].pk]
    assert good["win_rate_low"] is not None and good["win_rate_low"] <= good["win_rate_high"]
    assert api.get(f"{API}bots/{bots[0].pk}/ratings/").status_code == 200
    assert client.get(f"/ladders/{ladder2.slug}/").status_code == 200
    assert client.get(f"/bots/{bots[0].pk}/").status_code == 200


def test_the_admin_warns_and_filters(client, staff_user, broken):
    ladder2, bots = broken.ladder2, broken.bots
    staff_user.is_superuser = True
    staff_user.save()
    client.force_login(staff_user)
    page = client.get("/admin/ratings/rating/")
    assert page.status_code == 200
    assert "1 rating row has more wins than games" in page.content.decode()
    filtered = client.get("/admin/ratings/rating/?counts=inconsistent")
    assert filtered.status_code == 200 and "Counted 0" in filtered.content.decode()
    assert "Counted 1" not in filtered.content.decode()
    Rating.objects.filter(ladder=ladder2, bot=bots[0]).update(games=57)
    assert "rating row has more wins" not in client.get("/admin/ratings/rating/").content.decode()


def test_metrics_count_inconsistent_rows_per_ladder(client, broken):
    ladder2, ladder4, _owner, bots = broken
    response = client.get("/metrics")
    assert response.status_code == 200
    families = {f.name: f for f in text_string_to_metric_families(response.content.decode())}
    samples = {s.labels["ladder"]: s.value for s in families["caravanserai_rating_rows_inconsistent"].samples}
    assert samples == {ladder2.slug: 1.0, ladder4.slug: 0.0}
    assert list(rating_rows_inconsistent(ladder_id=ladder2.pk).values_list("bot_id", flat=True)) == [
        bots[0].pk
    ]
