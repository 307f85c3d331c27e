"""The audit over REST: staff audit the ratings against the match records (403 for anyone else, in the
project's error format), and anyone reads a match's rating change, seat by seat, before and after.

The played matches are made once for the module (`module_db`); each test's changes roll back after it."""

from __future__ import annotations

import itertools

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from ladder.bots.models import Bot
from ladder.ladders.models import Ladder
from ladder.ladders.services import ladder_create
from ladder.matches.models import Match, MatchStatus
from ladder.matches.services import match_create
from ladder.ratings import elo
from ladder.ratings.models import RatingLedger
from tests.ladder.conftest import bot_factory, play

pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("ratings-audit-apis")]
API = "/api/v1/"
AUDIT = f"{API}ratings/audit/"


@pytest.fixture
def staff_api(api, staff_user):
    api.force_authenticate(staff_user)
    return api


@pytest.fixture(scope="module")
def played(module_db) -> tuple[Ladder, list[Bot], list[Match]]:
    ladder = ladder_create(game_id="expedition-v1", num_players=2)
    make_bot = bot_factory(get_user_model().objects.create_user("audited-bots"))
    bots = [make_bot(name=f"Audited {i}") for i in range(3)]
    matches = [play(ladder, [bots[s % 3], bots[(s + 1) % 3]], 800 + s) for s in range(1, 7)]
    return ladder, bots, matches


def test_staff_audit_is_identical_then_names_an_edit(staff_api, played):
    ladder2 = played[0]
    body = staff_api.get(AUDIT).json()
    assert body["identical"] is True and body["matches"] == 6 and body["ledger_rows"] == 12
    assert body["differences"] == [] and set(body["counts"].values()) == {0}
    row = RatingLedger.objects.filter(ladder=ladder2).order_by("id").first()
    RatingLedger.objects.filter(pk=row.pk).update(score=(row.score or 0) + 7)
    body = staff_api.get(AUDIT, {"ladder": ladder2.pk}).json()
    assert body["identical"] is False and body["counts"]["ledger_field"] == 1
    assert body["differences"] == [
        {
            "kind": "ledger_field",
            "ladder": ladder2.pk,
            "match": row.match_id,
            "bot": row.bot_id,
            "detail": f"score {(row.score or 0) + 7} in the ledger, {row.score} in the record",
        }
    ]
    limited = staff_api.get(AUDIT, {"limit": 0}).json()
    assert limited["differences"] == [] and limited["truncated"] is True


def test_audit_is_for_staff_only_and_checks_its_input(alice_api, staff_api, played):
    refused = alice_api.get(AUDIT)
    assert refused.status_code == 403 and set(refused.json()) == {"detail", "errors"}
    assert APIClient().get(AUDIT).status_code in (401, 403)  # anonymous
    missing = staff_api.get(AUDIT, {"ladder": 424242})
    assert missing.status_code == 404 and "no ladder with id 424242" in missing.json()["detail"]
    bad = staff_api.get(AUDIT, {"limit": -1})
    assert bad.status_code == 400 and "limit" in bad.json()["errors"]


def test_rating_change_shows_each_seat_before_and_after(api, played):
    _ladder, bots, matches = played
    for match in matches:
        body = api.get(f"{API}matches/{match.pk}/rating-change/").json()
        assert body["match"] == match.pk and body["rated"] is True and body["status"] == "DONE"
        rows = list(RatingLedger.objects.filter(match=match).order_by("seat"))
        assert [s["bot"] for s in body["seats"]] == [r.bot_id for r in rows]
        for seat, row in zip(body["seats"], rows, strict=True):
            assert (seat["elo_before"], seat["elo_after"]) == (row.elo_before, row.elo_after)
            assert seat["elo_delta"] == row.elo_after - row.elo_before
            assert seat["conservative_after"] == elo.conservative(row.mu_after, row.sigma_after)
            assert seat["rank"] == row.rank and seat["bot_name"].startswith("Audited")
    # Anyone can follow a bot: each match starts where its previous one ended (no season or version between).
    chain = [
        seat
        for match in matches
        for seat in api.get(f"{API}matches/{match.pk}/rating-change/").json()["seats"]
        if seat["bot"] == bots[0].pk
    ]
    assert len(chain) == 4
    assert all(
        b["elo_before"] == a["elo_after"] and b["mu_before"] == a["mu_after"]
        for a, b in itertools.pairwise(chain)
    )


def test_rating_change_of_unrated_and_missing_matches(api, played):
    ladder2, bots, _matches = played
    queued = match_create(ladder_id=ladder2.pk, bot_ids=[bots[0].pk, bots[1].pk], seed=4242)
    body = api.get(f"{API}matches/{queued.pk}/rating-change/").json()
    assert body["status"] == MatchStatus.QUEUED and body["seats"] == []
    missing = api.get(f"{API}matches/987654/rating-change/")
    assert missing.status_code == 404 and set(missing.json()) == {"detail", "errors"}
    assert Match.objects.filter(status=MatchStatus.DONE).count() == 6
