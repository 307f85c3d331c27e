"""Results for overlapping bots applied from several real threads (each with its own database connection):
every match is rated exactly once, duplicates change nothing, two-player Elo sums are conserved, and the
ledger rebuild matches the table. Runs on SQLite (IMMEDIATE transactions) and on PostgreSQL (row locks).
Checks from outside any transaction read one snapshot of their own: the rebuild while results are recorded,
and the audit from the match records."""

from __future__ import annotations

import itertools
import threading
import time

import pytest
from django.db import connection

from engine_service.games.rng import ChanceRng
from ladder.matches.models import MatchStatus
from ladder.matches.services import match_create, match_mark_running, match_record_result
from ladder.ratings.audit import ratings_audit
from ladder.ratings.models import Rating, RatingLedger
from ladder.ratings.services import ratings_recompute
from tests.ladder.conftest import make_record, play

THREADS = 4


def _apply_all(jobs, threads: int) -> list[tuple[int, bool]]:
    outcomes: list[tuple[int, bool]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    barrier = threading.Barrier(threads)

    def worker(mine):
        try:
            barrier.wait(timeout=30)
            for match_id, record in mine:
                applied = match_record_result(match_id=match_id, record=record)
                with lock:
                    outcomes.append((match_id, applied))
        except BaseException as exc:  # reported to the test below
            errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=worker, args=(jobs[i::threads],)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert not errors, errors
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_concurrent_results_apply_exactly_once(ladder2, ladder4, make_bot):
    bots = [make_bot() for _ in range(6)]
    rng = ChanceRng(2024)
    jobs = []
    two_player = []
    for seed in range(1, 25):
        pair = list(bots)
        rng.shuffle(pair)
        match = match_create(ladder_id=ladder2.pk, bot_ids=[pair[0].pk, pair[1].pk], seed=seed)
        two_player.append(match.pk)
        jobs.append((match.pk, make_record(match)))
    for seed in range(100, 108):
        four = list(bots)
        rng.shuffle(four)
        match = match_create(ladder_id=ladder4.pk, bot_ids=[b.pk for b in four[:4]], seed=seed)
        jobs.append((match.pk, make_record(match)))
    for match_id, _ in jobs:
        assert match_mark_running(match_id=match_id)
    # Every result is delivered twice (a redelivered task), in a shuffled order.
    deliveries = jobs + jobs
    rng.shuffle(deliveries)

    outcomes = _apply_all(deliveries, THREADS)

    applied = [m for m, ok in outcomes if ok]
    assert len(outcomes) == len(deliveries)
    assert sorted(applied) == sorted(m for m, _ in jobs)  # each match applied exactly once
    assert RatingLedger.objects.count() == 24 * 2 + 8 * 4
    assert RatingLedger.objects.values("match", "bot").distinct().count() == RatingLedger.objects.count()
    ratings2 = list(Rating.objects.filter(ladder=ladder2))
    assert sum(r.games for r in ratings2) == 48
    assert sum(r.elo for r in ratings2) == pytest.approx(ladder2.elo_start * len(ratings2), abs=1e-6)
    assert sum(r.games for r in Rating.objects.filter(ladder=ladder4)) == 32
    from ladder.matches.models import Match

    assert set(Match.objects.values_list("status", flat=True)) == {MatchStatus.DONE}
    # Each bot's ledger rows chain: no update was lost between concurrent transactions.
    for bot in bots:
        for ladder in (ladder2, ladder4):
            rows = list(RatingLedger.objects.filter(bot=bot, ladder=ladder).order_by("id"))
            for previous, row in itertools.pairwise(rows):
                assert row.elo_before == previous.elo_after
    report = ratings_recompute(write=False)
    assert report.identical, (report.ledger_mismatches, report.rating_differences)


@pytest.mark.django_db(transaction=True)
def test_a_check_while_results_are_recorded_always_sees_one_consistent_snapshot(ladder2, make_bot):
    bots = [make_bot() for _ in range(4)]
    jobs = []
    for seed in range(300, 330):
        match = match_create(
            ladder_id=ladder2.pk, bot_ids=[bots[seed % 4].pk, bots[(seed + 1) % 4].pk], seed=seed
        )
        assert match_mark_running(match_id=match.pk)
        jobs.append((match.pk, make_record(match)))
    checks: list[bool] = []
    recording = threading.Thread(target=_apply_all, args=(jobs, 1))
    recording.start()
    try:
        while recording.is_alive():
            checks.append(ratings_recompute(write=False).identical)
            time.sleep(0.02)  # on SQLite each check holds the write lock: let the recorder have turns
    finally:
        recording.join(timeout=120)
        connection.close()
    assert len(checks) >= 3 and all(checks), checks
    assert RatingLedger.objects.count() == 60


@pytest.mark.django_db(transaction=True)
def test_the_audit_reads_one_read_only_snapshot_of_its_own(ladder2, make_bot):
    """Outside a caller's transaction the audit opens its own (REPEATABLE READ, READ ONLY on PostgreSQL)."""
    bots = [make_bot(), make_bot()]
    for seed in (21, 22):
        play(ladder2, bots, seed)
    report = ratings_audit(ladder_id=ladder2.pk)
    assert report.identical and report.matches == 2 and report.ratings == 2
