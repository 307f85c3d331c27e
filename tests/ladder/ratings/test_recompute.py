"""The ledger is the truth: `ratings_recompute` rebuilds the stored ratings exactly.

The played ladders are made once for the module (`module_db`); each test's edits roll back after it."""

from __future__ import annotations

import itertools
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import F

from ladder.matches.services import match_create
from ladder.ratings.models import LedgerRowImmutable, Rating, RatingLedger, SeatTally
from ladder.ratings.services import ratings_recompute
from tests.ladder.conftest import Field, field, play

pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("ratings-recompute")]


@pytest.fixture(scope="module")
def played(module_db) -> Field:
    """Twelve 4-seat and twelve 2-seat matches among five bots, and a queued (unrated) one."""
    played = field(5)
    ladder2, ladder4, _owner, bots = played
    for seed in range(1, 13):
        four = [bots[(seed + i) % 5] for i in range(4)]
        play(ladder4, four, seed)
        play(ladder2, [bots[seed % 5], bots[(seed + 2) % 5]], seed + 100)
    match_create(ladder_id=ladder2.pk, bot_ids=[bots[0].pk, bots[1].pk], seed=999)  # queued, unrated
    return played


def test_recompute_reproduces_the_table_exactly(played):
    before = list(Rating.objects.order_by("id").values())
    report = ratings_recompute(write=False)
    assert report.identical, (report.ledger_mismatches, report.rating_differences)
    assert report.matches == 24 and report.ledger_rows == 12 * 4 + 12 * 2
    assert list(Rating.objects.order_by("id").values()) == before


def test_recompute_repairs_drift(played):
    rating = Rating.objects.filter(games__gt=0).first()
    expected = (rating.elo, rating.mu, rating.games)
    Rating.objects.filter(pk=rating.pk).update(elo=rating.elo + 50, games=rating.games + 1)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("ratings_recompute", "--check", stdout=out)
    assert "DIFFERENT" in out.getvalue() and f"bot {rating.bot_id}" in out.getvalue()
    call_command("ratings_recompute", stdout=StringIO())
    rating.refresh_from_db()
    assert (rating.elo, rating.mu, rating.games) == expected
    out = StringIO()
    call_command("ratings_recompute", "--check", stdout=out)
    assert "identical" in out.getvalue()


def test_the_seat_tally_is_the_ledgers_totals_and_drift_in_it_is_found_and_repaired(played):
    ladder4 = played.ladder4
    tallies = {t.seat: t for t in SeatTally.objects.filter(ladder=ladder4)}
    for seat in range(4):
        rows = RatingLedger.objects.filter(ladder=ladder4, seat=seat)
        t = tallies[seat]
        assert (t.games, t.wins, t.rank_sum) == (12, rows.filter(rank=1).count(), sum(r.rank for r in rows))
        assert (t.scored, t.score_sum) == (12, sum(r.score for r in rows))
    SeatTally.objects.filter(ladder=ladder4, seat=2).update(wins=F("wins") + 3)
    report = ratings_recompute(write=False)
    assert [line for line in report.rating_differences if f"ladder {ladder4.pk} seat 2:" in line], report
    assert ratings_recompute(write=True).rating_differences
    assert ratings_recompute(write=False).identical
    assert SeatTally.objects.get(ladder=ladder4, seat=2).wins == tallies[2].wins


def test_ledger_rows_chain(played):
    for bot in played.bots:
        rows = list(RatingLedger.objects.filter(bot=bot, ladder__num_players=4).order_by("id"))
        for previous, row in itertools.pairwise(rows):
            assert row.elo_before == previous.elo_after
            assert row.mu_before == previous.mu_after


def test_ledger_is_append_only(played):
    row = RatingLedger.objects.first()
    row.elo_after = 0
    with pytest.raises(LedgerRowImmutable):
        row.save()
    with pytest.raises(LedgerRowImmutable):
        row.delete()


def test_two_player_elo_sum_conserved(played):
    ladder2 = played.ladder2
    ratings = Rating.objects.filter(ladder=ladder2)
    assert sum(r.elo for r in ratings) == pytest.approx(ladder2.elo_start * ratings.count(), abs=1e-6)


def test_a_ledger_missing_a_row_is_reported_not_raised(played):
    row = RatingLedger.objects.filter(ladder=played.ladder2).order_by("-id").first()
    RatingLedger.objects.filter(pk=row.pk).delete()  # a 2-seat match left with one row
    report = ratings_recompute(write=False)
    assert not report.identical
    assert any(
        f"match {row.match_id}: its ledger rows cannot be replayed" in m for m in report.ledger_mismatches
    )
