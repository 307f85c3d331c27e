"""Ladder and game-metadata reads. Layer: selectors (read-only). Game data comes from the engine's registry."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from engine_service.games import InvalidOptions, get_game, list_games
from ladder.ladders.models import Ladder


def game_list() -> list[dict[str, Any]]:
    return [spec.describe() for spec in list_games()]


def game_get(*, game_id: str) -> dict[str, Any]:
    """A game's description; `LookupError` naming the known games when unknown."""
    try:
        return get_game(game_id).describe()
    except InvalidOptions as exc:
        raise LookupError(str(exc)) from exc


def game_board(*, game_id: str) -> dict[str, Any]:
    """The static board a replay viewer draws, from the game's spec; `LookupError` when it has none."""
    game_get(game_id=game_id)
    board = _board(game_id)
    if board is None:
        raise LookupError(f"{game_id} has no board data")
    return board


def game_reference(*, game_id: str) -> dict[str, Any]:
    """A game's reference for bot authors (observation and action schemas, id grammar); `LookupError`
    when the game is unknown or has none."""
    game_get(game_id=game_id)
    reference = get_game(game_id).reference()
    if reference is None:
        raise LookupError(f"{game_id} has no reference yet")
    return reference


def game_has_board(*, game_id: str) -> bool:
    try:
        return _board(game_id) is not None
    except InvalidOptions:
        return False


@lru_cache(maxsize=16)
def _board(game_id: str) -> dict[str, Any] | None:
    return get_game(game_id).board()


def ladder_list(*, game_id: str | None = None, include_inactive: bool = False) -> QuerySet[Ladder]:
    ladders = Ladder.objects.all()
    if not include_inactive:
        ladders = ladders.filter(active=True)
    if game_id:
        ladders = ladders.filter(game_id=game_id)
    return _with_rated_bots(ladders).order_by(
        "game_id", "num_players", "slug"
    )  # an aggregate drops Meta.ordering


def _with_rated_bots(ladders: QuerySet[Ladder]) -> QuerySet[Ladder]:
    """`rated_bots`: active bots with at least one rated game on the ladder in its current season, which
    is the length of its maintained board (`ladder.ratings.board`: places 1..N), so one index lookup per
    ladder whatever its size (a subquery, so further annotations never multiply it)."""
    from ladder.ratings.models import LISTED, Rating

    # The last place, by ORDER BY ... LIMIT 1: a backward scan of the partial index (a MAX() grouped by
    # ladder reads every listed row of the ladder instead).
    rows = Rating.objects.filter(LISTED, ladder=OuterRef("pk")).order_by("-position")
    last = rows.values("position")[:1]
    return ladders.annotate(rated_bots=Coalesce(Subquery(last, output_field=IntegerField()), 0))


def _count(rows: QuerySet[Any]) -> Coalesce:
    """COUNT(*) of `rows` (correlated to the outer ladder) as a subquery expression."""
    counted = rows.order_by().values("ladder").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def ladder_list_with_counts() -> QuerySet[Ladder]:
    """Active ladders with `rated_bots`, `done_matches` (finished matches), `running_matches` and
    `waiting_matches` (queued: waiting for a worker, or for room in the search pools), each counted on its
    own."""
    from ladder.matches.models import Match, MatchStatus

    def status(value: str) -> Coalesce:
        return _count(Match.objects.filter(ladder=OuterRef("pk"), status=value))

    return ladder_list().annotate(
        done_matches=status(MatchStatus.DONE),
        running_matches=status(MatchStatus.RUNNING),
        waiting_matches=status(MatchStatus.QUEUED),
    )


def ladder_get(*, ladder_id: int) -> Ladder:
    try:
        return _with_rated_bots(Ladder.objects.filter(pk=ladder_id)).get()
    except Ladder.DoesNotExist as exc:
        raise Ladder.DoesNotExist(f"no ladder with id {ladder_id}") from exc
