"""Statistics over REST and in selectors: the ranked leaderboard with its rules, win rate by seat, a bot's
head-to-head table, and two bots compared; bad input is a 4xx that names the problem.

The rated ladders are made once for the module (`module_db`)."""

from __future__ import annotations

import itertools

import pytest

from ladder.ladders.models import Ladder
from ladder.ratings.models import RatingLedger
from ladder.ratings.selectors import head_to_head, leaderboard_standings, seat_statistics
from tests.ladder.conftest import Field, field, play

pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("ratings-statistics")]
API = "/api/v1/"


@pytest.fixture(scope="module")
def rated(module_db) -> Field:
    """Eight 2-seat matches among three of alice's bots, and two 4-seat matches among all four."""
    rated = field(4, name="Polo")
    ladder2, ladder4, _owner, bots = rated
    for seed in range(1, 9):
        play(ladder2, [bots[seed % 3], bots[(seed + 1) % 3]], seed)
    play(ladder4, bots, 40)
    play(ladder4, bots[::-1], 41)
    return rated


def test_leaderboard_rows_carry_the_rules(api, rated):
    ladder2 = rated.ladder2
    body = api.get(f"{API}ladders/{ladder2.pk}/leaderboard/").json()
    rows = body["results"]
    assert len(rows) == 3
    conservative = [r["conservative"] for r in rows]
    assert conservative == sorted(conservative, reverse=True)
    assert rows[0]["rank"] == 1 and rows[0]["tier"] == 1 and rows[0]["tied_with_previous"] is False
    for a, b in itertools.pairwise(rows):
        assert b["tier"] >= a["tier"] and b["tied_with_previous"] == (a["tier"] == b["tier"])
    for r in rows:
        assert r["provisional"] is True  # a handful of games: sigma is still far above 5
        assert r["rating_low"] == pytest.approx(r["mu"] - 2 * r["sigma"], abs=1e-3)
        assert r["conservative"] == pytest.approx(r["mu"] - 3 * r["sigma"], abs=1e-3)
        assert r["win_rate_low"] <= r["win_rate"] <= r["win_rate_high"]
    schema = api.get(f"{API}schema/?format=json").json()
    description = schema["paths"]["/api/v1/ladders/{ladder_id}/leaderboard/"]["get"]["description"]
    assert "mu - 3 sigma" in description and "Wilson" in description and "provisional_sigma" in description


def test_leaderboard_pages_keep_ladder_wide_ranks(api, rated):
    ladder2, user = rated.ladder2, rated.owner
    rows, url = [], f"{API}ladders/{ladder2.pk}/leaderboard/?page_size=1"
    while url:
        page = api.get(url).json()
        rows += page["results"]
        url = page["next"]
    full = api.get(f"{API}ladders/{ladder2.pk}/leaderboard/").json()["results"]
    assert rows == full
    second = api.get(f"{API}ladders/{ladder2.pk}/leaderboard/?page_size=1").json()["next"]
    assert api.get(second).json()["previous"] is not None
    owner = api.get(f"{API}ladders/{ladder2.pk}/leaderboard/?owner={user.username}").json()["results"]
    assert [r["rank"] for r in owner] == [r["rank"] for r in full]
    assert api.get(f"{API}ladders/{ladder2.pk}/leaderboard/?owner=nobody").json()["results"] == []


def test_provisional_mark_follows_the_ladder_threshold(rated):
    ladder2 = Ladder.objects.get(pk=rated.ladder2.pk)  # a copy of its own to change
    ladder2.provisional_sigma = 9.0  # above every sigma: nobody is provisional
    assert not any(r.provisional for r in leaderboard_standings(ladder=ladder2))


def test_seat_statistics(api, rated):
    ladder2, ladder4 = rated.ladder2, rated.ladder4
    stats = seat_statistics(ladder=ladder2)
    assert [s.seat for s in stats] == [0, 1] and sum(s.games for s in stats) == 16
    assert sum(s.wins for s in stats) >= 8  # a shared first place counts for both seats
    body = api.get(f"{API}ladders/{ladder4.pk}/seats/").json()
    assert body["num_players"] == 4 and body["fair_share"] == 0.25
    assert [s["games"] for s in body["seats"]] == [2, 2, 2, 2]
    for s in body["seats"]:
        assert s["win_rate_low"] <= s["win_rate"] <= s["win_rate_high"] and 1 <= s["mean_rank"] <= 4
    assert api.get(f"{API}ladders/999999/seats/").status_code == 404


def test_head_to_head_matches_the_ledger(api, rated):
    ladder2 = rated.ladder2
    a, b = rated.bots[0], rated.bots[1]
    table = head_to_head(bot_id=a.pk, ladder_id=ladder2.pk, opponent_id=b.pk)
    assert len(table) == 1
    h = table[0]
    mine = dict(RatingLedger.objects.filter(bot=a, ladder=ladder2).values_list("match_id", "rank"))
    theirs = dict(RatingLedger.objects.filter(bot=b, ladder=ladder2).values_list("match_id", "rank"))
    shared = set(mine) & set(theirs)
    assert h.games == len(shared) and h.ahead + h.behind + h.tied == h.games
    assert h.ahead == sum(mine[m] < theirs[m] for m in shared)
    assert h.mean_rank_difference == pytest.approx(sum(theirs[m] - mine[m] for m in shared) / len(shared))
    assert h.score_low <= h.score <= h.score_high
    rows = api.get(f"{API}bots/{a.pk}/head-to-head/").json()
    assert {(r["ladder"], r["opponent"]["id"]) for r in rows} >= {(ladder2.pk, b.pk)}
    only = api.get(f"{API}bots/{a.pk}/head-to-head/?ladder={ladder2.pk}").json()
    assert {r["ladder"] for r in only} == {ladder2.pk}
    assert api.get(f"{API}bots/{a.pk}/head-to-head/?ladder=zero").status_code == 400
    assert api.get(f"{API}bots/999999/head-to-head/").status_code == 404


def test_compare_two_bots(api, rated):
    ladder2, ladder4 = rated.ladder2, rated.ladder4
    a, b, c = rated.bots[0], rated.bots[1], rated.bots[3]
    body = api.get(f"{API}bots/{a.pk}/compare/{b.pk}/").json()
    assert [x["id"] for x in body["bots"]] == [a.pk, b.pk]
    by_ladder = {item["ladder"]["id"]: item for item in body["ladders"]}
    assert set(by_ladder) == {ladder2.pk, ladder4.pk}
    item = by_ladder[ladder2.pk]
    assert item["head_to_head"]["opponent"]["id"] == b.pk
    assert item["same_tier"] == (item["standings"][0]["tier"] == item["standings"][1]["tier"])
    only4 = api.get(f"{API}bots/{a.pk}/compare/{c.pk}/").json()  # c plays the 4-player ladder only
    assert [item["ladder"]["id"] for item in only4["ladders"]] == [ladder4.pk]
    same = api.get(f"{API}bots/{a.pk}/compare/{a.pk}/")
    assert same.status_code == 400 and "different" in str(same.json())
    assert api.get(f"{API}bots/{a.pk}/compare/999999/").status_code == 404
