"""Match reads: filtered lists and details with seats. Layer: selectors (read-only)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Prefetch, QuerySet

from ladder.matches.models import Match, Seat


def _with_seats(matches: QuerySet[Match]) -> QuerySet[Match]:
    return matches.select_related("ladder").prefetch_related(
        Prefetch("seats", queryset=Seat.objects.select_related("bot", "bot__owner").order_by("index"))
    )


def match_list(
    *,
    ladder_id: int | None = None,
    bot_id: int | None = None,
    status: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[Match]:
    """Matches, newest first; every filter optional. Dates filter on creation time."""
    matches = Match.objects.all()
    if ladder_id is not None:
        matches = matches.filter(ladder_id=ladder_id)
    if bot_id is not None:
        matches = matches.filter(seats__bot_id=bot_id)
    if status:
        matches = matches.filter(status=status)
    if since is not None:
        matches = matches.filter(created_at__gte=since)
    if until is not None:
        matches = matches.filter(created_at__lt=until)
    return _with_seats(matches.order_by("-id"))


def match_get(*, match_id: int) -> Match:
    try:
        return _with_seats(Match.objects.filter(pk=match_id)).get()
    except Match.DoesNotExist as exc:
        raise Match.DoesNotExist(f"no match with id {match_id}") from exc
