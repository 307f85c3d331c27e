"""The match analysis task: `analysis.run(match_id)` reviews every decision of a finished match with the
house `search` level and stores, per decision, the value of the move played against the best move found.

The ladder sends it by name (`ladder.analysis.services`, queue `analysis`) once someone allowed asked for it;
it runs on its own worker (`celery -A workers.celery_app worker -Q analysis -P prefork -c 1`, the Procfile's
`analyst`), never on the match workers' `matches` queue: an analysis is CPU-bound, and a match thread must
not wait behind it. The engine does the work (`engine_service.referee.analysis.analyse_match`, each decision
searched from its own seat's observation only); this task loads the stored record, bounds the run and writes
through the ladder's services.

Bounds (Django settings, defaults in `ladder.settings.base`): at most LADDER_ANALYSIS_MAX_DECISIONS decisions
(the first ones of the match), LADDER_ANALYSIS_CPU_SECONDS of this thread's CPU time and
LADDER_ANALYSIS_TIME_LIMIT wall seconds, checked after every decision (so they hold in any pool), with
Celery's soft time limit at the same wall time (prefork) as the backstop. Past one, the analysis FAILS with
the reason. Its CPU time (`time.thread_time`, the task's own thread) is stored with its progress, every
PROGRESS_EVERY decisions.

Idempotent: the task holds the lease `analysis:<match id>` while it runs (a second delivery finds it held and
does nothing), and runs only what `analysis_claim` hands it (a QUEUED analysis, or a RUNNING one whose
worker is gone: nobody else holds its lease); a DONE or FAILED one is left alone. A worker lost mid-run
redelivers the task (acks_late, reject_on_worker_lost); after `MAX_ATTEMPTS` starts it fails.

Layer: orchestration (a thin task over the engine and `ladder.analysis.services`). Must not write rows
directly or analyse anything itself.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, close_old_connections

from engine_service.referee.analysis import analyse_match, decisions_to_analyse
from ladder.analysis.services import analysis_claim, analysis_fail, analysis_finish, analysis_progress
from ladder.replays.models import Replay
from workers import leases
from workers.celery_app import app
from workers.config import WorkerSettings

log = logging.getLogger("caravanserai.analysis")

SETTINGS = WorkerSettings.from_env()
LEVEL = "search"
PROGRESS_EVERY = 5  # decisions between progress writes
HARD_LIMIT_MARGIN = 30  # seconds after the soft time limit before Celery kills the process (prefork)
LEASE_LOST = "the analysis's lease was lost (its renewal found it gone or taken)"


class AnalysisStopped(Exception):
    """A bound was reached, or the lease lost, between two decisions; the message says which."""

    def __init__(self, reason: str, *, write: bool = True) -> None:
        super().__init__(reason)
        self.write = write  # False: another process may hold the analysis now, so write nothing


def lease_key(match_id: int) -> str:
    return f"analysis:{match_id}"


@app.task(
    name="analysis.run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=settings.LADDER_ANALYSIS_TIME_LIMIT,
    time_limit=settings.LADDER_ANALYSIS_TIME_LIMIT + HARD_LIMIT_MARGIN,
)
def run_analysis(self: Task[Any, Any], match_id: int) -> str:
    """Analyse match `match_id`. Returns what happened: done, failed, held (another process runs it),
    not-runnable (nothing to run: done, failed, unknown or a bad id), lease-lost or error (the database)."""
    if isinstance(match_id, bool) or not isinstance(match_id, int):
        log.error("analysis.run needs an integer match id, got %r", match_id)
        return "not-runnable"
    close_old_connections()
    try:
        with leases.Lease(lease_key(match_id), SETTINGS.lease_seconds) as lease:
            if not lease.acquired:
                return "held"
            claimed = analysis_claim(match_id=match_id)
            if claimed is None:
                return "not-runnable"
            return _analyse(match_id, claimed.cpu_seconds, lease)
    except DatabaseError:
        # the analysis stays as it was; asking again after LADDER_ANALYSIS_RESEND_SECONDS sends it again
        log.exception("analysis of match %s: the database failed", match_id)
        return "error"


def _analyse(match_id: int, cpu_before: float, lease: leases.Lease) -> str:
    cpu_start = time.thread_time()
    deadline = time.monotonic() + settings.LADDER_ANALYSIS_TIME_LIMIT
    cpu_limit = settings.LADDER_ANALYSIS_CPU_SECONDS
    cap = settings.LADDER_ANALYSIS_MAX_DECISIONS

    def cpu_total() -> float:
        return cpu_before + (time.thread_time() - cpu_start)

    try:
        record = Replay.objects.get(match_id=match_id).record()
    except (Replay.DoesNotExist, ValueError, KeyError, TypeError) as exc:
        analysis_fail(
            match_id=match_id, reason=f"its replay could not be read: {exc}", cpu_seconds=cpu_total()
        )
        return "failed"
    in_match = decisions_to_analyse(record)
    total = min(in_match, cap)
    analysis_progress(match_id=match_id, done=0, total=total, in_match=in_match, cpu_seconds=cpu_total())

    def progress(done: int, of: int) -> None:
        if lease.lost:
            raise AnalysisStopped(LEASE_LOST, write=False)
        used = time.thread_time() - cpu_start
        if used > cpu_limit:
            raise AnalysisStopped(
                f"it used {used:.0f} CPU seconds after {done} of {of} decisions, past the limit of "
                f"{cpu_limit:g} per match (LADDER_ANALYSIS_CPU_SECONDS)"
            )
        if time.monotonic() > deadline:
            raise AnalysisStopped(_time_limit_reason(done, of))
        if done % PROGRESS_EVERY == 0 or done >= of:
            analysis_progress(match_id=match_id, done=done, total=of, cpu_seconds=cpu_total())

    try:
        reviews = analyse_match(record, level=LEVEL, max_decisions=cap, progress=progress)
    except AnalysisStopped as stop:
        log.warning("analysis of match %s stopped: %s", match_id, stop)
        if not stop.write:
            return "lease-lost"
        analysis_fail(match_id=match_id, reason=str(stop), cpu_seconds=cpu_total())
        return "failed"
    except SoftTimeLimitExceeded:
        analysis_fail(match_id=match_id, reason=_time_limit_reason(None, total), cpu_seconds=cpu_total())
        return "failed"
    except DatabaseError:
        raise
    except Exception as exc:  # the engine's error: said to the person who asked, and logged in full
        log.exception("analysis of match %s failed", match_id)
        analysis_fail(
            match_id=match_id, reason=f"the analysis stopped on an error: {exc}", cpu_seconds=cpu_total()
        )
        return "failed"
    if lease.lost:
        return "lease-lost"
    cpu = cpu_total()
    analysis_finish(match_id=match_id, reviews=[r.as_json() for r in reviews], cpu_seconds=cpu)
    log.info("analysis of match %s: %d decisions reviewed in %.1f CPU seconds", match_id, len(reviews), cpu)
    return "done"


def _time_limit_reason(done: int | None, of: int) -> str:
    where = "" if done is None else f" after {done} of {of} decisions"
    return (
        f"it ran longer than its limit of {settings.LADDER_ANALYSIS_TIME_LIMIT:g} seconds{where} "
        "(LADDER_ANALYSIS_TIME_LIMIT)"
    )
