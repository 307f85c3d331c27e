"""Match endpoints: filtered list, detail with seats (scores, ranks, faults), match creation for staff, and
practice matches any bot owner asks for. Layer: API (thin)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.core.api import NewestFirstCursor, parse_query
from ladder.core.schema import GameIdField, cursor_page
from ladder.core.users import request_user
from ladder.matches import selectors, services
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.matches.practice import practice_match_request
from ladder.matches.seeds import SEED_BITS


class SeatOutputSerializer(serializers.ModelSerializer[Seat]):
    seat = serializers.IntegerField(source="index")
    bot = serializers.SerializerMethodField()

    class Meta:
        model = Seat
        fields = ["seat", "bot", "score", "rank", "forfeited", "end_reason", "faults"]

    def get_bot(self, seat: Seat) -> dict[str, Any]:
        return {
            "id": seat.bot_id,
            "name": seat.bot.name,
            "owner": seat.bot.owner.username,
            "is_house": seat.bot.is_house,
        }


class MatchOutputSerializer(serializers.ModelSerializer[Match]):
    ladder = serializers.SerializerMethodField()
    seed = serializers.SerializerMethodField(
        help_text="The game seed; null until the match is DONE, ERROR or CANCELLED and no unfinished "
        "match shares it (a duplicate set)."
    )
    seats = SeatOutputSerializer(many=True)
    has_replay = serializers.SerializerMethodField()

    class Meta:
        model = Match
        fields = [
            "id",
            "ladder",
            "seed",
            "status",
            "attempts",
            "error",
            "end_reason",
            "steps",
            "created_at",
            "queued_at",
            "started_at",
            "finished_at",
            "seats",
            "has_replay",
            "rated",
        ]

    def get_ladder(self, match: Match) -> dict[str, Any]:
        ladder = match.ladder
        return {
            "id": ladder.pk,
            "slug": ladder.slug,
            "name": ladder.name,
            "game_id": ladder.game_id,
            "num_players": ladder.num_players,
        }

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_seed(self, match: Match) -> int | None:
        return match.seed if selectors.match_secrets_revealed(match=match) else None

    def get_has_replay(self, match: Match) -> bool:
        return match.status == MatchStatus.DONE and selectors.match_secrets_revealed(match=match)


@extend_schema_field({"type": "string", "format": "date-time"})
class DateOrDateTimeField(serializers.Field[dt.datetime, str, str, Any]):
    """An ISO date (midnight UTC) or date-time, converted to UTC."""

    default_error_messages = {
        "invalid": "expected an ISO date (2025-01-31) or date-time (2025-01-31T12:00:00Z)"
    }

    def to_internal_value(self, value: object) -> dt.datetime:
        if not isinstance(value, str):
            self.fail("invalid")
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            self.fail("invalid")
        if timezone.is_naive(parsed):
            parsed = parsed.replace(tzinfo=dt.UTC)
        try:  # in UTC: PostgreSQL refuses offsets past 15:59, Python allows up to 23:59
            return parsed.astimezone(dt.UTC)
        except OverflowError:
            self.fail("invalid")


class MatchFilterSerializer(serializers.Serializer[Any]):
    ladder = serializers.IntegerField(required=False, min_value=1)
    bot = serializers.IntegerField(required=False, min_value=1)
    status = serializers.ChoiceField(choices=MatchStatus.values, required=False)
    since = DateOrDateTimeField(required=False)
    until = DateOrDateTimeField(required=False)
    cursor = serializers.CharField(required=False, max_length=200)
    page_size = serializers.IntegerField(
        required=False, min_value=1, max_value=NewestFirstCursor.max_page_size
    )

    def validate(self, attrs):  # type: ignore[no-untyped-def]
        if attrs.get("since") and attrs.get("until") and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError("since must be before until")
        return attrs


class MatchCreateInputSerializer(serializers.Serializer[Any]):
    ladder = serializers.IntegerField(min_value=1)
    bot_ids = serializers.ListField(child=serializers.IntegerField(min_value=1), min_length=2, max_length=8)
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**SEED_BITS - 1)


class MatchListApi(APIView):
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    @extend_schema(
        parameters=[MatchFilterSerializer],
        responses=cursor_page("Match", MatchOutputSerializer(many=True)),
        operation_id="matches_list",
    )
    def get(self, request: Request) -> Response:
        filters = parse_query(MatchFilterSerializer, request)
        matches = selectors.match_list(
            ladder_id=filters.get("ladder"),
            bot_id=filters.get("bot"),
            status=filters.get("status"),
            since=filters.get("since"),
            until=filters.get("until"),
        )
        paginator = NewestFirstCursor()
        page = paginator.paginate_queryset(matches, request, view=self)
        return paginator.get_paginated_response(MatchOutputSerializer(page, many=True).data)

    @extend_schema(request=MatchCreateInputSerializer, responses={201: MatchOutputSerializer})
    def post(self, request: Request) -> Response:
        if not request.user.is_staff:
            self.permission_denied(request, message="only operators (staff) create matches by hand")
        data = MatchCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        match = services.match_create(
            ladder_id=data.validated_data["ladder"],
            bot_ids=data.validated_data["bot_ids"],
            seed=data.validated_data.get("seed"),
        )
        return Response(
            MatchOutputSerializer(selectors.match_get(match_id=match.pk)).data, status=status.HTTP_201_CREATED
        )


class PracticeMatchInputSerializer(serializers.Serializer[Any]):
    bot = serializers.IntegerField(min_value=1, help_text="one of your bots; it takes seat 0")
    game_id = GameIdField(max_length=60, help_text="the game to play")
    options = serializers.DictField(required=False, help_text="game options (the game's defaults otherwise)")
    opponents = serializers.ListField(
        child=serializers.JSONField(),
        min_length=1,
        max_length=4,
        help_text="seats 1, 2, ...: a house bot's policy name (see LADDER_PRACTICE_HOUSE_POLICIES, by default "
        "random, greedy, search) or the id of a bot that accepts challenges (or is yours)",
    )


class PracticeMatchListApi(APIView):
    """Unrated practice matches: ask for one of your bot against house bots or bots that accept challenges,
    in any game and options; it is played by the ladder's workers within seconds and replayed like any
    match. GET lists the ones you asked for, newest first."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses=cursor_page("PracticeMatch", MatchOutputSerializer(many=True)))
    def get(self, request: Request) -> Response:
        matches = selectors.match_list().filter(requested_by=request_user(request))
        paginator = NewestFirstCursor()
        page = paginator.paginate_queryset(matches, request, view=self)
        return paginator.get_paginated_response(MatchOutputSerializer(page, many=True).data)

    @extend_schema(request=PracticeMatchInputSerializer, responses={201: MatchOutputSerializer})
    def post(self, request: Request) -> Response:
        data = PracticeMatchInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        match = practice_match_request(
            user=request_user(request),
            bot_id=data.validated_data["bot"],
            game_id=data.validated_data["game_id"],
            options=data.validated_data.get("options", {}),
            opponents=data.validated_data["opponents"],
        )
        return Response(
            MatchOutputSerializer(selectors.match_get(match_id=match.pk)).data, status=status.HTTP_201_CREATED
        )


class MatchDetailApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses=MatchOutputSerializer)
    def get(self, request: Request, match_id: int) -> Response:
        return Response(MatchOutputSerializer(selectors.match_get(match_id=match_id)).data)
