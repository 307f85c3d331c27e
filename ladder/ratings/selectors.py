"""Rating reads: leaderboards, a bot's current ratings and its rating history.

Layer: selectors (read-only). The leaderboard lists bots with at least one rated game in the ladder's
current season that are not retired, ranked by the rules of `ladder.ratings.standing` (conservative rating
first; provisional marks; tiers). It is read from the board that `ladder.ratings.board` maintains on the
rating rows: a page is one query over the rows at its positions, each row's rank and tier an indexed
lookup (the first row with its conservative rating; the tier leaders above it), so a page costs the same on
a ladder of 10 bots or 100,000.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, overload

from django.db.models import Count, IntegerField, Max, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from ladder.ladders.models import Ladder
from ladder.ratings.elo import conservative
from ladder.ratings.models import LISTED, Rating, RatingLedger, SeatTally
from ladder.ratings.standing import is_provisional, rating_interval, wilson_interval

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
    "position",
    "leads_tier",
    "ladder__provisional_sigma",
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


@dataclass(frozen=True)
class BoardPage:
    """Rows of a board in rank order and how many rows the whole (owner-filtered) board has."""

    rows: list[Standing]
    total: int


def _placed(rows: QuerySet[Rating]) -> QuerySet[Rating]:
    """Listed rows with their rank (the position of the first row sharing their conservative rating) and
    tier (the number of tier leaders at or above them) on their own ladder's board."""
    first_equal = (
        Rating.objects.filter(LISTED, ladder_id=OuterRef("ladder_id"), conservative=OuterRef("conservative"))
        .order_by("id")
        .values("position")[:1]
    )
    leaders = (
        Rating.objects.filter(
            ladder_id=OuterRef("ladder_id"), leads_tier=True, position__lte=OuterRef("position")
        )
        .order_by()
        .values("ladder_id")
        .annotate(count=Count("pk"))
        .values("count")
    )
    return rows.filter(LISTED).annotate(
        board_rank=Subquery(first_equal, output_field=IntegerField()),
        board_tier=Coalesce(Subquery(leaders, output_field=IntegerField()), 0),
    )


def _standing(r: dict[str, Any], provisional_sigma: float) -> Standing:
    games, wins = r["games"], r["wins"]
    interval = wilson_interval(wins, games)
    low, high = rating_interval(r["mu"], r["sigma"])
    return Standing(
        rank=r["board_rank"],
        tier=r["board_tier"],
        provisional=is_provisional(r["sigma"], provisional_sigma),
        bot_id=r["bot_id"],
        bot_name=r["bot__name"],
        is_house=r["bot__is_house"],
        owner=r["bot__owner__username"],
        elo=r["elo"],
        mu=r["mu"],
        sigma=r["sigma"],
        conservative=conservative(r["mu"], r["sigma"]),
        rating_low=low,
        rating_high=high,
        games=games,
        wins=wins,
        win_rate=wins / games if games else None,
        win_rate_low=interval[0] if interval else None,
        win_rate_high=interval[1] if interval else None,
        last_played_at=r["last_played_at"],
        tied_with_previous=not r["leads_tier"],
    )


def _board_rows(
    ladder: Ladder, rows: QuerySet[Rating], start: int = 0, limit: int | None = None
) -> list[Standing]:
    values = _placed(rows).values(*LEADERBOARD_VALUES, "board_rank", "board_tier")
    window = values[start : None if limit is None else start + limit]
    return [_standing(r, ladder.provisional_sigma) for r in window]


def leaderboard_page(
    *, ladder: Ladder, start: int = 0, limit: int | None = None, owner: str | None = None
) -> BoardPage:
    """`limit` rows of the ladder's board from place `start + 1` on (all of them without a limit), ranked,
    marked and grouped over the whole ladder; an owner filter keeps the ranks and counts its own rows."""
    start = max(0, start)
    rows = Rating.objects.filter(LISTED, ladder_id=ladder.pk).order_by("position")
    if owner:
        mine = rows.filter(bot__owner__username=owner)
        return BoardPage(rows=_board_rows(ladder, mine, start, limit), total=mine.count())
    total = rows.aggregate(last=Max("position"))["last"] or 0  # positions are 1..N: one index lookup
    window = rows.filter(position__gt=start)
    if limit is not None:
        window = window.filter(position__lte=start + limit)
    return BoardPage(rows=_board_rows(ladder, window), total=total)


def leaderboard_standings(*, ladder: Ladder, owner: str | None = None) -> list[Standing]:
    """The ladder's whole board in rank order (an owner filter keeps the ranks)."""
    return leaderboard_page(ladder=ladder, owner=owner).rows


class LeaderboardPages:
    """The ladder's board as Django's `Paginator` reads a list: its length, then one slice (one page
    query); nothing is loaded before a slice is asked for."""

    def __init__(self, *, ladder: Ladder) -> None:
        self.ladder = ladder
        self._total: int | None = None

    def __len__(self) -> int:
        if self._total is None:
            self._total = leaderboard_page(ladder=self.ladder, limit=0).total
        return self._total

    @overload
    def __getitem__(self, index: int) -> Standing: ...
    @overload
    def __getitem__(self, index: slice) -> list[Standing]: ...
    def __getitem__(self, index: int | slice) -> Standing | list[Standing]:
        if isinstance(index, int):
            rows = self[index : index + 1] if index >= 0 else []
            if not rows:
                raise IndexError(f"no place {index + 1} on the board")
            return rows[0]
        if index.step not in (None, 1) or (index.start or 0) < 0 or (index.stop or 0) < 0:
            raise TypeError("a leaderboard is read a page at a time (a forward slice)")
        start = index.start or 0
        limit = None if index.stop is None else max(0, index.stop - start)
        return leaderboard_page(ladder=self.ladder, start=start, limit=limit).rows

    def __iter__(self) -> Iterator[Standing]:
        return iter(self[0:])


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
    rows = Rating.objects.filter(bot_id=bot_id).order_by("ladder_id")
    values = _placed(rows).values("ladder_id", *LEADERBOARD_VALUES, "board_rank", "board_tier")
    return {r["ladder_id"]: _standing(r, r["ladder__provisional_sigma"]) for r in values}


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
    interval, mean rank and mean score. With no seat advantage each seat wins about 1/num_players. Read
    from the maintained seat tally (`ladder.ratings.seats`): one row per seat, whatever the history."""
    tallies = {t.seat: t for t in SeatTally.objects.filter(ladder_id=ladder.pk)}
    stats = []
    for seat in range(ladder.num_players):
        t = tallies.get(seat) or SeatTally(ladder_id=ladder.pk, seat=seat)
        interval = wilson_interval(t.wins, t.games)
        stats.append(
            SeatStat(
                seat=seat,
                games=t.games,
                wins=t.wins,
                win_rate=t.wins / t.games if t.games else None,
                win_rate_low=interval[0] if interval else None,
                win_rate_high=interval[1] if interval else None,
                mean_rank=t.rank_sum / t.games if t.games else None,
                mean_score=t.score_sum / t.scored if t.scored else None,
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
