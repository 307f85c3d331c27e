"""Tournament endpoints under /api/v1/tournaments/: list, create (staff; starts round 1 at once), detail with
standings, crosstable and rounds. Layer: API (thin over services and selectors)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.core.api import NewestFirstCursor
from ladder.core.schema import cursor_page
from ladder.tournaments import dispatch, selectors, services
from ladder.tournaments.models import Tournament, TournamentFormat


class TournamentOutputSerializer(serializers.ModelSerializer[Tournament]):
    ladder = serializers.SerializerMethodField()
    seed = serializers.SerializerMethodField(
        help_text="null while the tournament is RUNNING or any match derived from its seed is still to be "
        "played (a cancelled tournament's queued tables)"
    )
    entrants = serializers.SerializerMethodField()

    class Meta:
        model = Tournament
        fields = [
            "id",
            "name",
            "ladder",
            "format",
            "status",
            "rounds_planned",
            "seed",
            "entrants",
            "created_at",
            "finished_at",
        ]

    def get_ladder(self, t: Tournament) -> dict[str, Any]:
        return {
            "id": t.ladder_id,
            "slug": t.ladder.slug,
            "name": t.ladder.name,
            "num_players": t.ladder.num_players,
        }

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_seed(self, t: Tournament) -> int | None:
        return t.seed if selectors.tournament_seed_revealed(tournament=t) else None

    def get_entrants(self, t: Tournament) -> int:
        count = getattr(t, "entrant_count", None)
        return count if count is not None else t.entries.count()


class TournamentDetailOutputSerializer(TournamentOutputSerializer):
    """The tournament with its standings, crosstable and rounds (documentation of the detail body)."""

    standings = serializers.ListField(child=serializers.DictField())
    crosstable = serializers.DictField()
    rounds = serializers.ListField(child=serializers.DictField())
    rounds_played = serializers.IntegerField()

    class Meta(TournamentOutputSerializer.Meta):
        fields = [
            *TournamentOutputSerializer.Meta.fields,
            "standings",
            "crosstable",
            "rounds",
            "rounds_played",
        ]


class TournamentCreateInputSerializer(serializers.Serializer[Any]):
    ladder = serializers.IntegerField()
    bots = serializers.ListField(child=serializers.IntegerField(), allow_empty=False, max_length=64)
    format = serializers.ChoiceField(choices=TournamentFormat.values)
    rounds = serializers.IntegerField(required=False, min_value=1)
    name = serializers.CharField(required=False, allow_blank=True, max_length=120)
    seed = serializers.IntegerField(required=False, min_value=0)


def _start(tournament_id: int) -> None:
    dispatch.tournament_start(tournament_id=tournament_id)


class TournamentListApi(APIView):
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    @extend_schema(
        responses=cursor_page("Tournament", TournamentOutputSerializer(many=True)),
        operation_id="tournaments_list",
    )
    def get(self, request: Request) -> Response:
        paginator = NewestFirstCursor()
        page = paginator.paginate_queryset(selectors.tournament_list(), request, view=self)
        return paginator.get_paginated_response(TournamentOutputSerializer(page, many=True).data)

    @extend_schema(request=TournamentCreateInputSerializer, responses={201: TournamentOutputSerializer})
    def post(self, request: Request) -> Response:
        if not request.user.is_staff:
            self.permission_denied(request, message="only operators (staff) create tournaments")
        data = TournamentCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        with transaction.atomic():
            tournament = services.tournament_create(
                ladder_id=v["ladder"],
                bot_ids=v["bots"],
                format=v["format"],
                rounds=v.get("rounds"),
                name=v.get("name", ""),
                seed=v.get("seed"),
                user=request.user,
            )
            _start(tournament.pk)
        tournament = selectors.tournament_get(tournament_id=tournament.pk)
        return Response(TournamentOutputSerializer(tournament).data, status=status.HTTP_201_CREATED)


class TournamentDetailApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses=TournamentDetailOutputSerializer)
    def get(self, request: Request, tournament_id: int) -> Response:
        data = selectors.tournament_standings(tournament_id=tournament_id)
        body = TournamentOutputSerializer(data["tournament"]).data
        body.update(
            standings=data["standings"],
            crosstable=data["crosstable"],
            rounds=data["rounds"],
            rounds_played=data["rounds_played"],
        )
        return Response(body)
