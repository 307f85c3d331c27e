"""Rating reads: leaderboards, a bot's current ratings and its rating history.

Layer: selectors (read-only). The leaderboard lists bots with at least one rated game that are not retired,
best Elo first (ties: the earlier rating row first).
"""

from __future__ import annotations

from django.db.models import QuerySet

from ladder.ratings.models import Rating, RatingLedger

LEADERBOARD_FIELDS = (
    "id",
    "ladder_id",
    "elo",
    "mu",
    "sigma",
    "games",
    "wins",
    "last_played_at",
    "bot__id",
    "bot__name",
    "bot__is_house",
    "bot__active",
    "bot__owner__id",
    "bot__owner__username",
)


def leaderboard_list(*, ladder_id: int, owner: str | None = None, min_games: int = 1) -> QuerySet[Rating]:
    ratings = (
        Rating.objects.filter(ladder_id=ladder_id, bot__active=True, games__gte=min_games)
        .select_related("bot", "bot__owner")
        .only(*LEADERBOARD_FIELDS)
        .order_by("-elo", "id")
    )
    if owner:
        ratings = ratings.filter(bot__owner__username=owner)
    return ratings


LEADERBOARD_VALUES = (
    "id",
    "elo",
    "mu",
    "sigma",
    "games",
    "wins",
    "last_played_at",
    "bot_id",
    "bot__name",
    "bot__owner__username",
)


def leaderboard_values(*, ladder_id: int, owner: str | None = None, min_games: int = 1) -> QuerySet:
    """The leaderboard as plain dicts (the API's hot path: no model instances)."""
    rows = Rating.objects.filter(ladder_id=ladder_id, bot__active=True, games__gte=min_games)
    if owner:
        rows = rows.filter(bot__owner__username=owner)
    return rows.order_by("-elo", "id").values(*LEADERBOARD_VALUES)


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
