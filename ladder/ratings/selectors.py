"""Rating reads: leaderboards, a bot's current ratings and its rating history.

Layer: selectors (read-only). The leaderboard lists bots with at least one rated game that are not retired,
best Elo first (ties: the earlier rating row first).
"""

from __future__ import annotations

from django.db.models import QuerySet

from ladder.ratings.models import Rating, RatingLedger


def leaderboard_list(*, ladder_id: int, owner: str | None = None, min_games: int = 1) -> QuerySet[Rating]:
    ratings = (
        Rating.objects.filter(ladder_id=ladder_id, bot__active=True, games__gte=min_games)
        .select_related("bot", "bot__owner")
        .order_by("-elo", "id")
    )
    if owner:
        ratings = ratings.filter(bot__owner__username=owner)
    return ratings


def leaderboard_rank(*, ladder_id: int, elo: float, min_games: int = 1) -> int:
    """1 + the number of listed bots rated strictly higher (tied bots share a rank)."""
    return (
        1
        + Rating.objects.filter(
            ladder_id=ladder_id, bot__active=True, games__gte=min_games, elo__gt=elo
        ).count()
    )


def bot_ratings(*, bot_id: int) -> QuerySet[Rating]:
    return (
        Rating.objects.filter(bot_id=bot_id)
        .select_related("ladder")
        .order_by("ladder__game_id", "ladder__num_players")
    )


def rating_history(
    *, bot_id: int, ladder_id: int | None = None, limit: int | None = None
) -> list[RatingLedger]:
    """The bot's ledger rows, oldest first (the last `limit` when given)."""
    rows = RatingLedger.objects.filter(bot_id=bot_id).select_related("ladder").order_by("-id")
    if ladder_id is not None:
        rows = rows.filter(ladder_id=ladder_id)
    if limit is not None:
        rows = rows[:limit]
    return list(reversed(list(rows)))
