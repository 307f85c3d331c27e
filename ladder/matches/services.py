"""Match writes: create (queued), mark running, record a result exactly once, record infrastructure failures.

Layer: services (keyword-only, typed). The Celery workers call these; each is one transaction that locks
the match row first. `match_record_result` writes seats, replay, ledger rows and ratings together, and does
nothing (returns False) for a match already DONE, so a redelivered task cannot rate twice. A record's result
is read once, typed and checked (`referee.MatchResult.of`), before any lock; the writes use its fields. Bad
input raises `ValidationError` naming the problem and changes nothing. Must not run matches or talk to bots.
"""

from __future__ import annotations

import hashlib
import logging
import zlib

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from engine_service.referee import MatchRecord, MatchResult, ReplayMismatch, ResultError, verify
from ladder.bots.models import Bot
from ladder.ladders.models import Ladder
from ladder.matches.incidents import SERVER_INCIDENT, incident_line
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.matches.seeds import SEED_BITS, match_seed_new
from ladder.ratings.services import SeatOutcome, rating_rows_ensure, ratings_apply_match
from ladder.replays.debug import decision_debug_store
from ladder.replays.models import LiveProgress, Replay

logger = logging.getLogger(__name__)

RETRYABLE = (MatchStatus.QUEUED, MatchStatus.RUNNING)


def match_create(*, ladder_id: int, bot_ids: list[int], seed: int | None = None) -> Match:
    """A QUEUED match on `ladder_id` with one seat per bot, in the given order (seat 0 first). Without a
    `seed` (the game seed) one is drawn with `secrets`; a duplicate set passes the same seed to each match."""
    try:
        ladder = Ladder.objects.get(pk=ladder_id)
    except Ladder.DoesNotExist as exc:
        raise ValidationError({"ladder": [f"no ladder with id {ladder_id}"]}) from exc
    if not ladder.active:
        raise ValidationError({"ladder": [f"ladder {ladder.slug} is closed"]})
    if not isinstance(bot_ids, (list, tuple)) or any(
        isinstance(b, bool) or not isinstance(b, int) for b in bot_ids
    ):
        raise ValidationError({"bot_ids": ["bot_ids must be a list of bot ids"]})
    if len(bot_ids) != ladder.num_players:
        raise ValidationError(
            {"bot_ids": [f"{ladder.slug} seats {ladder.num_players} bots, got {len(bot_ids)}"]}
        )
    if len(set(bot_ids)) != len(bot_ids):
        raise ValidationError({"bot_ids": ["a bot can take only one seat in a match"]})
    if seed is None:
        seed = match_seed_new()
    elif isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**SEED_BITS:
        raise ValidationError({"seed": [f"seed must be a whole number 0 to 2**{SEED_BITS}-1"]})
    bots = {b.pk: b for b in Bot.objects.filter(pk__in=bot_ids)}
    for bot_id in bot_ids:
        bot = bots.get(bot_id)
        if bot is None:
            raise ValidationError({"bot_ids": [f"no bot with id {bot_id}"]})
        if not bot.active:
            raise ValidationError({"bot_ids": [f"{bot.name} is retired"]})
        if bot.is_house and not ladder.house_bots_allowed:
            raise ValidationError({"bot_ids": [f"{ladder.slug} does not seat house bots ({bot.name})"]})
        if not bot.is_house and ladder.game_id not in bot.games:
            raise ValidationError({"bot_ids": [f"{bot.name} does not play {ladder.game_id}"]})
    now = timezone.now()
    with transaction.atomic():
        match = Match.objects.create(ladder=ladder, seed=seed, status=MatchStatus.QUEUED, queued_at=now)
        Seat.objects.bulk_create([Seat(match=match, index=i, bot_id=b) for i, b in enumerate(bot_ids)])
    rating_rows_ensure(ladder=ladder, bot_ids=bot_ids)
    return match


def _locked_match(match_id: int) -> Match:
    try:
        return Match.objects.select_for_update().select_related("ladder").get(pk=match_id)
    except Match.DoesNotExist as exc:
        raise ValidationError({"match": [f"no match with id {match_id}"]}) from exc


def match_mark_running(*, match_id: int) -> bool:
    """Start (or restart after a lost worker) a QUEUED or RUNNING match: True, attempts + 1. False, changing
    nothing, for a match that is DONE, ERROR, CANCELLED or NEW; a match past its attempt limit goes ERROR."""
    with transaction.atomic():
        match = _locked_match(match_id)
        if match.status not in RETRYABLE:
            return False
        if match.attempts >= settings.LADDER_MATCH_MAX_ATTEMPTS:
            match.status = MatchStatus.ERROR
            match.error = (match.error + "\n" if match.error else "") + (
                f"gave up after {match.attempts} attempts"
            )
            match.finished_at = timezone.now()
            match.save(update_fields=["status", "error", "finished_at"])
            return False
        match.status = MatchStatus.RUNNING
        match.attempts += 1
        match.started_at = timezone.now()
        match.save(update_fields=["status", "attempts", "started_at"])
        return True


def _check_record(match: Match, seats: list[Seat], record: MatchRecord) -> MatchResult:
    """The record's typed result after checking it belongs to this match; ValidationError otherwise."""
    ladder = match.ladder
    problems = []
    if record.game_id != ladder.game_id:
        problems.append(f"game {record.game_id!r} is not the ladder's {ladder.game_id!r}")
    if record.num_players != ladder.num_players or len(record.seats) != len(seats):
        problems.append(f"{record.num_players} players, the match has {len(seats)} seats")
    if record.seed != match.seed:
        problems.append(f"seed {record.seed} is not the match's seed {match.seed}")
    if record.options != ladder.options:
        problems.append(f"options {record.options} are not the ladder's {ladder.options}")
    if problems:
        raise ValidationError(f"record does not fit match {match.pk}: " + "; ".join(problems))
    try:
        result = MatchResult.of(record)
    except ResultError as exc:
        raise ValidationError(f"record of match {match.pk} has an unusable result: {exc}") from exc
    if settings.LADDER_VERIFY_RECORDS:
        try:
            verify(record)
        except (ReplayMismatch, ValueError) as exc:
            raise ValidationError(f"record of match {match.pk} does not replay: {exc}") from exc
    return result


def match_record_result(*, match_id: int, record: MatchRecord) -> bool:
    """Finish a match with the referee's record, exactly once: seats' scores, ranks and faults, the replay,
    ledger rows and ratings, in one transaction. False (and no change) when the match is already DONE, or
    was cancelled or gave up meanwhile."""
    if not isinstance(record, MatchRecord):
        raise ValidationError("a result is the referee's MatchRecord")
    # Check (and re-simulate) the record before taking any lock: the match's ladder, seed and seats never
    # change, only its status, which is checked again under the lock.
    try:
        unlocked = Match.objects.select_related("ladder").get(pk=match_id)
    except Match.DoesNotExist as exc:
        raise ValidationError({"match": [f"no match with id {match_id}"]}) from exc
    if unlocked.status not in RETRYABLE:
        return False
    result = _check_record(unlocked, list(unlocked.seats.order_by("index")), record)
    with transaction.atomic():
        match = _locked_match(match_id)
        if match.status not in RETRYABLE:
            return False
        seats = list(match.seats.order_by("index"))
        now = timezone.now()
        for seat in seats:
            outcome = result.seats[seat.index]
            seat.score = outcome.score
            seat.rank = outcome.rank
            seat.forfeited = outcome.forfeited
            seat.end_reason = outcome.end_reason[:20]
            seat.faults = outcome.fault_log()
        Seat.objects.bulk_update(seats, ["score", "rank", "forfeited", "faults", "end_reason"])
        text = record.dumps()
        Replay.objects.create(
            match=match,
            format=record.to_json()["format"],
            data=zlib.compress(text.encode(), 6),
            sha256=hashlib.sha256(text.encode()).hexdigest(),
            steps=record.steps,
            final_hash=record.hashes.get(record.steps, ""),
            raw_size=len(text.encode()),
        )
        decision_debug_store(match_id=match.pk, record=record)  # beside the replay, for the bots' owners
        LiveProgress.objects.filter(match=match).delete()
        if match.rated:  # a practice match changes no rating
            ratings_apply_match(
                ladder=match.ladder,
                match_id=match.pk,
                outcomes=[
                    SeatOutcome(
                        seat=s.index,
                        bot_id=s.bot_id,
                        rank=result.seats[s.index].rank,
                        score=result.seats[s.index].score,
                        version=record.seats[s.index].version,
                    )
                    for s in seats
                ],
                finished_at=now,
            )
        match.status = MatchStatus.DONE
        match.finished_at = now
        match.steps = record.steps
        match.end_reason = result.reason[:40]  # forfeit, resigned, disconnect, else the game's reason
        if match.started_at is None:
            match.started_at = now
        match.save(update_fields=["status", "finished_at", "steps", "end_reason", "started_at"])
    return True


def match_record_infrastructure_failure(*, match_id: int, reason: str, retry: bool) -> None:
    """An infrastructure fault (lost worker, gateway restart, database hiccup): never rated. With `retry`
    and attempts left the match goes back to QUEUED, otherwise to ERROR. A finished match is left alone."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValidationError("an infrastructure failure needs a reason")
    with transaction.atomic():
        match = _locked_match(match_id)
        if match.status not in (*RETRYABLE, MatchStatus.NEW):
            return
        line = incident_line(attempt=match.attempts, reason=reason)[:2000]
        match.error = f"{match.error}\n{line}" if match.error else line
        if retry and match.attempts < settings.LADDER_MATCH_MAX_ATTEMPTS:
            match.status = MatchStatus.QUEUED
            match.queued_at = timezone.now()
            match.save(update_fields=["status", "error", "queued_at"])
        else:
            match.status = MatchStatus.ERROR
            match.end_reason = SERVER_INCIDENT
            match.finished_at = timezone.now()
            match.save(update_fields=["status", "error", "end_reason", "finished_at"])
    logger.warning("match %s infrastructure failure (retry=%s): %s", match_id, retry, reason)


def match_cancel(
    *, match_id: int, reason: str = "cancelled by an operator", only_if_not_started: bool = False
) -> bool:
    """Cancel a match that has not finished (with `only_if_not_started`, one still NEW or QUEUED); True when
    it was cancelled."""
    cancellable = (
        (MatchStatus.NEW, MatchStatus.QUEUED) if only_if_not_started else (*RETRYABLE, MatchStatus.NEW)
    )
    with transaction.atomic():
        match = _locked_match(match_id)
        if match.status not in cancellable:
            return False
        match.status = MatchStatus.CANCELLED
        match.error = f"{match.error}\n{reason}" if match.error else reason
        match.finished_at = timezone.now()
        match.save(update_fields=["status", "error", "finished_at"])
        return True
