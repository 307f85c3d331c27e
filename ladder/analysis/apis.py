"""The match analysis endpoint: `/api/v1/matches/<id>/analysis/`, GET (anyone) and POST (to ask for one).

Layer: API (thin). Who may ask and the bounds are `analysis.services`' rules; a refusal is its status (403
not a bot of yours, 404 no such match, 409 not finished, 429 a bound reached) with the reason as `detail`.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, permissions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.analysis import selectors, services
from ladder.analysis.models import AnalysisStatus
from ladder.core.schema import ErrorSerializer


class AnalysisRefusedError(exceptions.APIException):
    """An `AnalysisRefused` as the API's error: its status and its reason."""

    def __init__(self, refused: selectors.AnalysisRefused) -> None:
        self.status_code = refused.status
        super().__init__(detail=str(refused), code="analysis_refused")


REVIEW_FIELDS: dict[str, serializers.Field[Any, Any, Any, Any]] = {
    "step": serializers.IntegerField(help_text="the decision taken in the state after `step` actions"),
    "seat": serializers.IntegerField(),
    "played": serializers.CharField(help_text="the action id played"),
    "played_words": serializers.CharField(),
    "played_value": serializers.FloatField(),
    "best": serializers.CharField(help_text="the action id of the best move the search found"),
    "best_words": serializers.CharField(),
    "best_value": serializers.FloatField(),
    "loss": serializers.FloatField(help_text="best_value - played_value, never below 0"),
    "alternatives": serializers.IntegerField(help_text="legal moves the seat had"),
}

ANALYSIS = inline_serializer(
    "MatchAnalysis",
    {
        "match": serializers.IntegerField(),
        "status": serializers.ChoiceField(choices=["none", "QUEUED", "RUNNING", "DONE", "FAILED"]),
        "may_request": serializers.BooleanField(help_text="whether the caller may ask for it (bounds aside)"),
        "refusal": serializers.CharField(allow_null=True, help_text="why the caller may not ask for it"),
        "level": serializers.CharField(allow_null=True, help_text="the house level that searched"),
        "reason": serializers.CharField(help_text="why it failed (FAILED only)"),
        "decisions_done": serializers.IntegerField(),
        "decisions_total": serializers.IntegerField(
            help_text="decisions to analyse (at most LADDER_ANALYSIS_MAX_DECISIONS)"
        ),
        "decisions_in_match": serializers.IntegerField(help_text="decisions of the match with a choice"),
        "cpu_seconds": serializers.FloatField(),
        "requested_at": serializers.DateTimeField(allow_null=True),
        "started_at": serializers.DateTimeField(allow_null=True),
        "finished_at": serializers.DateTimeField(allow_null=True),
        "reviews": inline_serializer(
            "DecisionReview", REVIEW_FIELDS, many=True, help_text="once DONE: one per decision analysed"
        ),
        "worst": serializers.ListField(
            child=serializers.IntegerField(), help_text="the steps of the decisions that lost the most"
        ),
    },
)


class MatchAnalysisApi(APIView):
    def get_permissions(self) -> list[Any]:
        if self.request.method == "POST":
            return [permissions.IsAuthenticated()]
        return [permissions.AllowAny()]

    @extend_schema(
        responses=ANALYSIS,
        description="The analysis of a finished match by the house `search` level: `status` (none until "
        "someone asks), its progress (`decisions_done` of `decisions_total`), and once DONE the `reviews`, "
        "per decision the move played and the best move found (ids and words) with their estimated values "
        "and the `loss`, and `worst`, the steps of the decisions that lost the most. Each decision was "
        "searched from its own seat's observation. Public, like the replay; `may_request` says whether the "
        "caller may ask for it.",
    )
    def get(self, request: Request, match_id: int) -> Response:
        try:
            return Response(selectors.analysis_view(match_id=match_id, user=request.user))
        except selectors.AnalysisRefused as exc:
            raise AnalysisRefusedError(exc) from exc

    @extend_schema(
        request=None,
        responses={
            200: OpenApiResponse(ANALYSIS, description="already done: the analysis"),
            202: OpenApiResponse(ANALYSIS, description="queued or running: poll GET for its progress"),
            409: OpenApiResponse(ErrorSerializer, description="the match is not finished"),
        },
        description="Ask for the analysis of a finished match: the owner of a bot seated in it, or staff. "
        "Bounded per user (one queued or running at once, a number a day and their CPU time) and for the "
        "site; a refusal says why (403, 404, 409, 429) and changes nothing. Asking again for an analysis "
        "done, queued or running returns it.",
    )
    def post(self, request: Request, match_id: int) -> Response:
        try:
            requested = services.analysis_request(user=request.user, match_id=match_id)
            body = selectors.analysis_view(match_id=match_id, user=request.user)
        except selectors.AnalysisRefused as exc:
            raise AnalysisRefusedError(exc) from exc
        done = requested.analysis.status == AnalysisStatus.DONE
        return Response(body, status=status.HTTP_200_OK if done else status.HTTP_202_ACCEPTED)
