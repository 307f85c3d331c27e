"""Game, ladder and leaderboard endpoints. Layer: API (thin).

The leaderboard is cursor-paginated; its first page is cached per ladder and page size (never per
arbitrary query: a cursor or an owner filter is served uncached); the cache key carries the ladder's
leaderboard version, which changes when a rating change commits, so a page is never staler than that.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Q
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import permissions, serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.core.api import LeaderboardCursor, parse_query
from ladder.core.schema import game_ids
from ladder.ladders import selectors
from ladder.ladders.models import Ladder
from ladder.ratings.cache import leaderboard_cache_key
from ladder.ratings.elo import conservative
from ladder.ratings.models import Rating
from ladder.ratings.selectors import leaderboard_values


class GameSerializer(serializers.Serializer):
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


class LadderOutputSerializer(serializers.ModelSerializer):
    rated_bots = serializers.IntegerField(read_only=True, help_text="active bots with a rated game here")

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
            "house_bots_allowed",
            "active",
            "created_at",
            "rated_bots",
        ]


class LadderListFilterSerializer(serializers.Serializer):
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


class LadderSummarySerializer(serializers.Serializer):
    """The ladder as other resources (leaderboard pages, matches) name it."""

    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    game_id = serializers.CharField()
    num_players = serializers.IntegerField()


class LeaderboardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    bot = inline_serializer(
        "LeaderboardBot", {"id": serializers.IntegerField(), "name": serializers.CharField()}
    )
    owner = serializers.CharField()
    elo = serializers.FloatField()
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    conservative = serializers.FloatField()
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    win_rate = serializers.FloatField(allow_null=True)
    last_played_at = serializers.DateTimeField(allow_null=True)


class LeaderboardFilterSerializer(serializers.Serializer):
    owner = serializers.CharField(required=False, max_length=150)
    cursor = serializers.CharField(required=False, max_length=200)
    page_size = serializers.IntegerField(
        required=False, min_value=1, max_value=LeaderboardCursor.max_page_size
    )


def _iso(value: dt.datetime | None) -> str | None:
    """UTC ISO 8601 with a Z, as DRF renders date-times (stored values are aware UTC)."""
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z") if value is not None else None


def leaderboard_rows(
    ladder_id: int, page: list[dict[str, Any]], owner: str | None, *, first_page: bool
) -> list[dict[str, Any]]:
    """Serialised rows with ranks: tied Elo shares a rank; ranks count over the whole ladder (one count
    query for a page after the first, to place its first row)."""
    if not page:
        return []
    first = page[0]
    if first_page:
        counts = {"above": 0, "before": 0}
    else:
        base = Rating.objects.filter(ladder_id=ladder_id, bot__active=True, games__gte=1)
        if owner:
            base = base.filter(bot__owner__username=owner)
        counts = base.aggregate(
            above=Count("id", filter=Q(elo__gt=first["elo"])),
            before=Count("id", filter=Q(elo__gt=first["elo"]) | Q(elo=first["elo"], id__lt=first["id"])),
        )
    rows = []
    rank = counts["above"] + 1
    position = counts["before"]
    previous: float | None = None
    for offset, rating in enumerate(page):
        elo, games, wins, mu, sigma = (
            rating["elo"],
            rating["games"],
            rating["wins"],
            rating["mu"],
            rating["sigma"],
        )
        if previous is not None and elo != previous:
            rank = position + offset + 1
        previous = elo
        rows.append(
            {
                "rank": rank,
                "bot": {"id": rating["bot_id"], "name": rating["bot__name"]},
                "owner": rating["bot__owner__username"],
                "elo": round(elo, 2),
                "mu": round(mu, 4),
                "sigma": round(sigma, 4),
                "conservative": round(conservative(mu, sigma), 4),
                "games": games,
                "wins": wins,
                "win_rate": round(wins / games, 4) if games else None,
                "last_played_at": _iso(rating["last_played_at"]),
            }
        )
    return rows


class LeaderboardApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("owner", str, description="only this owner's bots"),
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
        ladder = selectors.ladder_get(ladder_id=ladder_id)
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
        paginator = LeaderboardCursor()
        page = paginator.paginate_queryset(
            leaderboard_values(ladder_id=ladder.pk, owner=filters.get("owner")), request, view=None
        )
        return {
            "ladder": LadderSummarySerializer(ladder).data,
            "next": paginator.get_next_link(),
            "previous": paginator.get_previous_link(),
            "results": leaderboard_rows(
                ladder.pk, list(page or []), filters.get("owner"), first_page=paginator.cursor is None
            ),
        }
