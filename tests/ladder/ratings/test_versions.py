"""Bot versions with lineage: a new version starts from its parent's rating with a widened sigma (or from
the start values when its owner chose "reset rating"), the ledger records the version of every rated game,
and `ratings_recompute` reproduces all of it."""

from __future__ import annotations

import math

import pytest
from django.db import transaction
from django.utils import timezone

from ladder.bots.models import BotVersion
from ladder.bots.versions import bot_version_set
from ladder.matches.services import match_create
from ladder.ratings import elo
from ladder.ratings.models import Rating, RatingLedger
from ladder.ratings.services import SeatOutcome, ratings_apply_match, ratings_recompute

pytestmark = pytest.mark.django_db
API = "/api/v1/"


def rate(ladder, bots, ranks, versions, seed=[0]):  # noqa: B006 - a counter for fresh seeds
    seed[0] += 1
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=seed[0])
    outcomes = [
        SeatOutcome(seat=i, bot_id=b.pk, rank=r, score=None, version=v)
        for i, (b, r, v) in enumerate(zip(bots, ranks, versions, strict=True))
    ]
    with transaction.atomic():
        return ratings_apply_match(
            ladder=ladder, match_id=match.pk, outcomes=outcomes, finished_at=timezone.now()
        )


def test_version_start_rule():
    params = elo.RatingParams()
    parent = elo.SeatRating(elo=1600.0, mu=30.0, sigma=2.0)
    start = elo.version_start(parent, params, reset=False)
    assert (start.elo, start.mu) == (1600.0, 30.0)
    assert start.sigma == pytest.approx(math.sqrt(2.0**2 + (0.6 * 25 / 3) ** 2))  # 5.39: provisional again
    assert elo.version_start(elo.SeatRating(1600.0, 30.0, 8.0), params, reset=False).sigma == 25 / 3
    assert elo.version_start(parent, params, reset=True) == elo.initial(params)
    change = elo.version_change
    assert change(parent, params, games=5, current="1.0", new="1.0", reset=False) is None
    assert change(parent, params, games=5, current="1.0", new="", reset=False) is None  # unknown continues
    assert change(parent, params, games=5, current="", new="1.0", reset=False) is None  # first known
    assert change(parent, params, games=5, current="", new="1.0", reset=True) == elo.initial(params)
    assert change(parent, params, games=5, current="1.0", new="2.0", reset=False) == start


def test_new_version_inherits_mu_with_a_wider_sigma(ladder2, make_bot, api):
    a, b = make_bot(name="Polo"), make_bot(name="Khan")
    for i in range(6):
        rate(ladder2, [a, b], [1, 2] if i % 3 else [2, 1], ["1.0", "k1"])
    last = RatingLedger.objects.filter(bot=a).order_by("-id").first()
    rows = rate(ladder2, [a, b], [1, 2], ["2.0", "k1"])
    first = rows[0]
    assert first.version == "2.0" and first.mu_before == last.mu_after and first.elo_before == last.elo_after
    widened = math.sqrt(last.sigma_after**2 + (0.6 * ladder2.openskill_sigma) ** 2)
    assert first.sigma_before == pytest.approx(min(widened, ladder2.openskill_sigma))
    assert rows[1].sigma_before == RatingLedger.objects.filter(bot=b).order_by("-id")[1].sigma_after
    v2 = BotVersion.objects.get(bot=a, name="2.0")
    assert v2.parent.name == "1.0" and Rating.objects.get(bot=a, ladder=ladder2).version == "2.0"
    rate(ladder2, [a, b], [2, 1], ["", "k1"])  # unknown version: continues 2.0
    assert Rating.objects.get(bot=a, ladder=ladder2).version == "2.0"
    report = ratings_recompute(write=False)
    assert report.identical, (report.ledger_mismatches, report.rating_differences)
    listed = api.get(f"{API}bots/{a.pk}/versions/").json()
    assert [(v["name"], v["parent"], v["rated_games"]) for v in listed] == [
        ("1.0", None, 6),
        ("2.0", "1.0", 1),
    ]
    history = api.get(f"{API}bots/{a.pk}/history/").json()
    assert [h["version"] for h in history][-3:] == ["1.0", "2.0", ""]


def test_reset_rating_is_the_owners_choice_until_the_version_plays(ladder2, make_bot, alice_api, bob_api):
    a, b = make_bot(name="Polo"), make_bot(name="Khan")
    for _ in range(4):
        rate(ladder2, [a, b], [1, 2], ["1.0", ""])
    url = f"{API}bots/{a.pk}/versions/"
    assert bob_api.post(url, {"name": "3.0", "reset_rating": True}, format="json").status_code == 403
    announced = alice_api.post(url, {"name": "3.0", "reset_rating": True}, format="json")
    assert announced.status_code == 200 and announced.json()["reset_rating"] is True
    row = rate(ladder2, [a, b], [2, 1], ["3.0", ""])[0]
    start = elo.initial(ladder2.params)
    assert (row.elo_before, row.mu_before, row.sigma_before) == (start.elo, start.mu, start.sigma)
    refused = alice_api.post(url, {"name": "3.0", "reset_rating": False}, format="json")
    assert refused.status_code == 400 and "rated games" in str(refused.json())
    assert BotVersion.objects.get(bot=a, name="3.0").reset_rating is True
    # Back to 1.0 (a rollback): it starts from 3.0's rating, widened; and reset only ever applies once.
    back = rate(ladder2, [a, b], [1, 2], ["1.0", ""])[0]
    assert back.mu_before == row.mu_after
    assert ratings_recompute(write=False).identical  # rated without records: the ledger replay only
    assert alice_api.post(url, {"name": "", "reset_rating": True}, format="json").status_code == 400
    assert (
        alice_api.post(
            f"{API}bots/999999/versions/", {"name": "x", "reset_rating": True}, format="json"
        ).status_code
        == 404
    )


def test_recompute_notices_a_version_drift(ladder2, make_bot):
    a, b = make_bot(), make_bot()
    rate(ladder2, [a, b], [1, 2], ["1.0", "1.0"])
    rate(ladder2, [a, b], [1, 2], ["2.0", "1.0"])
    Rating.objects.filter(bot=a).update(version="1.0")
    report = ratings_recompute(write=True)
    assert any("version '1.0' -> '2.0'" in line for line in report.rating_differences)
    assert Rating.objects.get(bot=a, ladder=ladder2).version == "2.0"


def test_owner_announces_a_version_through_the_service(make_bot, user, other_user):
    bot = make_bot()
    version = bot_version_set(bot_id=bot.pk, user=user, name=" 4.0 ", reset_rating=False)
    assert version.name == "4.0" and version.parent is None
