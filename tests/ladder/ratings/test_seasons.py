"""Seasons: closing one freezes its standings (browsable over REST and as a page), the next starts from
each bot's rating carried over (mu kept, sigma widened, games from zero), and `ratings_recompute` replays
the carry-over exactly."""

from __future__ import annotations

import math

import pytest
from django.test import Client

from ladder.ladders.models import Ladder
from ladder.ratings.models import Rating, RatingLedger
from ladder.ratings.seasons import season_close
from ladder.ratings.selectors import leaderboard_standings
from ladder.ratings.services import ratings_recompute
from tests.ladder.conftest import play

pytestmark = pytest.mark.django_db
API = "/api/v1/"


@pytest.fixture
def staff_api(api, staff_user):
    api.force_authenticate(staff_user)
    return api


def test_close_freezes_standings_and_carries_ratings_over(
    api, staff_api, alice_api, ladder2, make_bot, django_capture_on_commit_callbacks
):
    bots = [make_bot(name=f"Season {i}") for i in range(3)]
    for seed in range(1, 7):
        play(ladder2, [bots[seed % 3], bots[(seed + 1) % 3]], 600 + seed)
    board = leaderboard_standings(ladder=ladder2)
    url = f"{API}ladders/{ladder2.pk}/seasons/"
    assert alice_api.post(f"{url}close/", {}, format="json").status_code == 403
    closed = staff_api.post(f"{url}close/", {"name": "Spring"}, format="json")
    assert closed.status_code == 201 and closed.json()["number"] == 1 and closed.json()["bots"] == 3
    assert api.get(url).json()["current"] == 2
    frozen = api.get(f"{url}1/").json()
    assert frozen["season"]["name"] == "Spring"
    assert [(r["bot"]["id"], r["rank"], r["tier"], r["games"]) for r in frozen["standings"]] == [
        (r.bot_id, r.rank, r.tier, r.games) for r in board
    ]
    assert api.get(f"{API}ladders/{ladder2.pk}/leaderboard/").json()["results"] == []  # a fresh board
    assert api.get(f"{API}ladders/{ladder2.pk}/").json()["rated_bots"] == 0
    last = RatingLedger.objects.filter(bot=bots[0]).order_by("-id").first()
    with django_capture_on_commit_callbacks(execute=True):  # the result invalidates the cached board
        match = play(ladder2, [bots[0], bots[1]], 700)
    first = RatingLedger.objects.get(match=match, bot=bots[0])
    assert first.season == 2 and first.mu_before == last.mu_after and first.elo_before == last.elo_after
    widened = min(
        ladder2.openskill_sigma, math.sqrt(last.sigma_after**2 + (0.5 * ladder2.openskill_sigma) ** 2)
    )
    assert first.sigma_before == pytest.approx(widened)
    rating = Rating.objects.get(bot=bots[0], ladder=ladder2)
    assert (rating.season, rating.games) == (2, 1)
    assert [r["bot"]["id"] for r in api.get(f"{API}ladders/{ladder2.pk}/leaderboard/").json()["results"]] in (
        [bots[0].pk, bots[1].pk],
        [bots[1].pk, bots[0].pk],
    )
    report = ratings_recompute(write=False)
    assert report.identical, (report.ledger_mismatches, report.rating_differences)
    # the frozen standings do not move when the new season is played
    assert api.get(f"{url}1/").json()["standings"] == frozen["standings"]


def test_season_pages_and_errors(client: Client, api, ladder2, make_bot):
    a, b = make_bot(name="Early"), make_bot(name="Late")
    play(ladder2, [a, b], 801)
    season_close(ladder_id=ladder2.pk)
    season_close(ladder_id=ladder2.pk, name="Empty one")  # nobody played season 2
    board = client.get(f"/ladders/{ladder2.slug}/").content.decode()
    assert 'id="past-seasons"' in board and "season 3" in board and "Empty one" in board
    page = client.get(f"/ladders/{ladder2.slug}/seasons/1/").content.decode()
    assert 'id="season-standings"' in page and "Early" in page and "Late" in page
    assert "Nobody played this season" in client.get(f"/ladders/{ladder2.slug}/seasons/2/").content.decode()
    assert client.get(f"/ladders/{ladder2.slug}/seasons/9/").status_code == 404
    assert api.get(f"{API}ladders/{ladder2.pk}/seasons/9/").status_code == 404
    assert api.get(f"{API}ladders/999999/seasons/").status_code == 404
    assert Ladder.objects.get(pk=ladder2.pk).season == 3
    assert ratings_recompute(write=False).identical
