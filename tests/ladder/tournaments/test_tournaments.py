"""Tournaments: creation checks, round-robin and Swiss rounds played by house bots, the Celery canvas (run
eagerly in process), standings and crosstable over REST and on the page."""

from __future__ import annotations

import itertools

import pytest
from django.core.exceptions import ValidationError

from ladder.matches.house import house_match_play
from ladder.matches.models import Match, MatchStatus
from ladder.tournaments import services
from ladder.tournaments.models import Tournament, TournamentStatus
from workers.celery_app import app
from workers.tournaments import start_tournament

pytestmark = pytest.mark.django_db


def play_out(tournament: Tournament) -> int:
    """Pair and play every round in process; the number of rounds played."""
    rounds = 0
    while True:
        ids = services.tournament_pair_next_round(tournament_id=tournament.pk)
        if not ids:
            tournament.refresh_from_db()
            if tournament.status == TournamentStatus.DONE:
                return rounds
            raise AssertionError("a round paired no matches")
        # pairing again while the round is unfinished does nothing
        assert services.tournament_pair_next_round(tournament_id=tournament.pk) == []
        for match_id in ids:
            assert house_match_play(match_id=match_id)
        rounds += 1


def test_bad_tournaments_are_refused(ladder2, quick_house_bots, make_bot):
    ids = [b.pk for b in quick_house_bots]
    for kwargs, field in [
        ({"ladder_id": 9999, "bot_ids": ids, "format": "swiss"}, "ladder"),
        ({"ladder_id": ladder2.pk, "bot_ids": ids, "format": "knockout"}, "format"),
        ({"ladder_id": ladder2.pk, "bot_ids": ids[:1], "format": "swiss"}, "bots"),
        ({"ladder_id": ladder2.pk, "bot_ids": [ids[0], ids[0]], "format": "swiss"}, "bots"),
        ({"ladder_id": ladder2.pk, "bot_ids": ids, "format": "round_robin", "rounds": 2}, "rounds"),
        ({"ladder_id": ladder2.pk, "bot_ids": ids, "format": "swiss", "rounds": 0}, "rounds"),
        (
            {
                "ladder_id": ladder2.pk,
                "bot_ids": [*ids, make_bot(games=["voyages-v1"]).pk],
                "format": "swiss",
            },
            "bots",
        ),
    ]:
        with pytest.raises(ValidationError) as err:
            services.tournament_create(**kwargs)
        assert field in err.value.message_dict
    assert not Tournament.objects.exists()


def test_round_robin_meets_everyone_once_and_ranks_by_points(ladder2, quick_house_bots, api):
    bots = quick_house_bots[:4]
    t = services.tournament_create(
        ladder_id=ladder2.pk, bot_ids=[b.pk for b in bots], format="round_robin", seed=3
    )
    assert t.rounds_planned == 3
    assert play_out(t) == 3
    matches = Match.objects.filter(tournament_match__round__tournament=t)
    assert matches.count() == 6 and set(matches.values_list("status", flat=True)) == {MatchStatus.DONE}
    pairs = {frozenset(m.seats.values_list("bot_id", flat=True)) for m in matches}
    assert pairs == {frozenset(p) for p in itertools.combinations([b.pk for b in bots], 2)}

    body = api.get(f"/api/v1/tournaments/{t.pk}/").json()
    assert body["status"] == "DONE" and body["rounds_played"] == 3
    points = [row["points"] for row in body["standings"]]
    assert points == sorted(points, reverse=True) and sum(points) == 6.0
    assert all(row["played"] == 3 for row in body["standings"])
    rows = body["crosstable"]["rows"]
    for i, j in itertools.combinations(range(4), 2):
        assert rows[i][j] + rows[j][i] == 1.0  # one 2-player match per pair
    assert [r[i] for i, r in enumerate(rows)] == [None] * 4
    listed = api.get("/api/v1/tournaments/").json()["results"]
    assert listed[0]["id"] == t.pk and listed[0]["entrants"] == 4

    page = api.get(f"/tournaments/{t.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="standings"' in html and 'id="crosstable"' in html and bots[0].name in html
    assert api.get("/tournaments/").status_code == 200
    assert api.get("/tournaments/99999/").status_code == 404


def test_swiss_with_an_odd_field_gives_byes_worth_half(ladder2, quick_house_bots):
    t = services.tournament_create(
        ladder_id=ladder2.pk, bot_ids=[b.pk for b in quick_house_bots], format="swiss", rounds=3, seed=9
    )
    assert play_out(t) == 3
    rounds = list(t.rounds.order_by("number"))
    assert [len(r.byes) for r in rounds] == [1, 1, 1]
    assert len({r.byes[0] for r in rounds}) == 3  # nobody sits out twice
    from ladder.tournaments.selectors import tournament_standings

    data = tournament_standings(tournament_id=t.pk)
    assert sum(row["points"] for row in data["standings"]) == 6 * 1.0 + 3 * 0.5
    assert sum(row["byes"] for row in data["standings"]) == 3


@pytest.mark.django_db(transaction=True)  # the eager canvas's match tasks open connections of their own
def test_the_canvas_plays_every_round(ladder4, quick_house_bots, settings):
    t = services.tournament_create(
        ladder_id=ladder4.pk, bot_ids=[b.pk for b in quick_house_bots[:4]], format="swiss", rounds=2, seed=4
    )
    app.conf.task_always_eager = True
    try:
        start_tournament.delay(t.pk)
    finally:
        app.conf.task_always_eager = False
    t.refresh_from_db()
    assert t.status == TournamentStatus.DONE
    assert Match.objects.filter(tournament_match__round__tournament=t, status=MatchStatus.DONE).count() == 2


def test_only_staff_create_tournaments_over_rest(
    ladder2, quick_house_bots, api, staff_user, user, monkeypatch
):
    started = []
    monkeypatch.setattr("ladder.tournaments.apis._start", lambda tid: started.append(tid))
    payload = {"ladder": ladder2.pk, "bots": [b.pk for b in quick_house_bots[:3]], "format": "round_robin"}
    api.force_authenticate(user)
    assert api.post("/api/v1/tournaments/", payload, format="json").status_code == 403
    api.force_authenticate(staff_user)
    bad = api.post("/api/v1/tournaments/", {**payload, "format": "ladder"}, format="json")
    assert bad.status_code == 400 and "format" in bad.json()["errors"]
    made = api.post("/api/v1/tournaments/", payload, format="json")
    assert made.status_code == 201 and made.json()["rounds_planned"] == 3
    assert started == [made.json()["id"]] and Tournament.objects.count() == 1
