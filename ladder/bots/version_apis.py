"""Bot version endpoints: a bot's versions with their lineage and rated games, and the owner's "reset
rating" choice for a version (announced before the bot connects with it, or changed while it has no rated
game). Layer: API (thin over `ladder.bots.versions`)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.bots.models import Bot, BotVersion
from ladder.bots.versions import MAX_VERSION_LENGTH, bot_version_set, bot_versions, version_games
from ladder.core.users import request_user
from ladder.ratings.elo import VERSION_SIGMA_FRACTION

VERSION_RULE = (
    "A bot's version is the bot_version string of its Hello, recorded with each rated match. A new "
    "version's first rated game on a ladder starts from the rating the bot had there (its parent's): Elo "
    f"and mu kept, sigma widened to sqrt(sigma^2 + ({VERSION_SIGMA_FRACTION} * start sigma)^2), at most the "
    "start sigma; with reset_rating, from the ladder's start values instead. Games of an unknown version "
    "continue the current one."
)


class BotVersionSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    # a declared field, moved by DRF's metaclass into the serializer's fields: `Field.parent` is untouched
    parent = serializers.CharField(allow_null=True, help_text="the version played before this one")  # type: ignore[assignment]
    reset_rating = serializers.BooleanField(help_text="starts from the ladder's start rating")
    rated_games = serializers.IntegerField(help_text="rated games on every ladder")
    first_seen_at = serializers.DateTimeField()


class BotVersionInputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=MAX_VERSION_LENGTH)
    reset_rating = serializers.BooleanField()


def _row(version: BotVersion, games: dict[str, int]) -> dict[str, Any]:
    return {
        "name": version.name,
        "parent": version.parent.name if version.parent else None,
        "reset_rating": version.reset_rating,
        "rated_games": games.get(version.name, 0),
        "first_seen_at": serializers.DateTimeField().to_representation(version.first_seen_at),
    }


class BotVersionsApi(APIView):
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    def _bot(self, bot_id: int) -> Bot:
        bot = Bot.objects.filter(pk=bot_id).first()
        if bot is None:
            raise NotFound(f"no bot with id {bot_id}")
        return bot

    @extend_schema(description=VERSION_RULE, responses=BotVersionSerializer(many=True))
    def get(self, request: Request, bot_id: int) -> Response:
        bot = self._bot(bot_id)
        games = version_games(bot_id=bot.pk)
        return Response([_row(v, games) for v in bot_versions(bot_id=bot.pk)])

    @extend_schema(
        description="The owner announces a version or changes its reset_rating choice (refused with 400 "
        "once the version has a rated game). " + VERSION_RULE,
        request=BotVersionInputSerializer,
        responses={200: BotVersionSerializer},
    )
    def post(self, request: Request, bot_id: int) -> Response:
        bot = self._bot(bot_id)
        data = BotVersionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        version = bot_version_set(bot_id=bot.pk, user=request_user(request), **data.validated_data)
        return Response(_row(version, version_games(bot_id=bot.pk)), status=status.HTTP_200_OK)
