"""Match tasks: `run_match(match_id)` plays one ladder match; `sweep_stale` recovers matches whose worker died.

`run_match` is idempotent by match id:
- it first takes the lease `match:<id>` (no two processes play a match at once); if another live process holds
  it, the task looks again one lease period later, and does nothing once the match is finished;
- `match_mark_running` says whether the match is still to be played (False: do nothing) and counts the
  attempt; `match_record_result` writes result, replay and ratings exactly once (False if already done).
Infrastructure failures (no gateway alive, the session registry or the database unreachable, from the
first status read to the last write; the match's time limit) go through
`match_record_infrastructure_failure(retry=True)`: never rated; the task is retried with exponential
backoff while attempts remain (the ladder's LADDER_MATCH_MAX_ATTEMPTS), and the match ends ERROR after
that. Every retry is bounded (CARAVANSERAI_TASK_MAX_RETRIES per message; past it the match is left to the
sweep). A lost lease stops the match at its next decision and writes nothing: another process may hold it.
Bot faults are the referee's business: recorded in the record, rated, with their reasons. A remote bot with no
stream with room when its match is to start (`SeatUnavailable`) has the match cancelled, unrated: nobody
forfeits a match that never began.

Concurrency: the worker runs Celery's threads pool, one match per thread, many per process; a thread holds
no database connection while its match waits on bots, and the process's one lease thread renews every
match's lease. Celery's time limits do not exist in that pool, so the match's limit is checked by the
referee between decisions (`should_stop`), and no single decision outlives its deadline.

Delivery: acks_late, prefetch 1 per thread. A worker process killed mid-match leaves its messages
unacknowledged (Redis redelivers them only after its visibility timeout; the embedded broker not at all):
`sweep_stale` finds the RUNNING matches nobody holds a lease on after two lease periods, and QUEUED matches
waiting too long, and sends them again; the late redeliveries then find them finished and do nothing.

Layer: orchestration (thin tasks over the ladder's services and the referee). Must not rate or write rows
directly.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import timedelta
from typing import Any

import redis
from celery import Task
from celery.exceptions import MaxRetriesExceededError
from django.core.exceptions import ValidationError
from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from engine_service.games import GameState
from engine_service.referee import MatchAborted, MatchRecord, Seat, SeatUnavailable, TimeControl
from engine_service.referee import run_match as referee_run_match
from ladder.matches.models import Match, MatchStatus
from ladder.matches.services import (
    match_cancel,
    match_mark_running,
    match_record_infrastructure_failure,
    match_record_result,
)
from ladder.replays.services import live_progress_publish
from workers import capacity, leases, metrics, retry_marks
from workers.celery_app import app
from workers.config import WorkerSettings
from workers.live import LivePublisher
from workers.seats import build_seats

log = logging.getLogger("caravanserai.workers")

SETTINGS = WorkerSettings.from_env()
FINAL = (MatchStatus.DONE, MatchStatus.ERROR, MatchStatus.CANCELLED)
# what an unreachable database, registry or gateway looks like from here
INFRASTRUCTURE_ERRORS = (MatchAborted, DatabaseError, redis.RedisError, sqlite3.Error)
LEASE_LOST = "the match's lease was lost (its renewal found it gone or taken)"
# Publishing a retry while the broker is away (a Redis restart) waits for it, up to about five minutes, in
# this match's own thread: a retry that could not be sent would leave the match QUEUED with no message
# until the sweep's CARAVANSERAI_QUEUED_RESEND_SECONDS.
RETRY_PUBLISH_POLICY = {"max_retries": 60, "interval_start": 1.0, "interval_step": 1.0, "interval_max": 5.0}


def lease_key(match_id: int) -> str:
    return f"match:{match_id}"


def retry_key(match_id: int) -> str:
    """A RUNNING match whose own task waits to retry it (the database was down): `workers.retry_marks`; held
    until the retry starts, its process dies, or the countdown and one match's longest run have passed."""
    return f"retrying:{match_id}"


def backoff_seconds(retries: int, base: float = SETTINGS.retry_backoff) -> float:
    """Exponential backoff with jitter: base, 2 base, 4 base, ... at most 300 s."""
    return min(300.0, base * 2.0**retries) * random.uniform(0.8, 1.2)


def time_control() -> TimeControl:
    return TimeControl(
        decision_seconds=SETTINGS.decision_seconds, time_bank_seconds=SETTINGS.time_bank_seconds
    )


_DATABASE_TURNS = threading.BoundedSemaphore(SETTINGS.database_connections)


@contextlib.contextmanager
def database_turn() -> Iterator[None]:
    """A turn at the database for one of this process's match threads: at most
    CARAVANSERAI_DB_CONNECTIONS at once, each connection closed at the end of its turn, so a worker playing
    hundreds of matches holds a few connections, not one per match (PostgreSQL allows 100 by default)."""
    with _DATABASE_TURNS:
        try:
            yield
        finally:
            connection.close()


def _status(match_id: int) -> str | None:
    return Match.objects.filter(pk=match_id).values_list("status", flat=True).first()


@app.task(
    name="matches.run_match",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=SETTINGS.task_max_retries,
)
def run_match(self: Task[Any, Any], match_id: int, unrecorded_failure: str = "") -> str:
    """Play match `match_id` and record it. Returns what happened: done, already-done, not-runnable,
    called-off (a bot was not there when it was to start: cancelled unrated), error,
    lease-lost or dropped. `unrecorded_failure` is the reason of a previous attempt's infrastructure failure
    that the database was down to record: it is recorded first."""
    if isinstance(match_id, bool) or not isinstance(match_id, int):
        log.error("run_match needs an integer match id, got %r", match_id)
        return "not-runnable"
    close_old_connections()
    if self.request.retries:
        retry_marks.unmark(retry_key(match_id), self.request.id or "")
    outcome = "raised"  # a retry (or an unexpected error) leaves as an exception
    try:
        with capacity.occupied():
            outcome = _run_leased(self, match_id, unrecorded_failure)
    except MaxRetriesExceededError:
        # the match is not lost: it stays QUEUED or RUNNING, and `sweep_stale` sends it again later
        log.error("match %s: task retried %d times; dropped, left to the sweep", match_id, self.max_retries)
        retry_marks.unmark(retry_key(match_id), self.request.id or "")
        outcome = "dropped"
    finally:
        metrics.TASK_OUTCOMES.labels(outcome).inc()
    return outcome


def _run_leased(task: Task[Any, Any], match_id: int, unrecorded_failure: str) -> str:
    try:
        with leases.Lease(lease_key(match_id), SETTINGS.lease_seconds) as lease:
            if not lease.acquired:
                with database_turn():
                    status = _status(match_id)
                if status in (*FINAL, None):
                    return "not-runnable"
                # another live process plays it; look again once its lease could have lapsed
                metrics.RETRIES.labels("lease-held").inc()
                raise task.retry(kwargs={}, countdown=SETTINGS.lease_seconds)
            return _play(task, match_id, lease, unrecorded_failure)
    except (redis.RedisError, sqlite3.Error) as exc:  # the lease store itself is unreachable
        log.warning("match %s: lease store unavailable (%s); retrying", match_id, exc)
        metrics.RETRIES.labels("lease-store").inc()
        raise task.retry(
            kwargs={}, countdown=backoff_seconds(task.request.retries), retry_policy=RETRY_PUBLISH_POLICY
        ) from exc


def _stop_check(lease: leases.Lease) -> Callable[[], str | None]:
    """What `referee.run_match` asks before every decision: stop once the lease is lost or time is up."""
    deadline = time.monotonic() + SETTINGS.match_soft_limit

    def should_stop() -> str | None:
        if lease.lost:
            return LEASE_LOST
        if time.monotonic() > deadline:
            return f"the match ran longer than its limit of {SETTINGS.match_soft_limit:g}s"
        return None

    return should_stop


def _referee(match: Match, seats: list[Seat], lease: leases.Lease) -> MatchRecord:
    """The referee's run of `match`, counted in this process's metrics."""
    game = match.ladder.game_id
    decisions = metrics.DECISIONS.labels(game)
    with metrics.MATCHES_IN_FLIGHT.labels(game).track_inprogress(), metrics.MATCH_SECONDS.labels(game).time():
        try:
            return referee_run_match(
                game,
                match.ladder.num_players,
                match.seed,
                seats,
                match.ladder.options,
                match_id=str(match.pk),
                time_control=time_control(),
                should_stop=_stop_check(lease),
                on_step=_on_step(match.pk, decisions.inc),
            )
        finally:
            LIVE.forget(match.pk)  # an offer written after the result would outlive its match


def _on_step(match_id: int, count_decision: Callable[[], None]) -> Callable[[GameState, MatchRecord], None]:
    """After every decision: count it, and every CARAVANSERAI_LIVE_SECONDS offer the actions so far and their
    clocks to the process's live publisher (no I/O here: watching must never cost a match)."""
    last = -math.inf

    def on_step(state: GameState, record: MatchRecord) -> None:
        nonlocal last
        count_decision()
        now = time.monotonic()
        if SETTINGS.live_seconds and now - last >= SETTINGS.live_seconds:
            last = now
            LIVE.offer(match_id, record.actions, record.clocks)

    return on_step


def _publish_live(
    match_id: int, actions: Sequence[tuple[int, str]], clocks: Mapping[int, Sequence[float | None]]
) -> None:
    with database_turn():
        live_progress_publish(match_id=match_id, actions=actions, clocks=clocks)


LIVE = LivePublisher(_publish_live, interval=SETTINGS.live_seconds or 2.0)


# a played match waits this long for its database (about a minute by default) before it is played again
RECORD_RETRY_SECONDS = tuple(2**i for i in range(SETTINGS.record_retries))


def _record(match_id: int, record: MatchRecord) -> bool:
    """Record a played match, waiting out a short database outage rather than playing it all again."""
    for pause in RECORD_RETRY_SECONDS:
        try:
            with database_turn():
                return match_record_result(match_id=match_id, record=record)
        except DatabaseError as exc:
            log.warning("match %s: recording failed (%s); again in %ss", match_id, exc, pause)
            metrics.RETRIES.labels("record").inc()
            time.sleep(pause)
    with database_turn():  # the last try: its failure is an infrastructure failure of the task
        return match_record_result(match_id=match_id, record=record)


def _prepare(match_id: int, unrecorded_failure: str) -> tuple[Match, list[Seat]] | None:
    """Mark the match running and build its seats; None when it is not to be played."""
    if _status(match_id) is None:
        log.error("run_match: no match with id %s", match_id)
        return None
    if unrecorded_failure:  # counted against the match's attempts like any other
        match_record_infrastructure_failure(match_id=match_id, reason=unrecorded_failure, retry=True)
    if not match_mark_running(match_id=match_id):
        return None
    match = Match.objects.select_related("ladder").get(pk=match_id)
    return match, build_seats(match, reconnect_grace=SETTINGS.reconnect_grace)


def _play(task: Task[Any, Any], match_id: int, lease: leases.Lease, unrecorded_failure: str) -> str:
    try:
        with database_turn():
            prepared = _prepare(match_id, unrecorded_failure)
        if prepared is None:
            return "not-runnable"
        match, seats = prepared
        log.info(
            "match %s on %s: playing (%s)", match_id, match.ladder.slug, ", ".join(s.name for s in seats)
        )
        record = _referee(match, seats, lease)
        if lease.lost:  # lost while the last decision was out: another process may hold the match now
            raise MatchAborted(LEASE_LOST)
        recorded = _record(match_id, record)
    except SeatUnavailable as exc:
        # a bot was not there when its match was to start: called off unrated, never a forfeit
        with database_turn():
            match_cancel(match_id=match_id, reason=f"called off before it began, unrated: {exc}")
        log.info("match %s: called off: %s", match_id, exc)
        return "called-off"
    except INFRASTRUCTURE_ERRORS as exc:
        if lease.lost:
            log.warning("match %s: abandoned, its lease was lost (%s)", match_id, exc)
            return "lease-lost"  # whoever holds it now plays it; if nobody, `sweep_stale` requeues it
        with database_turn():
            return _infrastructure_failure(task, match_id, f"{type(exc).__name__}: {exc}")
    except ValidationError as exc:
        # the record does not fit the match: a bug, not a flake; retrying would only repeat it
        with database_turn():
            match_record_infrastructure_failure(
                match_id=match_id, reason=f"record rejected: {exc}", retry=False
            )
        log.error("match %s: record rejected: %s", match_id, exc)
        return "error"
    log.info(
        "match %s: %s in %d steps", match_id, "recorded" if recorded else "already recorded", record.steps
    )
    return "done" if recorded else "already-done"


def _infrastructure_failure(task: Task[Any, Any], match_id: int, reason: str) -> str:
    log.warning("match %s: infrastructure failure: %s", match_id, reason)
    metrics.INFRASTRUCTURE_FAILURES.labels(reason.partition(":")[0]).inc()
    if connection.connection is not None and not connection.is_usable():
        connection.close()
    try:
        match_record_infrastructure_failure(match_id=match_id, reason=reason, retry=True)
        status = _status(match_id)
    except DatabaseError as exc:
        # the database itself is down: the match stays as it is (`match_mark_running` accepts RUNNING on
        # retry) and the retry records this reason once it can (every other retry passes kwargs={}, or
        # Celery would hand this reason on to them too)
        connection.close()
        metrics.RETRIES.labels("database").inc()
        countdown = backoff_seconds(task.request.retries)
        # no lease is held while the retry waits: the mark tells the sweep that no worker is lost
        retry_marks.mark(
            retry_key(match_id),
            task.request.id or "",
            SETTINGS.lease_seconds,
            countdown + SETTINGS.match_soft_limit,
        )
        raise task.retry(
            kwargs={"unrecorded_failure": reason}, countdown=countdown, retry_policy=RETRY_PUBLISH_POLICY
        ) from exc
    if status == MatchStatus.QUEUED:
        metrics.RETRIES.labels("infrastructure").inc()
        raise task.retry(
            kwargs={}, countdown=backoff_seconds(task.request.retries), retry_policy=RETRY_PUBLISH_POLICY
        )
    return "error"


@app.task(name="matches.sweep_stale", ignore_result=True)
def sweep_stale() -> dict[str, list[int]]:
    """Send again the matches a lost worker left behind: RUNNING with no lease held (its process died) after
    one lease period and no retry of its own task awaited (`retry_key`), and QUEUED for longer than
    CARAVANSERAI_QUEUED_RESEND_SECONDS (a message the embedded broker lost with its worker). Duplicate
    messages are harmless: the lease and the status checks drop them."""
    store = leases.store()
    now = timezone.now()
    requeued: list[int] = []
    resent: list[int] = []
    running = Match.objects.filter(
        status=MatchStatus.RUNNING, started_at__lt=now - timedelta(seconds=SETTINGS.lease_seconds * 2)
    ).values_list("pk", flat=True)
    for match_id in running:
        if store.holder(lease_key(match_id)) is None and store.holder(retry_key(match_id)) is None:
            match_record_infrastructure_failure(
                match_id=match_id, reason="worker lost: no worker holds the running match", retry=True
            )
            if _status(match_id) == MatchStatus.QUEUED:
                run_match.delay(match_id)
                requeued.append(match_id)
    waiting = Match.objects.filter(
        status=MatchStatus.QUEUED, queued_at__lt=now - timedelta(seconds=SETTINGS.queued_resend_seconds)
    ).values_list("pk", flat=True)
    for match_id in waiting:
        marker = leases.new_owner()
        if store.holder(lease_key(match_id)) is None and store.acquire(
            f"resent:{match_id}", marker, SETTINGS.queued_resend_seconds
        ):
            run_match.delay(match_id)
            resent.append(match_id)
    if requeued or resent:
        log.warning("stale matches: requeued %s (worker lost), sent again %s (waiting)", requeued, resent)
    return {"requeued": requeued, "resent": resent}
