"""Asking for a match analysis (`ladder.analysis.services.analysis_request`): a seated bot's owner or staff
may, for a finished match only; the per-user and site bounds refuse with a reason and change nothing; asking
again for one done, queued or running returns it and sends nothing; the task is sent by name, on its own
queue, once the transaction commits."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import transaction
from django.utils import timezone

from ladder.analysis import services
from ladder.analysis.models import AnalysisStatus, MatchAnalysis
from ladder.analysis.selectors import worst_decisions
from ladder.matches.services import match_create, match_mark_running, match_record_result
from tests.ladder.conftest import make_record, play
from workers.celery_app import app

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished(ladder2, make_bot, other_user):
    """A finished Expedition match: seat 0 alice's bot, seat 1 bob's."""
    return play(ladder2, [make_bot(name="Mine"), make_bot(owner=other_user, name="Theirs")], seed=90_001)


@pytest.fixture
def more_finished(ladder2, make_bot):
    """Finished matches of alice's bots for the per-user bounds (one record, replayed as several matches)."""

    def factory(count: int):
        bots = [make_bot(), make_bot()]
        return [play(ladder2, bots, seed=90_001) for _ in range(count)]

    return factory


def snapshot() -> list[tuple]:
    return list(
        MatchAnalysis.objects.order_by("pk").values_list(
            "match_id", "status", "requested_by_id", "requested_at", "decisions_done", "cpu_seconds"
        )
    )


def test_the_owner_asks_and_the_task_is_sent_by_name_after_the_commit(
    finished, user, recorded, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        requested = services.analysis_request(user=user, match_id=finished.pk)
        assert recorded == []  # nothing leaves before the commit
    assert requested.sent and requested.analysis.status == AnalysisStatus.QUEUED
    assert requested.analysis.requested_by == user
    assert recorded == [("analysis.run", [finished.pk], "analysis")]


def test_the_named_task_and_queue_are_the_workers_own():
    app.loader.import_default_modules()
    task = app.tasks[services.ANALYSIS_RUN]
    assert task.name == "analysis.run"
    route = app.amqp.router.route({}, services.ANALYSIS_RUN, args=(1,))
    assert route["queue"].name == services.ANALYSIS_QUEUE == "analysis"


def test_staff_may_ask_for_any_match(finished, staff_user, sent):
    assert services.analysis_request(user=staff_user, match_id=finished.pk).sent
    assert len(sent) == 1


def test_someone_with_no_bot_in_the_match_is_refused(finished, make_bot, sent, django_user_model):
    stranger = django_user_model.objects.create_user("carol", password="x")
    make_bot(owner=stranger, name="Elsewhere")
    with pytest.raises(
        services.AnalysisRefused, match=r"no seat of match \d+ is played by a bot of yours"
    ) as err:
        services.analysis_request(user=stranger, match_id=finished.pk)
    assert err.value.status == 403
    with pytest.raises(services.AnalysisRefused, match="sign in") as err:
        services.analysis_request(user=None, match_id=finished.pk)
    assert err.value.status == 403
    assert snapshot() == [] and sent == []


def test_only_a_finished_match_with_its_replay_shown(ladder2, make_bot, user, sent):
    bots = [make_bot(), make_bot()]
    running = match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in bots], seed=90_002)
    assert match_mark_running(match_id=running.pk)
    with pytest.raises(services.AnalysisRefused, match="only a finished match") as err:
        services.analysis_request(user=user, match_id=running.pk)
    assert err.value.status == 409
    # a finished match of a duplicate set whose other match is still to be played: its replay is held back
    done = match_create(ladder_id=ladder2.pk, bot_ids=[bots[1].pk, bots[0].pk], seed=90_002)
    assert match_mark_running(match_id=done.pk)
    assert match_record_result(match_id=done.pk, record=make_record(done))
    with pytest.raises(services.AnalysisRefused, match="duplicate set") as err:
        services.analysis_request(user=user, match_id=done.pk)
    assert err.value.status == 409
    with pytest.raises(services.AnalysisRefused, match="no match with id") as err:
        services.analysis_request(user=user, match_id=987_654)
    assert err.value.status == 404
    assert snapshot() == [] and sent == []


def test_asking_again_returns_the_analysis_and_sends_nothing(finished, user, staff_user, sent, settings):
    first = services.analysis_request(user=user, match_id=finished.pk)
    assert first.sent and len(sent) == 1
    before = snapshot()
    again = services.analysis_request(user=staff_user, match_id=finished.pk)  # queued: returned as it is
    assert not again.sent and again.analysis.pk == first.analysis.pk
    assert snapshot() == before and len(sent) == 1
    MatchAnalysis.objects.filter(pk=first.analysis.pk).update(status=AnalysisStatus.DONE)
    done = services.analysis_request(user=user, match_id=finished.pk)
    assert not done.sent and done.analysis.status == AnalysisStatus.DONE and len(sent) == 1
    # a queued one with no progress for the resend period is sent again (its message may be lost)
    MatchAnalysis.objects.filter(pk=first.analysis.pk).update(status=AnalysisStatus.QUEUED)
    stale = timezone.now() - dt.timedelta(seconds=settings.LADDER_ANALYSIS_RESEND_SECONDS + 1)
    MatchAnalysis.objects.filter(pk=first.analysis.pk).update(updated_at=stale)
    assert services.analysis_request(user=user, match_id=finished.pk).sent and len(sent) == 2
    assert not services.analysis_request(user=user, match_id=finished.pk).sent and len(sent) == 2


def test_a_failed_analysis_may_be_asked_for_again_keeping_its_cpu_time(finished, user, sent):
    first = services.analysis_request(user=user, match_id=finished.pk).analysis
    MatchAnalysis.objects.filter(pk=first.pk).update(
        status=AnalysisStatus.FAILED, reason="it ran too long", cpu_seconds=4.5, attempts=2
    )
    again = services.analysis_request(user=user, match_id=finished.pk)
    assert again.sent and again.analysis.pk == first.pk
    again.analysis.refresh_from_db()
    assert again.analysis.status == AnalysisStatus.QUEUED and again.analysis.reason == ""
    assert again.analysis.cpu_seconds == 4.5 and again.analysis.attempts == 0


def test_one_open_analysis_per_user(more_finished, user, sent):
    a, b = more_finished(2)
    services.analysis_request(user=user, match_id=a.pk)
    before = snapshot()
    with pytest.raises(services.AnalysisRefused, match=f"queued or running \\(match #{a.pk}\\)") as err:
        services.analysis_request(user=user, match_id=b.pk)
    assert err.value.status == 429
    assert snapshot() == before and len(sent) == 1


def test_a_day_of_requests_and_of_cpu_time_per_user(more_finished, user, sent, settings):
    settings.LADDER_ANALYSIS_PER_DAY = 2
    a, b, c = more_finished(3)
    for match in (a, b):
        analysis = services.analysis_request(user=user, match_id=match.pk).analysis
        MatchAnalysis.objects.filter(pk=analysis.pk).update(status=AnalysisStatus.DONE, cpu_seconds=10.0)
    before = snapshot()
    with pytest.raises(services.AnalysisRefused, match="2 analyses in the last 24 hours; at most 2") as err:
        services.analysis_request(user=user, match_id=c.pk)
    assert err.value.status == 429 and snapshot() == before and len(sent) == 2
    # a day later the count starts again
    MatchAnalysis.objects.update(requested_at=timezone.now() - dt.timedelta(hours=25))
    settings.LADDER_ANALYSIS_PER_DAY = 10
    settings.LADDER_ANALYSIS_CPU_SECONDS_PER_DAY = 15.0
    MatchAnalysis.objects.filter(match=a).update(requested_at=timezone.now())  # 10 CPU s today
    services.analysis_request(user=user, match_id=c.pk)
    MatchAnalysis.objects.filter(match=c).update(status=AnalysisStatus.DONE, cpu_seconds=6.0)
    d = more_finished(1)[0]
    before = snapshot()
    with pytest.raises(services.AnalysisRefused, match="used 16 CPU seconds; at most 15 a day") as err:
        services.analysis_request(user=user, match_id=d.pk)
    assert err.value.status == 429 and snapshot() == before and len(sent) == 3


def test_the_sites_queue_is_bounded(more_finished, user, staff_user, sent, settings):
    settings.LADDER_ANALYSIS_MAX_QUEUED = 1
    a, b = more_finished(2)
    services.analysis_request(user=staff_user, match_id=a.pk)
    before = snapshot()
    with pytest.raises(services.AnalysisRefused, match="1 analyses are waiting") as err:
        services.analysis_request(user=user, match_id=b.pk)
    assert err.value.status == 429 and snapshot() == before and len(sent) == 1


def test_the_worst_decisions_are_the_largest_losses_earliest_first():
    reviews = [{"step": s, "loss": loss} for s, loss in enumerate([0.0, 0.3, 0.1, 0.3, 0.0, 0.5, 0.2, 0.05])]
    assert [r["step"] for r in worst_decisions(reviews)] == [5, 1, 3, 6, 2]
    assert worst_decisions([{"step": 0, "loss": 0.0}]) == []
