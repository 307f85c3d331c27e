"""The maintained leaderboard (`ladder.ratings.board`) is the board `standing.place` computes from scratch:
on random ladders (ties, several tiers, 2 and 4 seats, retirements, a season close), after every change;
a page reads a fixed number of queries at any size; `ratings_recompute` reports and rebuilds drifted board
fields.

The two random series run shortened in the suite (seed 1 for 80 results; seed 11 for 50 moves), each still
reaching the cases it names; `python -m bench ladder_series` runs them at full length (seeds 1 and 2 for 110
results; 150 moves)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from django.db import transaction

from ladder.bots.models import Bot
from ladder.bots.services import bot_retire
from ladder.ladders.models import Ladder
from ladder.matches.services import match_create
from ladder.ratings.board import board_check, board_place, board_rebuild
from ladder.ratings.models import Rating
from ladder.ratings.seasons import season_close
from ladder.ratings.selectors import (
    LeaderboardPages,
    bot_standings,
    leaderboard_page,
    leaderboard_standings,
)
from ladder.ratings.services import SeatOutcome, ratings_apply_match, ratings_recompute
from ladder.ratings.standing import place
from tests.ladder.conftest import series

pytestmark = pytest.mark.django_db
AT = datetime(2026, 12, 1, tzinfo=UTC)


def from_scratch(ladder: Ladder) -> list[tuple[object, ...]]:
    """Today's standings rule, computed as the leaderboard computed it before it was maintained: every
    listed row loaded oldest first and placed by `standing.place`."""
    season = Ladder.objects.get(pk=ladder.pk).season
    rows = list(
        Rating.objects.filter(ladder=ladder, season=season, bot__active=True, games__gte=1)
        .order_by("id")
        .values("bot_id", "mu", "sigma", "games", "wins")
    )
    board, previous_tier = [], None
    for p in place([(r["mu"], r["sigma"]) for r in rows], provisional_sigma=ladder.provisional_sigma):
        r = rows[p.index]
        board.append(
            (
                r["bot_id"],
                p.rank,
                p.tier,
                p.provisional,
                p.conservative,
                p.low,
                p.high,
                previous_tier == p.tier,
            )
        )
        previous_tier = p.tier
    return board


def maintained(ladder: Ladder) -> list[tuple[object, ...]]:
    return [
        (
            s.bot_id,
            s.rank,
            s.tier,
            s.provisional,
            s.conservative,
            s.rating_low,
            s.rating_high,
            s.tied_with_previous,
        )
        for s in leaderboard_standings(ladder=ladder)
    ]


def assert_same(ladder: Ladder) -> None:
    assert maintained(ladder) == from_scratch(ladder)
    assert board_check(ladder_id=ladder.pk) == []


def make_bots(user, count: int, prefix: str = "board") -> list[Bot]:
    return Bot.objects.bulk_create(
        [Bot(owner=user, name=f"{prefix}-{i:03d}", games=["expedition-v1"]) for i in range(count)]
    )


def rate(ladder: Ladder, bots: list[Bot], ranks: list[int], seed: int) -> None:
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=seed)
    outcomes = [
        SeatOutcome(seat=i, bot_id=b.pk, rank=r, score=None)
        for i, (b, r) in enumerate(zip(bots, ranks, strict=True))
    ]
    with transaction.atomic():
        ratings_apply_match(ladder=ladder, match_id=match.pk, outcomes=outcomes, finished_at=AT)


@pytest.mark.parametrize("seed", series([1], full=[1, 2]))
def test_random_results_keep_the_board_identical_to_the_computed_one(ladder2, ladder4, user, seed):
    rng = random.Random(seed)
    bots = make_bots(user, 14)
    strength = {b.pk: i for i, b in enumerate(bots)}  # clear strengths: the board separates into tiers
    tied = {2: 0, 4: 0}  # results with a shared place, by seats
    for step in range(series(80, full=110)):
        ladder, seats = (ladder4, 4) if rng.random() < 0.25 else (ladder2, 2)
        lineup = rng.sample(bots, seats)
        scores = [strength[b.pk] // 3 + rng.choice([0, 0, 1]) for b in lineup]  # shared places: exact ties
        ranks = [1 + sum(other > mine for other in scores) for mine in scores]
        tied[seats] += len(set(ranks)) < seats
        rate(ladder, lineup, ranks, seed * 1000 + step)
        assert_same(ladder)
    assert len(maintained(ladder2)) == 14 and max(row[2] for row in maintained(ladder2)) >= 2
    assert maintained(ladder4) and tied[2] and tied[4]  # both seat counts, ties in each


def test_random_skills_moved_one_at_a_time_stay_identical(ladder2, user):
    """Rows given random skills on a grid (ties of conservative rating, many tiers), then moved up, down,
    off and onto the board one after another: each move leaves the board `place` computes."""
    rng = random.Random(11)
    bots = make_bots(user, 60)
    Rating.objects.bulk_create(
        [Rating(ladder=ladder2, bot=b, elo=1500, mu=25, sigma=8, games=0) for b in bots]
    )
    board_rebuild(ladder_id=ladder2.pk)  # bulk-created rows carry no ranking key yet
    rows = list(Rating.objects.filter(ladder=ladder2).order_by("id"))
    listed: set[int] = set()
    moved = {"onto": 0, "within": 0, "off": 0}
    for _ in range(series(50, full=150)):
        row = rng.choice(rows)
        games = 0 if rng.random() < 0.1 else rng.randint(1, 40)
        mu, sigma = rng.randint(0, 80) / 2, rng.choice([0.5, 1.0, 1.5, 2.5, 4.0, 6.0])
        Rating.objects.filter(pk=row.pk).update(mu=mu, sigma=sigma, games=games)  # as the rating service does
        with transaction.atomic():
            board_place(ladder_id=ladder2.pk, rating_ids=[row.pk])
        assert_same(ladder2)
        if row.pk in listed:
            moved["within" if games else "off"] += 1
        elif games:
            moved["onto"] += 1
        (listed.add if games else listed.discard)(row.pk)
    tiers = max(r[2] for r in maintained(ladder2))
    ranks = [r[1] for r in maintained(ladder2)]
    assert tiers >= 5 and len(set(ranks)) < len(ranks)  # several tiers and shared ranks were exercised
    assert all(moved.values()), moved


def test_retiring_and_closing_a_season_leave_the_board_identical(ladder2, user, make_bot):
    bots = [make_bot(name=f"season-{i}") for i in range(6)]
    rng = random.Random(5)
    for step in range(20):
        rate(ladder2, rng.sample(bots, 2), [1, 2], 100 + step)
    bot_retire(bot_id=bots[0].pk)
    assert bots[0].pk not in {r[0] for r in maintained(ladder2)}
    assert_same(ladder2)
    season_close(ladder_id=ladder2.pk)
    assert (
        maintained(ladder2) == []
        and Rating.objects.filter(ladder=ladder2, position__isnull=False).count() == 0
    )
    rate(ladder2, bots[1:3], [2, 1], 300)
    assert_same(ladder2)
    assert {r[0] for r in maintained(ladder2)} == {bots[1].pk, bots[2].pk}  # only the new season's players


def test_pages_are_slices_of_the_whole_board_and_keep_ranks(ladder2, user, django_user_model):
    """On a board of two owners' bots with shared ranks, placed as the maintained board places rows."""
    other = django_user_model.objects.create_user("board-other")
    bots = make_bots(user, 30) + make_bots(other, 7, prefix="other")
    rng = random.Random(3)
    Rating.objects.bulk_create(
        [
            Rating(
                ladder=ladder2,
                bot=b,
                elo=1500,
                mu=rng.randint(40, 60) / 2,
                sigma=2.0,
                games=rng.randint(1, 9),
            )
            for b in bots
        ]
    )
    board_rebuild(ladder_id=ladder2.pk)
    whole = leaderboard_standings(ladder=ladder2)
    assert len({s.rank for s in whole}) < len(whole) and len({s.tier for s in whole}) > 1
    assert leaderboard_page(ladder=ladder2, start=10, limit=7).rows == whole[10:17]
    assert leaderboard_page(ladder=ladder2, start=len(whole) - 3, limit=50).rows == whole[-3:]
    assert leaderboard_page(ladder=ladder2, start=0, limit=5).total == len(whole)
    theirs = [s for s in whole if s.owner == "board-other"]
    page = leaderboard_page(ladder=ladder2, owner="board-other", start=2, limit=3)
    assert page.rows == theirs[2:5] and page.total == len(theirs)
    pages = LeaderboardPages(ladder=ladder2)
    assert len(pages) == len(whole) and pages[4:9] == whole[4:9] and pages[0] == whole[0]
    assert bot_standings(bot_id=whole[5].bot_id)[ladder2.pk] == whole[5]


def test_a_page_reads_the_same_queries_at_any_size(ladder2, ladder4, user, django_assert_num_queries):
    """Two queries (the board's length, then the page with each row's rank and tier as subqueries)
    whether the board has 12 rows or 400."""
    for ladder, count in ((ladder2, 12), (ladder4, 400)):
        bots = make_bots(user, count, prefix=f"size{count}")
        rng = random.Random(count)
        Rating.objects.bulk_create(
            [
                Rating(
                    ladder=ladder, bot=b, elo=1500, mu=rng.uniform(10, 40), sigma=rng.uniform(0.8, 4), games=5
                )
                for b in bots
            ]
        )
        board_rebuild(ladder_id=ladder.pk)
        for start in (0, count - 10):
            with django_assert_num_queries(2):
                page = leaderboard_page(ladder=ladder, start=start, limit=10)
            assert len(page.rows) == 10 and page.total == count
        assert_same(ladder)


def test_recompute_reports_and_rebuilds_drifted_board_fields(ladder2, user):
    bots = make_bots(user, 8)
    rng = random.Random(9)
    for step in range(16):
        rate(ladder2, rng.sample(bots, 2), [1, 2], 700 + step)
    top = Rating.objects.get(ladder=ladder2, position=1)
    Rating.objects.filter(pk=top.pk).update(position=5, leads_tier=False)
    report = ratings_recompute(write=False)
    assert not report.identical and any(
        line.startswith("board of ladder") for line in report.rating_differences
    )
    assert Rating.objects.get(pk=top.pk).position == 5  # a check writes nothing
    assert not ratings_recompute(write=True).identical
    assert_same(ladder2)
    assert ratings_recompute(write=False).identical


def test_the_migration_places_existing_boards(ladder2, user):
    """Rows rated before the board existed (no ranking key, no places) get the board `place` computes."""
    from importlib import import_module

    from django.apps import apps

    bots = make_bots(user, 9)
    rng = random.Random(4)
    for step in range(18):
        rate(ladder2, rng.sample(bots, 2), rng.choice([[1, 2], [2, 1], [1, 1]]), 900 + step)
    expected = maintained(ladder2)
    Rating.objects.filter(ladder=ladder2).update(conservative=0.0, position=None, leads_tier=False)
    import_module("ladder.ratings.migrations.0004_board_standings").fill_boards(apps, None)
    assert maintained(ladder2) == expected == from_scratch(ladder2)
    assert board_check(ladder_id=ladder2.pk) == []
