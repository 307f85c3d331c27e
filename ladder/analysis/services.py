"""Match analysis writes: asking for one (the web), and a worker's claim, progress, result or failure.

Layer: services (keyword-only, transactional). Who may ask: the owner of a bot seated in the match, and
staff; only for a finished (DONE) match whose replay is shown (`match_secrets_revealed`: no unfinished match
shares its seed), since the analysis replays it and searches from every decision. A refusal raises an
`AnalysisRefused` subclass whose message says why and whose `status` is the HTTP status (403, 404, 409,
429), and changes nothing.

Bounds, checked when a new analysis is asked for (LADDER_ANALYSIS_*; defaults in `ladder.settings.base`):
- per user: at most LADDER_ANALYSIS_MAX_OPEN queued or running at once, LADDER_ANALYSIS_PER_DAY asked for
  in 24 hours, and LADDER_ANALYSIS_CPU_SECONDS_PER_DAY of CPU time spent on those;
- the site: at most LADDER_ANALYSIS_MAX_QUEUED queued or running in all;
- per match (the worker's, `workers.analysis`): LADDER_ANALYSIS_MAX_DECISIONS decisions searched,
  LADDER_ANALYSIS_CPU_SECONDS of CPU and LADDER_ANALYSIS_TIME_LIMIT wall seconds, then it fails with the
  reason.
Asking again for an analysis that is done, queued or running returns it and sends nothing (nor counts
against a bound); a queued or running one with no progress for LADDER_ANALYSIS_RESEND_SECONDS is sent again
(its message may have been lost; the task is idempotent). A failed one may be asked for again, within the
bounds; its CPU time so far stays counted.

The workers' task (`analysis.run` on the `analysis` queue, registered by `workers.analysis`) is sent by name
after the commit (`ladder.tournaments.dispatch.send_on_commit`): the ladder imports nothing of `workers`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Sum
from django.utils import timezone

from ladder.analysis.models import AnalysisStatus, MatchAnalysis
from ladder.analysis.selectors import (
    AnalysisLimited,
    AnalysisNotFound,
    AnalysisRefused,
    analysis_refusal,
)
from ladder.matches.models import Match
from ladder.tournaments.dispatch import send_on_commit

__all__ = [
    "AnalysisRefused",
    "AnalysisRequested",
    "analysis_claim",
    "analysis_fail",
    "analysis_finish",
    "analysis_progress",
    "analysis_request",
]

ANALYSIS_RUN = "analysis.run"  # the task name `workers.analysis` registers
ANALYSIS_QUEUE = "analysis"
OPEN = (AnalysisStatus.QUEUED, AnalysisStatus.RUNNING)
MAX_ATTEMPTS = 3  # worker starts of one request (a worker lost mid-analysis redelivers it) before it fails
DAY = dt.timedelta(hours=24)


@dataclass(frozen=True)
class AnalysisRequested:
    analysis: MatchAnalysis
    sent: bool  # a task was sent for this request (False: it was already done, queued or running)


def _bounds_refusal(user: User, now: dt.datetime) -> AnalysisLimited | None:
    mine = MatchAnalysis.objects.filter(requested_by=user)
    open_ids = list(mine.filter(status__in=OPEN).values_list("match_id", flat=True)[:5])
    if len(open_ids) >= settings.LADDER_ANALYSIS_MAX_OPEN:
        which = ", ".join(f"#{pk}" for pk in open_ids)
        return AnalysisLimited(
            f"you have {len(open_ids)} analysis queued or running (match {which}); at most "
            f"{settings.LADDER_ANALYSIS_MAX_OPEN} at once: ask again when it is done"
            if open_ids
            else "match analysis is switched off (LADDER_ANALYSIS_MAX_OPEN is 0)"
        )
    today = mine.filter(requested_at__gte=now - DAY)
    count = today.count()
    if count >= settings.LADDER_ANALYSIS_PER_DAY:
        return AnalysisLimited(
            f"you asked for {count} analyses in the last 24 hours; at most "
            f"{settings.LADDER_ANALYSIS_PER_DAY} a day"
        )
    spent = today.aggregate(total=Sum("cpu_seconds"))["total"] or 0.0
    if spent >= settings.LADDER_ANALYSIS_CPU_SECONDS_PER_DAY:
        return AnalysisLimited(
            f"your analyses of the last 24 hours used {spent:.0f} CPU seconds; at most "
            f"{settings.LADDER_ANALYSIS_CPU_SECONDS_PER_DAY:.0f} a day"
        )
    waiting = MatchAnalysis.objects.filter(status__in=OPEN).count()
    if waiting >= settings.LADDER_ANALYSIS_MAX_QUEUED:
        return AnalysisLimited(
            f"{waiting} analyses are waiting for the analysis worker (at most "
            f"{settings.LADDER_ANALYSIS_MAX_QUEUED}): ask again later"
        )
    return None


def _send(match_id: int) -> None:
    send_on_commit(ANALYSIS_RUN, match_id, queue=ANALYSIS_QUEUE)


def analysis_request(*, user: Any, match_id: int) -> AnalysisRequested:
    """Ask for the analysis of finished match `match_id` on behalf of `user` (see the module docstring).
    Returns the analysis, and whether a task was sent; raises an `AnalysisRefused` (nothing changed)."""
    match = Match.objects.filter(pk=match_id).first()
    if match is None:
        raise AnalysisNotFound(f"no match with id {match_id}")
    refusal = analysis_refusal(user=user, match=match)
    if refusal is not None:
        raise refusal
    now = timezone.now()
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()  # one request of a user at a time
        analysis = MatchAnalysis.objects.select_for_update().filter(match_id=match.pk).first()
        if analysis is not None and analysis.status == AnalysisStatus.DONE:
            return AnalysisRequested(analysis, sent=False)
        if analysis is not None and analysis.is_open:
            stale = analysis.updated_at < now - dt.timedelta(seconds=settings.LADDER_ANALYSIS_RESEND_SECONDS)
            if stale:
                analysis.save(update_fields=["updated_at"])  # the next resend waits as long again
                _send(match.pk)
            return AnalysisRequested(analysis, sent=stale)
        limited = _bounds_refusal(user, now)
        if limited is not None:
            raise limited
        if analysis is None:
            analysis = MatchAnalysis(match=match)
        analysis.requested_by = user
        analysis.status = AnalysisStatus.QUEUED
        analysis.reason = ""
        analysis.decisions_done = 0
        analysis.attempts = 0
        analysis.reviews = []
        analysis.requested_at = now
        analysis.started_at = analysis.finished_at = None
        analysis.save()
        _send(match.pk)
    return AnalysisRequested(analysis, sent=True)


def analysis_claim(*, match_id: int) -> MatchAnalysis | None:
    """A worker takes the analysis of `match_id` to run it: QUEUED, or RUNNING (the caller holds the
    analysis's lease, so whoever ran it before is gone), becomes RUNNING with one more attempt. None when
    there is nothing to run (done, failed, unknown), or when it has been started MAX_ATTEMPTS times already
    (it is FAILED then, with that reason)."""
    now = timezone.now()
    with transaction.atomic():
        analysis = MatchAnalysis.objects.select_for_update().filter(match_id=match_id).first()
        if analysis is None or not analysis.is_open:
            return None
        if analysis.attempts >= MAX_ATTEMPTS:
            analysis.status = AnalysisStatus.FAILED
            analysis.reason = (
                f"its worker was lost {analysis.attempts} times before it finished (each try is bounded by "
                "LADDER_ANALYSIS_CPU_SECONDS and LADDER_ANALYSIS_TIME_LIMIT)"
            )
            analysis.finished_at = now
            analysis.save()
            return None
        analysis.status = AnalysisStatus.RUNNING
        analysis.attempts += 1
        analysis.decisions_done = 0
        analysis.started_at = now
        analysis.save()
    return analysis


def analysis_progress(
    *, match_id: int, done: int, total: int, in_match: int | None = None, cpu_seconds: float
) -> bool:
    """Store how far a RUNNING analysis is (`done` of `total` decisions, its CPU time in all so far); False
    when it is not running any more (nothing stored)."""
    fields: dict[str, Any] = {
        "decisions_done": max(0, min(done, total)),
        "decisions_total": max(0, total),
        "cpu_seconds": cpu_seconds,
        "updated_at": timezone.now(),
    }
    if in_match is not None:
        fields["decisions_in_match"] = in_match
    return bool(
        MatchAnalysis.objects.filter(match_id=match_id, status=AnalysisStatus.RUNNING).update(**fields)
    )


def analysis_finish(*, match_id: int, reviews: Sequence[dict[str, Any]], cpu_seconds: float) -> bool:
    """A RUNNING analysis is DONE with `reviews` (DecisionReview.as_json() each, in decision order); False
    when it was not running (nothing stored)."""
    return bool(
        MatchAnalysis.objects.filter(match_id=match_id, status=AnalysisStatus.RUNNING).update(
            status=AnalysisStatus.DONE,
            reviews=list(reviews),
            decisions_done=F("decisions_total"),
            cpu_seconds=cpu_seconds,
            reason="",
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
    )


def analysis_fail(*, match_id: int, reason: str, cpu_seconds: float) -> bool:
    """A RUNNING analysis FAILED for `reason` (said to the person who asked); False when it was not running."""
    return bool(
        MatchAnalysis.objects.filter(match_id=match_id, status=AnalysisStatus.RUNNING).update(
            status=AnalysisStatus.FAILED,
            reason=reason[:2000],
            cpu_seconds=cpu_seconds,
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
    )
