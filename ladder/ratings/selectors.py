"""Rating reads: leaderboards, a bot's current ratings and its rating history.

Layer: selectors (read-only). The leaderboard lists bots with at least one rated game that are not retired,
ranked by the rules of `ladder.ratings.standing` (conservative rating first; provisional marks; tiers).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Avg, Count, Q, QuerySet

from ladder.ladders.models import Ladder
from ladder.ratings.models import Rating, RatingLedger
from ladder.ratings.standing import place, wilson_interval

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
    "bot__is_house",
    "bot__owner__username",
)


@dataclass(frozen=True)
class Standing:
    """One leaderboard row: the bot's place (`ladder.ratings.standing`) and its numbers."""

    rank: int
    tier: int
    provisional: bool
    bot_id: int
    bot_name: str
    is_house: bool
    owner: str
    elo: float
    mu: float
    sigma: float
    conservative: float
    rating_low: float
    rating_high: float
    games: int
    wins: int
    win_rate: float | None
    win_rate_low: float | None
    win_rate_high: float | None
    last_played_at: datetime | None
    tied_with_previous: bool = False


def leaderboard_standings(*, ladder: Ladder, owner: str | None = None) -> list[Standing]:
    """The ladder's board in rank order: active bots with at least one rated game in the current season,
    ranked, marked and grouped by `ladder.ratings.standing` over the whole ladder (an owner filter keeps
    the ranks)."""
    season = Ladder.objects.filter(pk=ladder.pk).values_list("season", flat=True).first() or 1
    rows = list(
        Rating.objects.filter(ladder_id=ladder.pk, season=season, bot__active=True, games__gte=1)
        .order_by("id")
        .values(*LEADERBOARD_VALUES)
    )
    placed = place([(r["mu"], r["sigma"]) for r in rows], provisional_sigma=ladder.provisional_sigma)
    board = []
    previous_tier = None
    for p in placed:
        r = rows[p.index]
        games, wins = r["games"], r["wins"]
        interval = wilson_interval(wins, games)
        tied = previous_tier == p.tier
        previous_tier = p.tier
        if owner and r["bot__owner__username"] != owner:
            continue
        board.append(
            Standing(
                rank=p.rank,
                tier=p.tier,
                provisional=p.provisional,
                bot_id=r["bot_id"],
                bot_name=r["bot__name"],
                is_house=r["bot__is_house"],
                owner=r["bot__owner__username"],
                elo=r["elo"],
                mu=r["mu"],
                sigma=r["sigma"],
                conservative=p.conservative,
                rating_low=p.low,
                rating_high=p.high,
                games=games,
                wins=wins,
                win_rate=wins / games if games else None,
                win_rate_low=interval[0] if interval else None,
                win_rate_high=interval[1] if interval else None,
                last_played_at=r["last_played_at"],
                tied_with_previous=tied,
            )
        )
    return board


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


def bot_standings(*, bot_id: int) -> dict[int, Standing]:
    """The bot's leaderboard row on each ladder it is listed on, by ladder id."""
    ladders = Ladder.objects.filter(ratings__bot_id=bot_id, ratings__games__gte=1).distinct()
    found = {}
    for ladder in ladders:
        row = next((r for r in leaderboard_standings(ladder=ladder) if r.bot_id == bot_id), None)
        if row is not None:
            found[ladder.pk] = row
    return found


@dataclass(frozen=True)
class SeatStat:
    """How often a seat position wins on a ladder (seat 0 moves first)."""

    seat: int
    games: int
    wins: int
    win_rate: float | None
    win_rate_low: float | None
    win_rate_high: float | None
    mean_rank: float | None
    mean_score: float | None


def seat_statistics(*, ladder: Ladder) -> list[SeatStat]:
    """Per seat position, over every rated match of the ladder: games, first places with a 95% Wilson
    interval, mean rank and mean score. With no seat advantage each seat wins about 1/num_players."""
    rows = {
        r["seat"]: r
        for r in RatingLedger.objects.filter(ladder_id=ladder.pk)
        .values("seat")
        .annotate(
            games=Count("id"),
            wins=Count("id", filter=Q(rank=1)),
            mean_rank=Avg("rank"),
            mean_score=Avg("score"),
        )
        .order_by("seat")
    }
    stats = []
    for seat in range(ladder.num_players):
        r = rows.get(seat, {"games": 0, "wins": 0, "mean_rank": None, "mean_score": None})
        games, wins = int(r["games"] or 0), int(r["wins"] or 0)  # counts: never None, typed loosely
        interval = wilson_interval(wins, games)
        stats.append(
            SeatStat(
                seat=seat,
                games=games,
                wins=wins,
                win_rate=wins / games if games else None,
                win_rate_low=interval[0] if interval else None,
                win_rate_high=interval[1] if interval else None,
                mean_rank=r["mean_rank"],
                mean_score=r["mean_score"],
            )
        )
    return stats


@dataclass(frozen=True)
class HeadToHead:
    """One bot against one opponent on one ladder, over the rated matches they both sat in."""

    ladder_id: int
    opponent_id: int
    opponent_name: str
    games: int
    ahead: int  # matches the bot finished ahead of the opponent
    behind: int
    tied: int
    mean_rank_difference: float  # opponent's rank - the bot's rank: above 0, the bot finishes ahead
    score: float  # (ahead + tied / 2) / games
    score_low: float
    score_high: float


def head_to_head(
    *, bot_id: int, ladder_id: int | None = None, opponent_id: int | None = None
) -> list[HeadToHead]:
    """The bot's table against every opponent it met (most games first), per ladder; `score` carries a
    95% Wilson interval (ties count half)."""
    mine_rows = RatingLedger.objects.filter(bot_id=bot_id)
    if ladder_id is not None:
        mine_rows = mine_rows.filter(ladder_id=ladder_id)
    mine = dict(mine_rows.values_list("match_id", "rank"))
    others = RatingLedger.objects.filter(match_id__in=mine_rows.values("match_id")).exclude(bot_id=bot_id)
    if opponent_id is not None:
        others = others.filter(bot_id=opponent_id)
    tally: dict[tuple[int, int], list[Any]] = {}
    for match_id, ladder, opponent, name, rank in others.values_list(
        "match_id", "ladder_id", "bot_id", "bot__name", "rank"
    ):
        own = mine[match_id]
        entry = tally.setdefault((ladder, opponent), [name, 0, 0, 0, 0, 0])
        entry[1] += 1
        entry[2] += own < rank
        entry[3] += own > rank
        entry[4] += own == rank
        entry[5] += rank - own
    table = []
    for (ladder, opponent), (name, games, ahead, behind, tied, difference) in tally.items():
        points = ahead + tied / 2
        low, high = wilson_interval(points, games) or (0.0, 1.0)
        table.append(
            HeadToHead(
                ladder_id=ladder,
                opponent_id=opponent,
                opponent_name=name,
                games=games,
                ahead=ahead,
                behind=behind,
                tied=tied,
                mean_rank_difference=difference / games,
                score=points / games,
                score_low=low,
                score_high=high,
            )
        )
    table.sort(key=lambda h: (h.ladder_id, -h.games, h.opponent_name.lower(), h.opponent_id))
    return table
