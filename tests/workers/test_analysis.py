"""`analysis.run` in process: reviews a finished match's decisions with the house search level (capped by
LADDER_ANALYSIS_MAX_DECISIONS), writes its progress every few decisions and its CPU time, stores the reviews
once, does nothing when delivered again or while another process holds it, takes over from a lost worker, and
fails with the reason past its CPU budget, on an engine error or after too many lost workers."""

from __future__ import annotations

import time
import types

import pytest

from engine_service.referee.analysis import decisions_to_analyse
from ladder.analysis import services
from ladder.analysis.models import AnalysisStatus, MatchAnalysis
from ladder.replays.models import Replay
from ladder.tournaments import dispatch
from tests.ladder.conftest import play
from workers import analysis as task_module
from workers import leases
from workers.analysis import run_analysis
from workers.celery_app import app

pytestmark = pytest.mark.django_db(transaction=True)

CAP = 12  # decisions analysed per match in these tests (the search takes a few ms each)
REVIEW_KEYS = {
    "step",
    "seat",
    "played",
    "played_words",
    "played_value",
    "best",
    "best_words",
    "best_value",
    "loss",
    "alternatives",
}


@pytest.fixture(autouse=True)
def _private_leases(tmp_path, monkeypatch):
    """Leases of this test alone (match ids repeat across the suite's processes, which share var/)."""
    store = leases.SqliteLeases(tmp_path / "leases.sqlite3")
    monkeypatch.setattr(leases, "store", lambda: store)


@pytest.fixture
def asked(ladder2, make_bot, user, django_user_model, settings, monkeypatch):
    """A finished Expedition 2-player match, its analysis asked for by its seat 0's owner (not yet run)."""
    settings.LADDER_ANALYSIS_MAX_DECISIONS = CAP
    sent: list[tuple[str, list[int], str]] = []
    monkeypatch.setattr(app, "send_task", lambda name, args, queue: sent.append((name, args, queue)))
    monkeypatch.setattr(dispatch.transaction, "on_commit", lambda send: send())
    other = django_user_model.objects.create_user("bob", password="x")
    match = play(ladder2, [make_bot(name="Mine"), make_bot(owner=other, name="Theirs")], seed=90_021)
    services.analysis_request(user=user, match_id=match.pk)
    assert sent == [("analysis.run", [match.pk], "analysis")]
    return match


@pytest.fixture
def progress_calls(monkeypatch):
    calls: list[tuple[int, int]] = []
    real = task_module.analysis_progress

    def spy(**kwargs):
        calls.append((kwargs["done"], kwargs["total"]))
        return real(**kwargs)

    monkeypatch.setattr(task_module, "analysis_progress", spy)
    return calls


def test_the_task_stores_reviews_progress_and_cpu_time_once(asked, progress_calls):
    record = Replay.objects.get(match=asked).record()
    in_match = decisions_to_analyse(record)
    total = min(in_match, CAP)
    assert run_analysis.apply(args=(asked.pk,)).get() == "done"
    analysis = MatchAnalysis.objects.get(match=asked)
    assert analysis.status == AnalysisStatus.DONE and analysis.reason == "" and analysis.attempts == 1
    assert (analysis.decisions_done, analysis.decisions_total, analysis.decisions_in_match) == (
        total,
        total,
        in_match,
    )
    assert analysis.cpu_seconds > 0 and analysis.finished_at is not None
    assert 0 < len(analysis.reviews) <= total
    steps = [r["step"] for r in analysis.reviews]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    for review in analysis.reviews:
        assert set(review) >= REVIEW_KEYS
        seat, _action = record.actions[review["step"]]
        assert review["seat"] == seat
        assert review["loss"] == pytest.approx(max(0.0, review["best_value"] - review["played_value"]))
        assert review["played_words"] and review["best_words"]
    # progress: at the start, every few decisions, and at the end
    assert progress_calls[0] == (0, total) and progress_calls[-1][0] == total
    assert all(done % task_module.PROGRESS_EVERY == 0 or done == total for done, _ in progress_calls)
    # a second delivery changes nothing
    stored = (analysis.reviews, analysis.cpu_seconds, analysis.finished_at)
    assert run_analysis.apply(args=(asked.pk,)).get() == "not-runnable"
    analysis.refresh_from_db()
    assert (analysis.reviews, analysis.cpu_seconds, analysis.finished_at) == stored


def test_a_delivery_while_another_process_holds_it_does_nothing(asked):
    with leases.Lease(task_module.lease_key(asked.pk), 15) as held:
        assert held.acquired
        assert run_analysis.apply(args=(asked.pk,)).get() == "held"
    analysis = MatchAnalysis.objects.get(match=asked)
    assert analysis.status == AnalysisStatus.QUEUED and analysis.attempts == 0


def test_a_running_analysis_whose_worker_is_gone_is_taken_over(asked):
    MatchAnalysis.objects.filter(match=asked).update(
        status=AnalysisStatus.RUNNING, attempts=1, cpu_seconds=2.0
    )
    assert run_analysis.apply(args=(asked.pk,)).get() == "done"
    analysis = MatchAnalysis.objects.get(match=asked)
    assert analysis.status == AnalysisStatus.DONE and analysis.attempts == 2 and analysis.cpu_seconds > 2.0


def test_after_too_many_lost_workers_it_fails_with_the_reason(asked):
    MatchAnalysis.objects.filter(match=asked).update(
        status=AnalysisStatus.RUNNING, attempts=services.MAX_ATTEMPTS
    )
    assert run_analysis.apply(args=(asked.pk,)).get() == "not-runnable"
    analysis = MatchAnalysis.objects.get(match=asked)
    assert analysis.status == AnalysisStatus.FAILED and "worker was lost 3 times" in analysis.reason


def test_past_its_cpu_budget_it_fails_with_the_reason(asked, settings, monkeypatch):
    settings.LADDER_ANALYSIS_CPU_SECONDS = 3.0
    ticks = iter(range(10_000))  # a CPU clock that advances one second per reading: no real timing
    clock = types.SimpleNamespace(thread_time=lambda: float(next(ticks)), monotonic=time.monotonic)
    monkeypatch.setattr(task_module, "time", clock)
    assert run_analysis.apply(args=(asked.pk,)).get() == "failed"
    analysis = MatchAnalysis.objects.get(match=asked)
    assert analysis.status == AnalysisStatus.FAILED and analysis.reviews == []
    assert "past the limit of 3 per match (LADDER_ANALYSIS_CPU_SECONDS)" in analysis.reason
    assert analysis.cpu_seconds > 3.0 and analysis.decisions_done < analysis.decisions_total


def test_an_engine_error_fails_with_the_reason(asked, monkeypatch):
    def broken(record, **kwargs):
        raise ValueError("the record does not replay at step 7")

    monkeypatch.setattr(task_module, "analyse_match", broken)
    assert run_analysis.apply(args=(asked.pk,)).get() == "failed"
    analysis = MatchAnalysis.objects.get(match=asked)
    assert analysis.status == AnalysisStatus.FAILED
    assert analysis.reason == "the analysis stopped on an error: the record does not replay at step 7"


def test_bad_ids_are_refused_without_effect(db):
    assert run_analysis.apply(args=("7",)).get() == "not-runnable"
    assert run_analysis.apply(args=(987_654,)).get() == "not-runnable"
