"""Bot endpoints: list, register (token shown once), detail with the bot's dashboard (connected now, recent
faults and fault rate, matches in progress), edit, retire, rotate and revoke tokens, a bot's ratings and
rating history. Layer: API (thin): parse, call a service or selector, serialise."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from engine_service.games import list_games
from ladder.bots import selectors, services
from ladder.bots.models import Bot
from ladder.bots.presence import Presence, bot_presence
from ladder.core.api import parse_query
from ladder.core.schema import GameIdField
from ladder.core.users import request_user
from ladder.ratings.selectors import bot_ratings, rating_history


class BotOutputSerializer(serializers.ModelSerializer[Bot]):
    owner = serializers.CharField(source="owner.username")
    status = serializers.CharField(source="status_label")

    class Meta:
        model = Bot
        fields = [
            "id",
            "name",
            "owner",
            "description",
            "games",
            "active",
            "status",
            "is_house",
            "house_policy",
            "max_concurrent",
            "accepts_challenges",
            "versions_seen",
            "created_at",
            "retired_at",
        ]
        extra_kwargs = {"max_concurrent": {"help_text": "matches the bot may play at once (default 1)"}}


class OwnerBotOutputSerializer(BotOutputSerializer):
    class Meta(BotOutputSerializer.Meta):
        fields = [*BotOutputSerializer.Meta.fields, "token_hint", "token_created_at"]


def _game_choices() -> list[str]:
    return [spec.game_id for spec in list_games()]


MAX_CONCURRENT_HELP = (
    f"matches the bot may play at once (default 1, at most {services.MAX_CONCURRENT_LIMIT}); the gateway "
    "grants the smallest of this, the Hello's max_concurrent_matches and its own per-stream limit, and "
    "a hosted copy shares it"
)


class BotCreateInputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=40)
    games = serializers.ListField(child=GameIdField(max_length=60), min_length=1, max_length=20)
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")
    max_concurrent = serializers.IntegerField(
        min_value=1, max_value=services.MAX_CONCURRENT_LIMIT, default=1, help_text=MAX_CONCURRENT_HELP
    )


class BotUpdateInputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=40, required=False)
    games = serializers.ListField(
        child=GameIdField(max_length=60), min_length=1, max_length=20, required=False
    )
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    max_concurrent = serializers.IntegerField(
        min_value=1, max_value=services.MAX_CONCURRENT_LIMIT, required=False, help_text=MAX_CONCURRENT_HELP
    )
    accepts_challenges = serializers.BooleanField(
        required=False, help_text="other owners may ask for unrated practice matches against this bot"
    )

    def validate(self, attrs):  # type: ignore[no-untyped-def]
        unknown = (
            sorted(set(self.initial_data) - set(self.fields)) if hasattr(self.initial_data, "keys") else []
        )
        if unknown:
            raise serializers.ValidationError(
                f"cannot change {', '.join(unknown)}; editable: {', '.join(self.fields)}"
            )
        if not attrs:
            raise serializers.ValidationError(f"nothing to change; editable: {', '.join(self.fields)}")
        return attrs


class BotListFilterSerializer(serializers.Serializer[Any]):
    owner = serializers.CharField(required=False, max_length=150)
    game = serializers.CharField(required=False, max_length=60)
    search = serializers.CharField(required=False, max_length=40)
    include_retired = serializers.BooleanField(required=False, default=False)
    include_house = serializers.BooleanField(required=False, default=True)


def _is_owner(bot: Bot, request: Request) -> bool:
    return bool(request.user.is_authenticated and bot.owner_id == request.user.pk)


def _serialize(bot: Bot, request: Request) -> dict[str, Any]:
    return (OwnerBotOutputSerializer if _is_owner(bot, request) else BotOutputSerializer)(bot).data


TokenResponse = inline_serializer(
    "BotWithToken",
    {
        "bot": OwnerBotOutputSerializer(),
        "token": serializers.CharField(help_text="Shown once; store it now."),
    },
)


class BotListApi(APIView):
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    @extend_schema(parameters=[BotListFilterSerializer], responses=BotOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        filters = parse_query(BotListFilterSerializer, request)
        bots = selectors.bot_list(**filters)[:500]
        return Response([_serialize(b, request) for b in bots])

    @extend_schema(request=BotCreateInputSerializer, responses={201: TokenResponse})
    def post(self, request: Request) -> Response:
        data = BotCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        bot, token = services.bot_create(owner=request_user(request), **data.validated_data)
        return Response({"bot": _serialize(bot, request), "token": token}, status=status.HTTP_201_CREATED)


class StreamOutputSerializer(serializers.Serializer[Any]):
    gateway_id = serializers.CharField(help_text="the gateway holding the stream")
    capacity = serializers.IntegerField(help_text="matches at once the gateway granted")
    asked = serializers.IntegerField(help_text="matches at once the bot's Hello asked for (0: not recorded)")
    matches = serializers.IntegerField(help_text="matches playing on this stream now")
    free = serializers.IntegerField()
    connected_at = serializers.DateTimeField()
    bot_version = serializers.CharField(help_text="the version in the bot's Hello (empty: none)")


class PresenceOutputSerializer(serializers.Serializer[Any]):
    state = serializers.ChoiceField(
        choices=["connected", "offline", "unknown"],
        help_text="unknown: the gateways' session registry could not be read",
    )
    connected = serializers.BooleanField(allow_null=True, help_text="null when unknown")
    streams = serializers.IntegerField(allow_null=True, help_text="live streams (null when unknown)")
    free = serializers.IntegerField(
        allow_null=True, help_text="matches the bot could start now over all its streams (null when unknown)"
    )
    sessions = StreamOutputSerializer(
        many=True,
        allow_null=True,
        help_text="each stream; the owner only (null for anyone else, and when unknown)",
    )


class FaultOutputSerializer(serializers.Serializer[Any]):
    match = serializers.IntegerField(source="match_id")
    ladder_name = serializers.CharField()
    seat = serializers.IntegerField()
    step = serializers.IntegerField()
    kind = serializers.CharField(help_text="timeout, illegal, malformed, disconnect, resign or crash")
    reason = serializers.CharField()
    forfeit = serializers.BooleanField(help_text="this fault forfeited the match")
    finished_at = serializers.DateTimeField(allow_null=True, help_text="when its match finished")
    replay = serializers.CharField(
        source="replay_path", help_text="the match page at this step of the replay"
    )


class FaultSummaryOutputSerializer(serializers.Serializer[Any]):
    matches = serializers.IntegerField(
        help_text=f"finished matches covered (the last {selectors.RECENT_MATCHES})"
    )
    decisions = serializers.FloatField(help_text="decisions, estimated as each match's steps / its players")
    faults = serializers.IntegerField()
    matches_with_faults = serializers.IntegerField()
    per_100_decisions = serializers.FloatField(allow_null=True, help_text="faults per 100 decisions")
    match_share = serializers.FloatField(allow_null=True, help_text="share (0..1) of matches with a fault")
    by_kind = serializers.DictField(child=serializers.IntegerField(), help_text="fault count per kind")
    recent = FaultOutputSerializer(many=True, help_text="the newest faults, newest match first")


class MatchInProgressOutputSerializer(serializers.Serializer[Any]):
    match = serializers.IntegerField(source="match_id")
    status = serializers.ChoiceField(choices=[str(s) for s in selectors.IN_PROGRESS])
    ladder_name = serializers.CharField()
    game_id = serializers.CharField()
    rated = serializers.BooleanField()
    seat = serializers.IntegerField(help_text="the bot's seat")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    live = serializers.BooleanField(help_text="running and watchable live on its match page")
    page = serializers.CharField(source="path", help_text="the match page (the live view while it runs)")


class BotDetailOutputSerializer(OwnerBotOutputSerializer):
    """The bot (owner fields for its owner) with its dashboard."""

    presence = PresenceOutputSerializer(read_only=True, help_text="whether the bot is connected now")
    fault_summary = FaultSummaryOutputSerializer(read_only=True)
    in_progress = MatchInProgressOutputSerializer(many=True, read_only=True, help_text="queued and running")

    class Meta(OwnerBotOutputSerializer.Meta):
        fields = [*OwnerBotOutputSerializer.Meta.fields, "presence", "fault_summary", "in_progress"]


def presence_data(presence: Presence, *, owner: bool) -> dict[str, Any]:
    """A presence as the API and the pages show it: streams in detail for the owner only."""
    return {
        "state": presence.state,
        "connected": presence.connected,
        "streams": len(presence.streams) if presence.known else None,
        "free": presence.free,
        "sessions": StreamOutputSerializer(presence.streams, many=True).data
        if owner and presence.known
        else None,
    }


class BotDetailApi(APIView):
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    @extend_schema(
        responses=BotDetailOutputSerializer,
        description="The bot with its dashboard: whether it is connected now (its streams in detail for "
        f"its owner), its faults over its last {selectors.RECENT_MATCHES} finished matches (by kind, "
        "rate, the newest with links to their replay step) and its queued and running matches.",
    )
    def get(self, request: Request, bot_id: int) -> Response:
        bot = selectors.bot_get(bot_id=bot_id)
        data = dict(_serialize(bot, request))
        data["presence"] = presence_data(bot_presence(bot_id=bot.pk), owner=_is_owner(bot, request))
        data["fault_summary"] = FaultSummaryOutputSerializer(selectors.bot_fault_summary(bot_id=bot.pk)).data
        data["in_progress"] = MatchInProgressOutputSerializer(
            selectors.bot_matches_in_progress(bot_id=bot.pk), many=True
        ).data
        return Response(data)

    @extend_schema(request=BotUpdateInputSerializer, responses=OwnerBotOutputSerializer)
    def patch(self, request: Request, bot_id: int) -> Response:
        get_object_or_404(Bot, pk=bot_id)
        data = BotUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        bot = services.bot_update(bot_id=bot_id, user=request_user(request), **data.validated_data)
        return Response(_serialize(bot, request))

    @extend_schema(
        responses=OwnerBotOutputSerializer, description="Retire the bot (same as POST .../retire/)."
    )
    def delete(self, request: Request, bot_id: int) -> Response:
        get_object_or_404(Bot, pk=bot_id)
        bot = services.bot_retire(bot_id=bot_id, user=request_user(request))
        return Response(_serialize(bot, request))


class BotRetireApi(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, responses=OwnerBotOutputSerializer)
    def post(self, request: Request, bot_id: int) -> Response:
        get_object_or_404(Bot, pk=bot_id)
        return Response(_serialize(services.bot_retire(bot_id=bot_id, user=request_user(request)), request))


class BotTokenRotateApi(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, responses=TokenResponse)
    def post(self, request: Request, bot_id: int) -> Response:
        get_object_or_404(Bot, pk=bot_id)
        bot, token = services.bot_token_rotate(bot_id=bot_id, user=request_user(request))
        return Response({"bot": _serialize(bot, request), "token": token})


class BotTokenRevokeApi(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, responses=OwnerBotOutputSerializer)
    def post(self, request: Request, bot_id: int) -> Response:
        get_object_or_404(Bot, pk=bot_id)
        return Response(
            _serialize(services.bot_token_revoke(bot_id=bot_id, user=request_user(request)), request)
        )


class BotRatingOutputSerializer(serializers.Serializer[Any]):
    ladder = serializers.IntegerField(source="ladder_id")
    ladder_slug = serializers.CharField(source="ladder.slug")
    ladder_name = serializers.CharField(source="ladder.name")
    elo = serializers.FloatField()
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    conservative = serializers.FloatField()
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    win_rate = serializers.FloatField(allow_null=True)
    last_played_at = serializers.DateTimeField(allow_null=True)
    version = serializers.CharField(help_text="the bot version this rating was last earned with")


class BotRatingsApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses=BotRatingOutputSerializer(many=True))
    def get(self, request: Request, bot_id: int) -> Response:
        bot = selectors.bot_get(bot_id=bot_id)
        return Response(BotRatingOutputSerializer(bot_ratings(bot_id=bot.pk), many=True).data)


class HistoryFilterSerializer(serializers.Serializer[Any]):
    ladder = serializers.IntegerField(required=False, min_value=1)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=5000)


class HistoryRowSerializer(serializers.Serializer[Any]):
    match = serializers.IntegerField(source="match_id")
    ladder = serializers.IntegerField(source="ladder_id")
    seat = serializers.IntegerField()
    rank = serializers.IntegerField()
    score = serializers.IntegerField(allow_null=True)
    version = serializers.CharField(help_text="the bot version reported for the match (empty: unknown)")
    elo_before = serializers.FloatField()
    elo_after = serializers.FloatField()
    mu_before = serializers.FloatField()
    mu_after = serializers.FloatField()
    sigma_before = serializers.FloatField()
    sigma_after = serializers.FloatField()
    conservative_after = serializers.FloatField()
    at = serializers.DateTimeField(source="created_at")


class BotHistoryApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[OpenApiParameter("ladder", int), OpenApiParameter("limit", int)],
        responses=HistoryRowSerializer(many=True),
    )
    def get(self, request: Request, bot_id: int) -> Response:
        filters = parse_query(HistoryFilterSerializer, request)
        bot = selectors.bot_get(bot_id=bot_id)
        rows = rating_history(
            bot_id=bot.pk, ladder_id=filters.get("ladder"), limit=filters.get("limit", 1000)
        )
        return Response(HistoryRowSerializer(rows, many=True).data)
