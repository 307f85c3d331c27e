"""Hidden information: a match's seed (every hand and the deck order follow from it) and its replay are
shown by no endpoint, page or admin view until the match is final and no unfinished match shares the seed;
seeds derived from a match seed (house bots', tournament tables') are keyed by the server secret."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client, override_settings

from ladder.matches.house import house_seed
from ladder.matches.models import Match, MatchStatus
from ladder.matches.services import match_cancel, match_create
from ladder.tournaments.services import match_seed, tournament_create
from tests.ladder.conftest import play

pytestmark = pytest.mark.django_db

SEED = 987_654_321_987_654_321
HIDDEN = (MatchStatus.NEW, MatchStatus.QUEUED, MatchStatus.RUNNING)
FINAL = (MatchStatus.DONE, MatchStatus.ERROR, MatchStatus.CANCELLED)


@pytest.fixture
def match_in(ladder2, make_bot):
    bots = [make_bot(), make_bot()]
    match = match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in bots], seed=SEED)

    def put(status: str) -> Match:
        Match.objects.filter(pk=match.pk).update(status=status)
        match.refresh_from_db()
        return match

    return put


def match_addresses(match: Match) -> list[str]:
    bot = match.seats.first().bot_id
    status = match.status
    return [
        f"/api/v1/matches/{match.pk}/",
        "/api/v1/matches/",
        f"/api/v1/matches/?status={status}",
        f"/api/v1/matches/?ladder={match.ladder_id}",
        f"/api/v1/matches/?bot={bot}",
        f"/api/v1/ladders/{match.ladder_id}/leaderboard/",
        f"/api/v1/bots/{bot}/history/",
        f"/matches/{match.pk}/",
        "/matches/",
        f"/matches/?status={status}",
        f"/bots/{bot}/",
        f"/ladders/{match.ladder.slug}/",
        "/",
    ]


@pytest.mark.parametrize("status", HIDDEN)
def test_no_address_shows_the_seed_before_the_end(match_in, status, api):
    match = match_in(status)
    for address in match_addresses(match):
        response = api.get(address)
        assert response.status_code == 200, address
        assert str(SEED) not in response.content.decode(), address
    assert api.get(f"/api/v1/matches/{match.pk}/").json()["seed"] is None
    for replay in ("replay/", "frames/", "frames/0/"):
        assert api.get(f"/api/v1/matches/{match.pk}/{replay}").status_code == 404


@pytest.mark.parametrize("status", FINAL)
def test_a_final_match_shows_its_seed(match_in, status, api):
    match = match_in(status)
    assert api.get(f"/api/v1/matches/{match.pk}/").json()["seed"] == SEED
    assert api.get(f"/api/v1/matches/?status={status}").json()["results"][0]["seed"] == SEED
    assert str(SEED) in api.get(f"/matches/{match.pk}/").content.decode()


def test_a_duplicate_set_stays_hidden_until_every_match_is_over(ladder2, make_bot, api):
    bots = [make_bot(), make_bot()]
    done = play(ladder2, bots, seed=SEED)
    twin = match_create(ladder_id=ladder2.pk, bot_ids=[bots[1].pk, bots[0].pk], seed=SEED)
    detail = api.get(f"/api/v1/matches/{done.pk}/").json()
    assert detail["seed"] is None and detail["has_replay"] is False
    assert api.get(f"/api/v1/matches/{done.pk}/replay/").status_code == 404
    assert api.get(f"/api/v1/matches/{done.pk}/frames/?seat=0").status_code == 404
    page = api.get(f"/matches/{done.pk}/").content.decode()
    assert str(SEED) not in page and "replay.js" not in page
    assert match_cancel(match_id=twin.pk)
    assert api.get(f"/api/v1/matches/{done.pk}/").json()["seed"] == SEED
    assert api.get(f"/api/v1/matches/{done.pk}/replay/").json()["seed"] == SEED


def test_the_admin_hides_a_running_seed_from_staff_who_are_not_superusers(match_in, staff_user, user):
    match = match_in(MatchStatus.RUNNING)
    address = f"/admin/matches/match/{match.pk}/change/"
    outsider = Client()
    outsider.force_login(user)
    assert outsider.get(address).status_code == 302  # the admin is for staff only
    staff_user.user_permissions.add(Permission.objects.get(codename="view_match"))
    staff = Client()
    staff.force_login(staff_user)
    response = staff.get(address)
    assert response.status_code == 200 and str(SEED) not in response.content.decode()
    assert "hidden until the match is over" in response.content.decode()
    match_in(MatchStatus.DONE)
    assert str(SEED) in staff.get(address).content.decode()


def test_a_running_tournament_hides_its_seed(ladder2, house_bots, api):
    t = tournament_create(
        ladder_id=ladder2.pk, bot_ids=[b.pk for b in house_bots[:3]], format="round_robin", seed=SEED >> 1
    )
    assert api.get(f"/api/v1/tournaments/{t.pk}/").json()["seed"] is None
    assert all(row["seed"] is None for row in api.get("/api/v1/tournaments/").json()["results"])
    assert str(SEED >> 1) not in api.get(f"/tournaments/{t.pk}/").content.decode()


def test_derived_seeds_are_keyed_by_the_server_secret():
    with override_settings(CARAVANSERAI_SEED_SECRET="one"):
        house, table = house_seed(SEED, 1), match_seed(5, 1, 0)
        assert house != house_seed(SEED, 0) and 0 <= house < 2**63
    with override_settings(CARAVANSERAI_SEED_SECRET="two"):
        assert house_seed(SEED, 1) != house and match_seed(5, 1, 0) != table
