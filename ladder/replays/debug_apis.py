"""The owner-only endpoint of the bots' debug texts: `/api/v1/matches/<id>/debug/?seat=N`.

Layer: API (thin). Who may read is `replays.debug`'s rule (a seat's bot's owner, and staff): anyone else
gets 403 with the reason, an unknown match or seat 404. The texts are never logged.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.core.api import parse_query
from ladder.replays import debug


class DebugQuerySerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField(required=False, min_value=0, max_value=15)
    start = serializers.IntegerField(required=False, min_value=0, default=0)
    count = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=debug.MAX_DEBUG_PER_REQUEST,
        default=debug.MAX_DEBUG_PER_REQUEST,
    )


def replay_link(match_id: int, seat: int, step: int) -> str:
    """The match page's replay at this step, in this seat's view."""
    return f"/matches/{match_id}/?step={step}&seat={seat}#replay"


class DecisionDebugApi(APIView):
    permission_classes = [permissions.AllowAny]  # the reader is checked by `replays.debug`, with a reason

    @extend_schema(
        parameters=[
            OpenApiParameter("seat", int, description="one seat; omit for every seat of the reader's bots"),
            OpenApiParameter("start", int, description="the first step"),
            OpenApiParameter("count", int),
        ],
        responses=dict,
        description="A finished match's debug texts (`Decision.debug`) for its bot's owner only (and staff): "
        "`seats`: [{seat, bot: {id, name}, entries: [{step, text, replay}]}], `next_start` the next page's "
        "`start` (null on the last). Anyone else gets 403 with the reason; the texts appear once the match "
        "is recorded.",
    )
    def get(self, request: Request, match_id: int) -> Response:
        query = parse_query(DebugQuerySerializer, request)
        try:
            page = debug.decision_debug_page(
                match_id=match_id,
                user=request.user,
                seat=query.get("seat"),
                start=query.get("start", 0),
                count=query.get("count", debug.MAX_DEBUG_PER_REQUEST),
            )
        except debug.DebugNotFound as exc:
            raise NotFound(str(exc)) from exc
        except debug.DebugDenied as exc:
            raise PermissionDenied(str(exc)) from exc
        for seat in page.seats:
            for entry in seat["entries"]:
                entry["replay"] = replay_link(match_id, seat["seat"], entry["step"])
        return Response({"match": match_id, "seats": page.seats, "next_start": page.next_start})
