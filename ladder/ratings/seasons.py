"""Ladder seasons: closing a season freezes its final standings and starts the next one.

Layer: services and selectors (keyword-only, typed). `season_close` locks the ladder row (which every
match result of the ladder also locks, through its match row's `select_related`), so a result is rated
wholly in the season it reads, and the frozen standings are exactly the leaderboard of the results
committed before the close. Ratings are not rewritten at the close: a bot's first game of the new season
starts from its carried-over rating (`elo.season_carry_over`: Elo and mu kept, sigma widened; games and
wins count from zero), each ledger row records its season, and `ratings_recompute` replays the carry-over.
The close empties the ladder's maintained board (`ladder.ratings.board`): a bot is listed again at its first
game of the new season.
"""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from ladder.ladders.models import Ladder
from ladder.ratings.board import board_clear
from ladder.ratings.cache import leaderboard_cache_invalidate
from ladder.ratings.models import Season, SeasonStanding
from ladder.ratings.selectors import leaderboard_standings


@transaction.atomic
def season_close(*, ladder_id: int, name: str = "") -> Season:
    """Freeze the current season's leaderboard as the season's standings and open the next season."""
    ladder = Ladder.objects.select_for_update().filter(pk=ladder_id).first()
    if ladder is None:
        raise ValidationError({"ladder": [f"no ladder with id {ladder_id}"]})
    if not isinstance(name, str) or len(name) > 120:
        raise ValidationError({"name": ["the name is text of at most 120 characters"]})
    previous = Season.objects.filter(ladder=ladder).order_by("-number").first()
    now = timezone.now()
    season = Season.objects.create(
        ladder=ladder,
        number=ladder.season,
        name=name.strip(),
        started_at=previous.closed_at if previous else ladder.created_at,
        closed_at=now,
    )
    SeasonStanding.objects.bulk_create(
        [
            SeasonStanding(
                season=season,
                bot_id=row.bot_id,
                position=position,
                rank=row.rank,
                tier=row.tier,
                provisional=row.provisional,
                elo=row.elo,
                mu=row.mu,
                sigma=row.sigma,
                conservative=row.conservative,
                games=row.games,
                wins=row.wins,
            )
            for position, row in enumerate(leaderboard_standings(ladder=ladder), start=1)
        ]
    )
    board_clear(ladder_id=ladder.pk)
    ladder.season += 1
    ladder.save(update_fields=["season"])
    transaction.on_commit(lambda: leaderboard_cache_invalidate(ladder_id=ladder.pk))
    return season


def season_list(*, ladder_id: int) -> QuerySet[Season]:
    """The ladder's closed seasons, newest first."""
    return Season.objects.filter(ladder_id=ladder_id).order_by("-number")


def season_get(*, ladder_id: int, number: int) -> Season:
    season = Season.objects.select_related("ladder").filter(ladder_id=ladder_id, number=number).first()
    if season is None:
        raise ObjectDoesNotExist(f"ladder {ladder_id} has no closed season {number}")
    return season


def season_standings(*, season: Season) -> QuerySet[SeasonStanding]:
    return season.standings.select_related("bot", "bot__owner").order_by("position")
