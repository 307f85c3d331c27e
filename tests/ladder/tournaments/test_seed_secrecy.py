"""A tournament's seed gives every table's seed (with the server secret, which the demo's development key
makes public): it is shown by no endpoint, page or admin view while a match derived from it is still to be
played, a cancelled tournament's queued and running tables included, and shown once they are all over."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from ladder.matches.house import house_match_play
from ladder.matches.models import Match, MatchStatus
from ladder.matches.services import match_cancel, match_create, match_mark_running
from ladder.tournaments import services
from ladder.tournaments.models import Tournament
from ladder.tournaments.selectors import tournament_seed_revealed

pytestmark = pytest.mark.django_db

SEED = 424_242_424_242_424_242


@pytest.fixture
def cancelled(ladder2, quick_house_bots) -> tuple[Tournament, list[Match]]:
    """A round robin of four house bots cancelled after its first round was paired: one of its two
    tables RUNNING, the other QUEUED."""
    t = services.tournament_create(
        ladder_id=ladder2.pk, bot_ids=[b.pk for b in quick_house_bots[:4]], format="round_robin", seed=SEED
    )
    ids = services.tournament_pair_next_round(tournament_id=t.pk)
    assert len(ids) == 2
    assert match_mark_running(match_id=ids[0])
    assert services.tournament_cancel(tournament_id=t.pk)
    t.refresh_from_db()
    return t, list(Match.objects.filter(pk__in=ids).order_by("pk"))


def shown_anywhere(t: Tournament, api) -> list[str]:  # type: ignore[no-untyped-def]
    """Where the tournament's seed is shown to anyone: REST detail, REST list, the page."""
    found = []
    if api.get(f"/api/v1/tournaments/{t.pk}/").json()["seed"] is not None:
        found.append("REST detail")
    listed = {row["id"]: row for row in api.get("/api/v1/tournaments/").json()["results"]}
    if listed[t.pk]["seed"] is not None:
        found.append("REST list")
    page = api.get(f"/tournaments/{t.pk}/")
    assert page.status_code == 200
    if str(SEED) in page.content.decode():
        found.append("page")
    return found


def test_a_cancelled_tournament_hides_its_seed_while_its_tables_play(cancelled, api):
    t, (running, queued) = cancelled
    assert t.status == "CANCELLED" and running.status == MatchStatus.RUNNING
    assert queued.status == MatchStatus.QUEUED
    assert shown_anywhere(t, api) == [] and not tournament_seed_revealed(tournament=t)
    assert house_match_play(match_id=running.pk)  # the running table ends; the queued one is still to play
    assert shown_anywhere(t, api) == []
    assert house_match_play(match_id=queued.pk)
    assert shown_anywhere(t, api) == ["REST detail", "REST list", "page"]
    assert api.get(f"/api/v1/tournaments/{t.pk}/").json()["seed"] == SEED


def test_a_match_sharing_a_tables_seed_keeps_it_hidden(cancelled, api, make_bot):
    t, tables = cancelled
    for match in tables:
        assert match_cancel(match_id=match.pk)
    assert shown_anywhere(t, api) == ["REST detail", "REST list", "page"]
    bots = [make_bot(), make_bot()]
    twin = match_create(ladder_id=t.ladder_id, bot_ids=[b.pk for b in bots], seed=tables[1].seed)
    assert shown_anywhere(t, api) == []
    assert match_cancel(match_id=twin.pk)
    assert shown_anywhere(t, api) == ["REST detail", "REST list", "page"]


def test_a_running_tournament_hides_its_seed_even_between_rounds(ladder2, quick_house_bots, api):
    t = services.tournament_create(
        ladder_id=ladder2.pk, bot_ids=[b.pk for b in quick_house_bots[:2]], format="round_robin", seed=SEED
    )
    assert shown_anywhere(t, api) == []  # no round paired yet: nothing in play, but more to come
    (only,) = services.tournament_pair_next_round(tournament_id=t.pk)
    assert house_match_play(match_id=only)
    assert services.tournament_pair_next_round(tournament_id=t.pk) == []
    t.refresh_from_db()
    assert t.status == "DONE" and shown_anywhere(t, api) == ["REST detail", "REST list", "page"]


def test_the_admin_shows_a_hidden_tournament_seed_to_superusers_only(cancelled, staff_user, admin_user):
    t, tables = cancelled
    address = f"/admin/tournaments/tournament/{t.pk}/change/"
    staff_user.user_permissions.add(Permission.objects.get(codename="view_tournament"))
    staff, superuser = Client(), Client()
    staff.force_login(staff_user)
    superuser.force_login(admin_user)
    page = staff.get(address)
    assert page.status_code == 200 and str(SEED) not in page.content.decode()
    assert "hidden until every match derived from it is over" in page.content.decode()
    assert str(SEED) in superuser.get(address).content.decode()
    for match in tables:
        assert match_cancel(match_id=match.pk)
    assert str(SEED) in staff.get(address).content.decode()
