"""Match reads: filtered lists and details with seats, and whether a match's secrets may be shown.

Hidden information: a match's seed gives every hand and the deck order, so it (and the replay) is shown
only once the match is final (DONE, ERROR or CANCELLED) and no unfinished match shares the seed (the other
matches of a duplicate set). Layer: selectors (read-only).
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from ladder.matches.models import Match, MatchStatus, Seat

FINAL = (MatchStatus.DONE, MatchStatus.ERROR, MatchStatus.CANCELLED)


def _seed_in_play() -> Exists:
    """Another match with the same seed is not final yet (a duplicate set still being played)."""
    return Exists(
        Match.objects.filter(seed=OuterRef("seed")).exclude(pk=OuterRef("pk")).exclude(status__in=FINAL)
    )


def match_secrets_revealed(*, match: Match) -> bool:
    """True when the seed and the replay of `match` may be shown to anyone (see the module docstring)."""
    if match.status not in FINAL:
        return False
    in_play = getattr(match, "seed_in_play", None)
    if in_play is None:
        in_play = Match.objects.filter(pk=match.pk).filter(_seed_in_play()).exists()
    return not in_play


def match_live_watchable(*, match: Match) -> bool:
    """True when a spectator may watch `match` as it is played: it is RUNNING and no other unfinished
    match shares its seed (watching one match of a duplicate set would show the dice and cards the others
    are about to meet)."""
    if match.status != MatchStatus.RUNNING:
        return False
    return not Match.objects.filter(pk=match.pk).filter(_seed_in_play()).exists()


def _with_seats(matches: QuerySet[Match]) -> QuerySet[Match]:
    return (
        matches.annotate(seed_in_play=_seed_in_play())
        .select_related("ladder")
        .prefetch_related(
            Prefetch("seats", queryset=Seat.objects.select_related("bot", "bot__owner").order_by("index"))
        )
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
