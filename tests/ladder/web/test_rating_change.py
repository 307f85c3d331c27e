"""The match page's rating-change panel: each seat's rating before and after, from the ledger; none for a
match that is not rated (yet)."""

from __future__ import annotations

import pytest

from ladder.matches.services import match_create
from ladder.ratings.models import RatingLedger
from tests.ladder.conftest import play

pytestmark = pytest.mark.django_db


def test_the_match_page_shows_each_seats_rating_change(client, ladder2, make_bot):
    first, second = make_bot(name="Before Bot"), make_bot(name="After Bot")
    play(ladder2, [first, second], 901)
    match = play(ladder2, [second, first], 902)
    page = client.get(f"/matches/{match.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    panel = html[html.index('id="rating-change"') : html.index('id="replay"')]
    assert f"/api/v1/matches/{match.pk}/rating-change/" in panel and "season 1" in panel
    for row in RatingLedger.objects.filter(match=match).order_by("seat"):
        delta = row.elo_after - row.elo_before
        assert f"{row.elo_before:.1f}</td>" in panel and f"{row.elo_after:.1f}</td>" in panel
        assert f"{'+' if delta > 0 else ''}{delta:.1f}</td>" in panel
        assert f"{row.mu_before:.2f} → {row.mu_after:.2f}" in panel
    assert panel.index("After Bot") < panel.index("Before Bot")  # seat order


def test_no_panel_before_the_match_is_rated(client, ladder2, make_bot):
    bots = [make_bot(), make_bot()]
    queued = match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in bots], seed=903)
    html = client.get(f"/matches/{queued.pk}/").content.decode()
    assert 'id="rating-change"' not in html and "changed no rating" not in html
