"""The bots' debug texts (`Decision.debug`): stored beside a finished match's replay, read by their owners.

Layer: services and selectors of one small store (`DecisionDebug`), keyword-only. Who may read: a seat's
texts are its bot's owner's, and staff's; nobody else's, ever (not an opponent, not a spectator, not after
the match). The match record stored as the replay never holds them (`MatchRecord.to_json` leaves them out),
so frames, the live view and the public record cannot show them; only `decision_debug_page` serves them,
after checking the reader. The texts are never logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine_service.referee import MatchRecord
from engine_service.referee.debug_text import clean_debug
from ladder.matches.models import Match, Seat
from ladder.replays.models import DecisionDebug

MAX_DEBUG_PER_REQUEST = 500


class DebugDenied(PermissionError):
    """The reader may not see these texts; the message says why (HTTP 403)."""


class DebugNotFound(LookupError):
    """No such match or seat (HTTP 404); the message says which."""


def decision_debug_store(*, match_id: int, record: MatchRecord) -> int:
    """Keep a finished match's debug texts by seat and step (the deciding seat from the record's action log);
    returns how many. Idempotent: a step already kept is left as it is."""
    rows = [
        DecisionDebug(match_id=match_id, seat=record.actions[step][0], step=step, text=clean_debug(text))
        for step, text in sorted(record.debug.items())
        if 0 <= step < len(record.actions) and text
    ]
    DecisionDebug.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


@dataclass(frozen=True)
class DebugPage:
    """One page of a match's debug texts for the seats the reader may see."""

    match_id: int
    seats: list[dict[str, Any]]  # [{seat, bot: {id, name}, entries: [{step, text}]}] for readable seats
    next_start: int | None  # the `start` of the next page, None when this is the last


def _readable_seats(match: Match, user: Any, seat: int | None) -> list[Seat]:
    seats = list(match.seats.select_related("bot").order_by("index"))
    if seat is not None:
        seats = [s for s in seats if s.index == seat]
        if not seats:
            raise DebugNotFound(f"match {match.pk} has no seat {seat}")
    if user is None or not user.is_authenticated:
        raise DebugDenied("a bot's debug texts are its owner's alone: sign in as the owner of a seat's bot")
    if user.is_staff:
        return seats
    own = [s for s in seats if s.bot.owner_id == user.pk]
    if not own and seat is not None:
        raise DebugDenied(
            f"seat {seat} of match {match.pk} is played by {seats[0].bot.name}, not a bot of yours: a bot's "
            "debug texts are its owner's alone"
        )
    if not own:
        raise DebugDenied(f"no seat of match {match.pk} is played by a bot of yours")
    return own


def decision_debug_page(
    *, match_id: int, user: Any, seat: int | None = None, start: int = 0, count: int = MAX_DEBUG_PER_REQUEST
) -> DebugPage:
    """The debug texts from step `start` on (at most `count`) of the seats of `match_id` that `user` may read:
    the seat asked for, else every seat of theirs (staff: every seat). `DebugNotFound`, `DebugDenied`."""
    match = Match.objects.filter(pk=match_id).first()
    if match is None:
        raise DebugNotFound(f"no match with id {match_id}")
    seats = _readable_seats(match, user, seat)
    count = max(1, min(count, MAX_DEBUG_PER_REQUEST))
    rows = list(
        DecisionDebug.objects.filter(
            match_id=match_id, seat__in=[s.index for s in seats], step__gte=start
        ).order_by("step", "seat")[: count + 1]
    )
    more = rows[count].step if len(rows) > count else None
    by_seat: dict[int, list[dict[str, Any]]] = {s.index: [] for s in seats}
    for row in rows[:count]:
        by_seat[row.seat].append({"step": row.step, "text": row.text})
    return DebugPage(
        match_id=match_id,
        seats=[
            {"seat": s.index, "bot": {"id": s.bot_id, "name": s.bot.name}, "entries": by_seat[s.index]}
            for s in seats
        ],
        next_start=more,
    )
