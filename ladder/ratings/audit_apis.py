"""Rating audit endpoints: the staff audit of every rating against the match records, and the public rating
change of one match (each seat's before and after). Layer: API (thin over `ladder.ratings.audit`); the
rules are in that module and in each operation's description. Nothing here writes."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.core.api import parse_query
from ladder.ladders.models import Ladder
from ladder.matches.models import Match
from ladder.ratings.audit import KINDS, AuditReport, RatingChange, match_rating_changes, ratings_audit

AUDIT_RULES = (
    "Every DONE rated match is replayed in ledger order from its stored record (ranks, scores, forfeits, "
    "the versions the bots reported), with each ladder's closed seasons, each version's 'reset rating' "
    "choice and the ladder's rating maths; every ledger row and rating row is compared with the rebuild. "
    "Difference kinds: " + "; ".join(f"{kind}: {text}" for kind, text in KINDS.items()) + "."
)
MAX_DIFFERENCES = 10_000


class AuditQuerySerializer(serializers.Serializer[Any]):
    ladder = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1)
    limit = serializers.IntegerField(required=False, min_value=0, max_value=MAX_DIFFERENCES)


class DifferenceSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=sorted(KINDS))
    ladder = serializers.IntegerField(allow_null=True)
    match = serializers.IntegerField(allow_null=True)
    bot = serializers.IntegerField(allow_null=True)
    detail = serializers.CharField()


class AuditSerializer(serializers.Serializer[Any]):
    identical = serializers.BooleanField(help_text="true when nothing differs")
    matches = serializers.IntegerField(help_text="DONE rated matches replayed from their records")
    ledger_rows = serializers.IntegerField(help_text="ledger rows compared")
    ratings = serializers.IntegerField(help_text="rating rows compared")
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="differences per kind")
    differences = DifferenceSerializer(many=True, help_text="the first `limit` differences, in replay order")
    truncated = serializers.BooleanField(help_text="true when more differences were found than listed")


def _audit_body(report: AuditReport, limit: int) -> dict[str, Any]:
    return {
        "identical": report.identical,
        "matches": report.matches,
        "ledger_rows": report.ledger_rows,
        "ratings": report.ratings,
        "counts": report.counts(),
        "differences": [d.to_json() for d in report.differences[:limit]],
        "truncated": len(report.differences) > limit,
    }


class RatingsAuditApi(APIView):
    permission_classes = [permissions.IsAdminUser]

    @extend_schema(
        description="Staff: audit the ratings (of one ladder, or all) against the match records. "
        + AUDIT_RULES,
        parameters=[
            OpenApiParameter("ladder", int, description="only this ladder"),
            OpenApiParameter(
                "limit", int, description=f"differences listed (default 1000, at most {MAX_DIFFERENCES})"
            ),
        ],
        responses=AuditSerializer,
    )
    def get(self, request: Request) -> Response:
        query = parse_query(AuditQuerySerializer, request)
        ladder_id = query.get("ladder")
        if ladder_id is not None and not Ladder.objects.filter(pk=ladder_id).exists():
            raise NotFound(f"no ladder with id {ladder_id}")
        report = ratings_audit(ladder_id=ladder_id)
        return Response(_audit_body(report, query.get("limit", 1000)))


class RatingChangeSerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField()
    bot = serializers.IntegerField(help_text="bot id")
    bot_name = serializers.CharField()
    rank = serializers.IntegerField(help_text="1 is first")
    version = serializers.CharField(help_text="the version the bot reported ('' when unknown)")
    season = serializers.IntegerField()
    elo_before = serializers.FloatField()
    elo_after = serializers.FloatField()
    elo_delta = serializers.FloatField()
    mu_before = serializers.FloatField()
    mu_after = serializers.FloatField()
    sigma_before = serializers.FloatField()
    sigma_after = serializers.FloatField()
    conservative_before = serializers.FloatField(help_text="mu - 3 sigma, the leaderboard's order")
    conservative_after = serializers.FloatField()


class MatchRatingChangeSerializer(serializers.Serializer[Any]):
    match = serializers.IntegerField()
    ladder = serializers.IntegerField()
    rated = serializers.BooleanField(help_text="false for a practice match: it changes no rating")
    status = serializers.CharField()
    seats = RatingChangeSerializer(many=True, help_text="empty until the match is rated")


def _change_row(change: RatingChange) -> dict[str, Any]:
    before, after = change.before, change.after
    return {
        "seat": change.seat,
        "bot": change.bot_id,
        "bot_name": change.bot_name,
        "rank": change.rank,
        "version": change.version,
        "season": change.season,
        "elo_before": before.elo,
        "elo_after": after.elo,
        "elo_delta": change.elo_delta,
        "mu_before": before.mu,
        "mu_after": after.mu,
        "sigma_before": before.sigma,
        "sigma_after": after.sigma,
        "conservative_before": before.conservative,
        "conservative_after": after.conservative,
    }


class MatchRatingChangeApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        description="Each seat's rating before and after the match, as the rating ledger records it (the "
        "values its next match starts from, unless a season close or a new version comes between); exact "
        "values, not rounded, so anyone can follow a rating and check it with the ladder's rating maths.",
        responses=MatchRatingChangeSerializer,
    )
    def get(self, request: Request, match_id: int) -> Response:
        match = Match.objects.filter(pk=match_id).values("id", "ladder_id", "rated", "status").first()
        if match is None:
            raise NotFound(f"no match with id {match_id}")
        changes = match_rating_changes(match_id=match_id)
        return Response(
            {
                "match": match["id"],
                "ladder": match["ladder_id"],
                "rated": match["rated"],
                "status": match["status"],
                "seats": [_change_row(c) for c in changes],
            }
        )
