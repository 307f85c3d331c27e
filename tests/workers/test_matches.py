"""`run_match` in process: plays and records a match exactly once, rates bot faults with their reasons,
retries infrastructure failures unrated until the attempts run out, and defers to a live lease holder."""

from __future__ import annotations

import pytest
from celery.exceptions import Retry
from django.conf import settings
from django.db import OperationalError

from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchAborted, Seat, SeatUnavailable
from ladder.matches.models import Match, MatchStatus
from ladder.matches.services import match_create, match_mark_running
from ladder.ratings.models import Rating, RatingLedger
from ladder.replays.models import LiveProgress
from tests.ladder.conftest import make_record
from workers import leases, matches
from workers.matches import _on_step, run_match, sweep_stale

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_house_match_is_played_and_rated_once(ladder2, house_bots):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[house_bots[0].pk, house_bots[1].pk], seed=11)
    assert run_match.apply(args=(match.pk,)).get() == "done"
    match.refresh_from_db()
    assert match.status == MatchStatus.DONE and match.attempts == 1 and match.steps > 0
    assert RatingLedger.objects.filter(match=match).count() == 2
    assert hasattr(match, "replay")
    # a redelivered task changes nothing
    assert run_match.apply(args=(match.pk,)).get() == "not-runnable"
    assert RatingLedger.objects.filter(match=match).count() == 2
    assert sum(Rating.objects.filter(ladder=ladder2).values_list("games", flat=True)) == 2


def test_bad_ids_are_refused_without_effect(db):
    assert run_match.apply(args=("7",)).get() == "not-runnable"
    assert run_match.apply(args=(987654,)).get() == "not-runnable"


class IllegalSeat(Seat):
    kind = "house"

    def __init__(self, name: str) -> None:
        self.name = name

    def decide(self, request):
        return "no-such-action"


class AbortingSeat(Seat):
    kind = "remote"

    def __init__(self, name: str) -> None:
        self.name = name

    def decide(self, request):
        raise MatchAborted("no gateway alive")


def test_bot_faults_are_rated_with_their_reasons(ladder2, house_bots, monkeypatch):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[house_bots[0].pk, house_bots[1].pk], seed=5)
    monkeypatch.setattr(
        matches,
        "build_seats",
        lambda m, reconnect_grace: [HouseSeat(make_policy("random", seed=1), "a"), IllegalSeat("b")],
    )
    assert run_match.apply(args=(match.pk,)).get() == "done"
    seat = match.seats.get(index=1)
    assert seat.forfeited and seat.rank == 2
    assert seat.faults[0]["kind"] == "illegal" and "no-such-action" in seat.faults[0]["reason"]
    assert RatingLedger.objects.filter(match=match).count() == 2


class AbsentSeat(Seat):
    kind = "remote"

    def __init__(self, name: str) -> None:
        self.name = name

    def start(self, info):
        raise SeatUnavailable(f"bot {self.name} had no stream open with room: called off, unrated")

    def decide(self, request):  # pragma: no cover - never asked: the match never begins
        raise AssertionError("an absent seat was asked to decide")


def test_a_bot_absent_at_the_start_calls_the_match_off_unrated(ladder2, house_bots, monkeypatch):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[house_bots[0].pk, house_bots[1].pk], seed=8)
    monkeypatch.setattr(
        matches,
        "build_seats",
        lambda m, reconnect_grace: [HouseSeat(make_policy("random", seed=1), "a"), AbsentSeat("b")],
    )
    assert run_match.apply(args=(match.pk,)).get() == "called-off"
    match.refresh_from_db()
    assert match.status == MatchStatus.CANCELLED and "called off before it began" in match.error
    assert not match.seats.filter(forfeited=True).exists()
    assert not RatingLedger.objects.filter(match=match).exists()
    assert run_match.apply(args=(match.pk,)).get() == "not-runnable"  # a redelivery plays nothing


def test_infrastructure_failures_retry_unrated_until_attempts_run_out(ladder2, house_bots, monkeypatch):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[house_bots[0].pk, house_bots[1].pk], seed=6)
    monkeypatch.setattr(matches, "backoff_seconds", lambda retries, base=0: 0.0)
    monkeypatch.setattr(
        matches,
        "build_seats",
        lambda m, reconnect_grace: [HouseSeat(make_policy("random", seed=1), "a"), AbortingSeat("b")],
    )
    run_match.apply(args=(match.pk,))  # eager retries run at once
    match.refresh_from_db()
    assert match.status == MatchStatus.ERROR
    assert match.attempts == settings.LADDER_MATCH_MAX_ATTEMPTS
    assert match.error.count("MatchAborted: no gateway alive") == settings.LADDER_MATCH_MAX_ATTEMPTS
    assert not RatingLedger.objects.filter(match=match).exists()
    assert not hasattr(Match.objects.get(pk=match.pk), "replay")


def test_a_match_held_by_a_live_process_is_left_to_it(ladder2, house_bots):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[house_bots[0].pk, house_bots[1].pk], seed=7)
    store = leases.store()
    assert store.acquire(matches.lease_key(match.pk), "elsewhere", 30)
    with pytest.raises(Retry):
        run_match(match.pk)  # called directly: the retry surfaces
    match.refresh_from_db()
    assert match.status == MatchStatus.QUEUED and match.attempts == 0
    store.release(matches.lease_key(match.pk), "elsewhere")
    assert run_match.apply(args=(match.pk,)).get() == "done"


def test_sweep_requeues_a_running_match_nobody_holds(ladder2, house_bots, monkeypatch):
    from ladder.matches.services import match_mark_running

    match = match_create(ladder_id=ladder2.pk, bot_ids=[house_bots[0].pk, house_bots[1].pk], seed=8)
    assert match_mark_running(match_id=match.pk)  # as if a worker started it and was killed
    Match.objects.filter(pk=match.pk).update(started_at=match.queued_at.replace(year=2000))
    sent = []
    monkeypatch.setattr(run_match, "delay", lambda match_id: sent.append(match_id))
    assert sweep_stale() == {"requeued": [match.pk], "resent": []}
    match.refresh_from_db()
    assert sent == [match.pk] and match.status == MatchStatus.QUEUED
    assert "worker lost" in match.error
    assert run_match.apply(args=(match.pk,)).get() == "done"
    match.refresh_from_db()
    assert match.attempts == 2 and RatingLedger.objects.filter(match=match).count() == 2


def test_sweep_leaves_a_running_match_whose_task_waits_out_the_database(ladder2, house_bots, monkeypatch):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[house_bots[0].pk, house_bots[1].pk], seed=9)
    Match.objects.filter(pk=match.pk).update(queued_at=match.queued_at.replace(year=2000))

    def database_down(**kwargs):
        Match.objects.filter(pk=match.pk).update(started_at=match.queued_at.replace(year=2000))
        raise OperationalError("connection refused")

    with monkeypatch.context() as outage:  # played through, then neither recorded nor marked failed
        outage.setattr(matches, "RECORD_RETRY_SECONDS", ())
        outage.setattr(matches, "match_record_result", database_down)
        outage.setattr(matches, "match_record_infrastructure_failure", database_down)
        with pytest.raises(Retry):
            run_match(match.pk)  # called directly: the retry surfaces
    store = leases.store()
    assert store.holder(matches.lease_key(match.pk)) is None  # released while the retry waits
    mark = store.holder(matches.retry_key(match.pk))
    assert mark is not None
    sent = []
    monkeypatch.setattr(run_match, "delay", lambda match_id: sent.append(match_id))
    assert sweep_stale() == {"requeued": [], "resent": []} and sent == []  # not a lost worker's
    match.refresh_from_db()
    assert match.status == MatchStatus.RUNNING and match.error == ""
    store.release(matches.retry_key(match.pk), mark)  # the marking process died: its mark expired
    assert sweep_stale() == {"requeued": [match.pk], "resent": []} and sent == [match.pk]


def test_the_worker_offers_live_progress_every_few_seconds_and_its_publisher_writes_it(ladder2, make_bot):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=77)
    assert match_mark_running(match_id=match.pk)
    record = make_record(match)
    counted = []
    on_step = _on_step(match.pk, lambda: counted.append(1))
    record.actions = record.actions[:4]
    on_step(None, record)  # the first decision is published at once
    record.actions = [*record.actions, record.actions[0]]
    on_step(None, record)  # the next, within CARAVANSERAI_LIVE_SECONDS, is not
    assert len(counted) == 2
    assert not LiveProgress.objects.exists()  # match threads only offer: the publisher thread writes
    matches.LIVE.flush()
    progress = LiveProgress.objects.get(match=match)
    assert progress.steps == 4
    assert progress.clocks == {str(step): record.clocks[step] for step in range(4)}  # with the actions
