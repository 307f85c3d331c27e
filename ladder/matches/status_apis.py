"""A match's state in a few fields, for a page that waits for it to start, then to finish, and for REST
clients that poll: its status, why it still waits (a practice match waiting for a free slot of its bot),
whether it can be watched live and whether its replay is ready. Layer: API (thin): reads through
`ladder.matches.practice` and `ladder.matches.selectors`; must not write or reveal anything the match page
does not (no seed, no hidden cards).
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.matches.models import Match, MatchStatus
from ladder.matches.practice import practice_match_waiting
from ladder.matches.selectors import match_live_watchable, match_secrets_revealed


class MatchStatusOutputSerializer(serializers.Serializer[Any]):
    match = serializers.IntegerField()
    status = serializers.ChoiceField(choices=MatchStatus.values)
    practice = serializers.BooleanField(help_text="asked for by a bot owner: unrated")
    waiting = serializers.CharField(
        allow_null=True,
        help_text="why the match has not started yet, in words (a practice match waits for a free slot of "
        'its bots: "waiting for a free slot of bot X: ..."); null once it is under way or over',
    )
    live = serializers.BooleanField(help_text="running and watchable live on its page")
    has_replay = serializers.BooleanField(help_text="finished, and its replay may be shown")
    error = serializers.CharField(help_text="why it was called off or failed (empty otherwise)")
    page = serializers.CharField(help_text="the match page")


def match_status_data(*, match: Match) -> dict[str, Any]:
    """The fields of `MatchStatusOutputSerializer` for `match` (the page's poll reads the same)."""
    waiting = practice_match_waiting(match=match)
    if waiting is None and match.status == MatchStatus.QUEUED:
        waiting = "queued: waiting for a worker to start it"
    return {
        "match": match.pk,
        "status": match.status,
        "practice": match.requested_by_id is not None,
        "waiting": waiting,
        "live": match_live_watchable(match=match),
        "has_replay": match.status == MatchStatus.DONE and match_secrets_revealed(match=match),
        "error": match.error if match.status in (MatchStatus.CANCELLED, MatchStatus.ERROR) else "",
        "page": reverse("web:match", args=[match.pk]),
    }


class MatchStatusApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses=MatchStatusOutputSerializer,
        description="A match's state, cheap to poll: NEW (a practice match waiting, with why), QUEUED, "
        "RUNNING (live when watchable), then DONE (with its replay), CANCELLED or ERROR (with why).",
    )
    def get(self, request: Request, match_id: int) -> Response:
        match = get_object_or_404(Match.objects.select_related("ladder"), pk=match_id)
        return Response(MatchStatusOutputSerializer(match_status_data(match=match)).data)
