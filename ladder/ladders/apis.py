"""Game, ladder and leaderboard endpoints. Layer: API (thin).

The leaderboard is ranked by `ladder.ratings.standing` (its rules are the endpoint's schema description), read
a page at a time from the maintained board (`ratings.selectors.leaderboard_page`) and cursor-paginated; its first page is cached per ladder and page size (never per
arbitrary query: a cursor or an owner filter is served uncached); the cache key carries the ladder's
leaderboard version, which changes when a rating change commits, so a page is never staler than that.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import permissions, serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param
from rest_framework.views import APIView

from ladder.core.api import LeaderboardCursor, parse_query
from ladder.core.schema import game_ids
from ladder.ladders import selectors
from ladder.ladders.models import Ladder
from ladder.ratings.cache import leaderboard_cache_key
from ladder.ratings.selectors import BoardPage, Standing, leaderboard_page
from ladder.ratings.standing import RANKING_RULES


class GameSerializer(serializers.Serializer[Any]):
    game_id = serializers.CharField()
    name = serializers.CharField()
    min_players = serializers.IntegerField()
    max_players = serializers.IntegerField()
    options = serializers.ListField(child=serializers.DictField())
    summary = serializers.CharField()
    turn_cap = serializers.CharField()


class GameListApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses=GameSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(selectors.game_list())


GAME_ID = OpenApiParameter("game_id", str, OpenApiParameter.PATH, enum=game_ids())


class GameDetailApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(parameters=[GAME_ID], responses=GameSerializer)
    def get(self, request: Request, game_id: str) -> Response:
        try:
            return Response(selectors.game_get(game_id=game_id))
        except LookupError as exc:
            raise NotFound(str(exc)) from exc


class GameBoardApi(APIView):
    """The static board a replay viewer draws, from the game's own data (Expedition: the 29-space track
    with requirements, chests and scoring spaces; the other games: their maps, routes and action spaces).
    Its shape is the game's (`GameSpec.board`)."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(parameters=[GAME_ID], responses=dict)
    def get(self, request: Request, game_id: str) -> Response:
        try:
            return Response(selectors.game_board(game_id=game_id))
        except LookupError as exc:
            raise NotFound(str(exc)) from exc


class GameSchemaApi(APIView):
    """A game's reference for bot authors: the JSON Schema of its observation (every field described), and
    per action kind a description, the id's pattern, grammar and examples, and the JSON Schema of its
    `details`; `first_action` says which legal action is always safe. Readable at /games/<id>/."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(parameters=[GAME_ID], responses=dict)
    def get(self, request: Request, game_id: str) -> Response:
        try:
            return Response(selectors.game_reference(game_id=game_id))
        except LookupError as exc:
            raise NotFound(str(exc)) from exc


class LadderOutputSerializer(serializers.ModelSerializer[Ladder]):
    rated_bots = serializers.IntegerField(
        read_only=True, help_text="active bots with a rated game here in the current season"
    )

    class Meta:
        model = Ladder
        fields = [
            "id",
            "slug",
            "name",
            "game_id",
            "num_players",
            "options",
            "description",
            "elo_k",
            "elo_scale",
            "elo_start",
            "openskill_mu",
            "openskill_sigma",
            "provisional_sigma",
            "house_bots_allowed",
            "duplicate_sets",
            "live_delay_steps",
            "active",
            "created_at",
            "rated_bots",
        ]


class LadderListFilterSerializer(serializers.Serializer[Any]):
    game = serializers.CharField(required=False, max_length=60)


class LadderListApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(parameters=[LadderListFilterSerializer], responses=LadderOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        filters = parse_query(LadderListFilterSerializer, request)
        ladders = selectors.ladder_list(game_id=filters.get("game"))
        return Response(LadderOutputSerializer(ladders, many=True).data)


class LadderDetailApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses=LadderOutputSerializer)
    def get(self, request: Request, ladder_id: int) -> Response:
        return Response(LadderOutputSerializer(selectors.ladder_get(ladder_id=ladder_id)).data)


CACHED_FILTERS = {"page_size"}


class LadderSummarySerializer(serializers.Serializer[Any]):
    """The ladder as other resources (leaderboard pages, matches) name it."""

    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    game_id = serializers.CharField()
    num_players = serializers.IntegerField()


class LeaderboardRowSerializer(serializers.Serializer[Any]):
    rank = serializers.IntegerField(
        help_text="1 + the number of listed bots with a higher conservative rating (ties share a rank)"
    )
    tier = serializers.IntegerField(
        help_text="statistical tie group: walking down the ranks, a bot whose interval mu +/- 2 sigma "
        "overlaps that of its tier's first bot shares its tier; otherwise it opens the next tier"
    )
    tied_with_previous = serializers.BooleanField(help_text="in the same tier as the row above it")
    provisional = serializers.BooleanField(help_text="sigma is above the ladder's provisional_sigma")
    bot = inline_serializer(
        "LeaderboardBot",
        {
            "id": serializers.IntegerField(),
            "name": serializers.CharField(),
            "is_house": serializers.BooleanField(),
        },
    )
    owner = serializers.CharField()
    elo = serializers.FloatField(help_text="pairwise Elo (shown beside the ranking; does not order it)")
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    conservative = serializers.FloatField(help_text="mu - 3 sigma: the ranking key")
    rating_low = serializers.FloatField(help_text="mu - 2 sigma")
    rating_high = serializers.FloatField(help_text="mu + 2 sigma")
    games = serializers.IntegerField()
    wins = serializers.IntegerField(help_text="first places (shared first places included)")
    win_rate = serializers.FloatField(allow_null=True, help_text="wins / games")
    win_rate_low = serializers.FloatField(allow_null=True, help_text="95% Wilson score interval, low end")
    win_rate_high = serializers.FloatField(allow_null=True, help_text="95% Wilson score interval, high end")
    last_played_at = serializers.DateTimeField(allow_null=True)


class LeaderboardFilterSerializer(serializers.Serializer[Any]):
    owner = serializers.CharField(required=False, max_length=150)
    cursor = serializers.CharField(required=False, max_length=200)
    page_size = serializers.IntegerField(
        required=False, min_value=1, max_value=LeaderboardCursor.max_page_size
    )


class StandingsCursor(LeaderboardCursor):
    """Cursor pages over the ranked board: a cursor's position is the number of rows before its page (a
    place on the maintained board, not a rating); only the page's rows are read."""

    def paginate_board(self, fetch: Callable[[int, int], BoardPage], request: Request) -> list[Standing]:
        """The page the request's cursor asks for, read with `fetch(start, limit)`."""
        self.request = request
        self.base_url = request.build_absolute_uri()
        self.page_size = self.get_page_size(request) or self.page_size
        self.cursor = self.decode_cursor(request)
        start = 0
        if self.cursor is not None:
            start = int(float(self.cursor.position or 0)) + self.cursor.offset
        start = max(0, start)
        end = start + self.page_size
        board = fetch(start, self.page_size)
        self.next_url = (
            self.encode_cursor(Cursor(offset=0, reverse=False, position=end)) if end < board.total else None
        )
        if start == 0:
            self.previous_url = None
        elif start - self.page_size <= 0:
            self.previous_url = remove_query_param(self.base_url, self.cursor_query_param)
        else:
            self.previous_url = self.encode_cursor(
                Cursor(offset=0, reverse=False, position=start - self.page_size)
            )
        return board.rows


def _iso(value: dt.datetime | None) -> str | None:
    """UTC ISO 8601 with a Z, as DRF renders date-times (stored values are aware UTC)."""
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z") if value is not None else None


def _rounded(value: float | None, places: int) -> float | None:
    return None if value is None else round(value, places)


def leaderboard_row(row: Standing) -> dict[str, Any]:
    return {
        "rank": row.rank,
        "tier": row.tier,
        "tied_with_previous": row.tied_with_previous,
        "provisional": row.provisional,
        "bot": {"id": row.bot_id, "name": row.bot_name, "is_house": row.is_house},
        "owner": row.owner,
        "elo": round(row.elo, 2),
        "mu": round(row.mu, 4),
        "sigma": round(row.sigma, 4),
        "conservative": round(row.conservative, 4),
        "rating_low": round(row.rating_low, 4),
        "rating_high": round(row.rating_high, 4),
        "games": row.games,
        "wins": row.wins,
        "win_rate": _rounded(row.win_rate, 4),
        "win_rate_low": _rounded(row.win_rate_low, 4),
        "win_rate_high": _rounded(row.win_rate_high, 4),
        "last_played_at": _iso(row.last_played_at),
    }


class LeaderboardApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        description=RANKING_RULES,
        parameters=[
            OpenApiParameter("owner", str, description="only this owner's bots (ranks stay ladder-wide)"),
            OpenApiParameter("cursor", str),
            OpenApiParameter("page_size", int),
        ],
        responses=inline_serializer(
            "LeaderboardPage",
            {
                "ladder": LadderSummarySerializer(),
                "next": serializers.URLField(allow_null=True),
                "previous": serializers.URLField(allow_null=True),
                "results": LeaderboardRowSerializer(many=True),
            },
        ),
    )
    def get(self, request: Request, ladder_id: int) -> Response:
        filters = parse_query(LeaderboardFilterSerializer, request)
        ladder = Ladder.objects.filter(pk=ladder_id).first()  # no rated-bot count: a page reads its rows only
        if ladder is None:
            raise NotFound(f"no ladder with id {ladder_id}")
        seconds = settings.LADDER_LEADERBOARD_CACHE_SECONDS
        key = None
        if seconds > 0 and set(filters) <= CACHED_FILTERS:  # only first pages: a bounded set of keys
            query = "&".join(f"{k}={v}" for k, v in sorted(filters.items()))
            key = leaderboard_cache_key(ladder_id=ladder.pk, query=query)
            cached = cache.get(key)
            if cached is not None:
                return Response(cached, headers={"X-Cache": "hit"})
        data = self.build(request, ladder, filters)
        if key is not None:
            cache.set(key, data, seconds)
        return Response(data, headers={"X-Cache": "miss" if key else "off"})

    @staticmethod
    def build(request: Request, ladder: Ladder, filters: dict[str, Any]) -> dict[str, Any]:
        paginator = StandingsCursor()
        owner = filters.get("owner")
        page = paginator.paginate_board(
            lambda start, limit: leaderboard_page(ladder=ladder, start=start, limit=limit, owner=owner),
            request,
        )
        return {
            "ladder": LadderSummarySerializer(ladder).data,
            "next": paginator.next_url,
            "previous": paginator.previous_url,
            "results": [leaderboard_row(row) for row in page],
        }
