"""The seat tally (`ladder.ratings.seats`) counts each result in one UPDATE: wins, rank sums and scores per
seat, a seat without a score counted in games only, shared places as the ledger has them; a result naming a
seat twice is refused and counts nothing."""

from __future__ import annotations

import pytest
from django.db import transaction

from ladder.matches.services import match_create
from ladder.ratings.models import RatingLedger, SeatTally
from ladder.ratings.seats import seats_tally_add, seats_tally_check
from ladder.ratings.services import SeatOutcome, ratings_apply_match
from tests.ladder.ratings.test_board import AT, make_bots

pytestmark = pytest.mark.django_db


def test_a_result_is_counted_per_seat_in_one_update(ladder4, user, django_assert_num_queries):
    bots = make_bots(user, 4, prefix="tally")
    for seed, (ranks, scores) in enumerate([((1, 2, 1, 4), (5, None, 5, 0)), ((4, 3, 2, 1), (1, 2, 3, 9))]):
        match = match_create(ladder_id=ladder4.pk, bot_ids=[b.pk for b in bots], seed=seed)
        outcomes = [
            SeatOutcome(seat=i, bot_id=b.pk, rank=r, score=s)
            for i, (b, r, s) in enumerate(zip(bots, ranks, scores, strict=True))
        ]
        with transaction.atomic():
            ratings_apply_match(ladder=ladder4, match_id=match.pk, outcomes=outcomes, finished_at=AT)
    tally = {t.seat: (t.games, t.wins, t.rank_sum, t.scored, t.score_sum) for t in SeatTally.objects.all()}
    assert tally == {0: (2, 1, 5, 2, 6), 1: (2, 0, 5, 1, 2), 2: (2, 1, 3, 2, 8), 3: (2, 1, 5, 2, 9)}
    assert seats_tally_check(ladder_id=ladder4.pk) == []
    rows = list(RatingLedger.objects.filter(match_id=match.pk))
    with transaction.atomic(), django_assert_num_queries(2):  # rows made if missing, then one UPDATE
        seats_tally_add(ladder_id=ladder4.pk, rows=rows)
    assert SeatTally.objects.get(seat=3).games == 3


def test_a_seat_named_twice_is_refused_and_counts_nothing(ladder2, user):
    bots = make_bots(user, 2, prefix="twice")
    match = match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in bots], seed=1)
    rows = [RatingLedger(ladder=ladder2, match=match, bot=b, seat=0, rank=1, score=1) for b in bots]
    with transaction.atomic(), pytest.raises(ValueError, match=r"name a seat twice: \[0, 0\]"):
        seats_tally_add(ladder_id=ladder2.pk, rows=rows)
    assert not SeatTally.objects.exists()
