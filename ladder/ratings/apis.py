"""Statistics endpoints a bot author uses: a ladder's win rate by seat position, a bot's head-to-head table,
two bots compared; and a ladder's seasons (closed ones with their frozen standings; staff close one). Layer: API (thin over `ladder.ratings.selectors`; the rules are in
`ladder.ratings.standing` and in each operation's description)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Count
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.bots.models import Bot
from ladder.core.api import parse_query
from ladder.ladders.models import Ladder
from ladder.ratings.models import Season
from ladder.ratings.seasons import season_close, season_get, season_list, season_standings
from ladder.ratings.selectors import (
    HeadToHead,
    Standing,
    bot_ratings,
    bot_standings,
    head_to_head,
    seat_statistics,
)
from ladder.ratings.standing import RANKING_RULES


def _ladder(ladder_id: int) -> Ladder:
    ladder = Ladder.objects.filter(pk=ladder_id).first()
    if ladder is None:
        raise NotFound(f"no ladder with id {ladder_id}")
    return ladder


def _bot(bot_id: int) -> Bot:
    bot = Bot.objects.filter(pk=bot_id).first()
    if bot is None:
        raise NotFound(f"no bot with id {bot_id}")
    return bot


def _round(value: float | None, places: int = 4) -> float | None:
    return None if value is None else round(value, places)


class SeatStatSerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField(help_text="seat index; seat 0 moves first")
    games = serializers.IntegerField()
    wins = serializers.IntegerField(help_text="first places (shared first places count for each)")
    win_rate = serializers.FloatField(allow_null=True)
    win_rate_low = serializers.FloatField(allow_null=True, help_text="95% Wilson score interval, low end")
    win_rate_high = serializers.FloatField(allow_null=True, help_text="95% Wilson score interval, high end")
    mean_rank = serializers.FloatField(allow_null=True)
    mean_score = serializers.FloatField(allow_null=True)


class LadderSeatsApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        description="Win rate by seat position over every rated match of the ladder. With no seat "
        "advantage each seat wins about fair_share = 1 / num_players; an interval (95% Wilson) that "
        "excludes fair_share is a seat advantage the data show.",
        responses=inline_serializer(
            "LadderSeats",
            {
                "ladder": serializers.IntegerField(),
                "num_players": serializers.IntegerField(),
                "fair_share": serializers.FloatField(),
                "seats": SeatStatSerializer(many=True),
            },
        ),
    )
    def get(self, request: Request, ladder_id: int) -> Response:
        ladder = _ladder(ladder_id)
        seats = [
            {
                **asdict(s),
                **{
                    k: _round(getattr(s, k))
                    for k in ("win_rate", "win_rate_low", "win_rate_high", "mean_rank", "mean_score")
                },
            }
            for s in seat_statistics(ladder=ladder)
        ]
        return Response(
            {
                "ladder": ladder.pk,
                "num_players": ladder.num_players,
                "fair_share": round(1 / ladder.num_players, 4),
                "seats": seats,
            }
        )


class HeadToHeadSerializer(serializers.Serializer[Any]):
    ladder = serializers.IntegerField()
    opponent = inline_serializer(
        "HeadToHeadOpponent", {"id": serializers.IntegerField(), "name": serializers.CharField()}
    )
    games = serializers.IntegerField(help_text="rated matches both sat in")
    ahead = serializers.IntegerField(help_text="matches the bot finished ahead of the opponent")
    behind = serializers.IntegerField()
    tied = serializers.IntegerField()
    mean_rank_difference = serializers.FloatField(
        help_text="mean of (opponent's rank - the bot's rank): above 0, the bot finishes ahead on average"
    )
    score = serializers.FloatField(help_text="(ahead + tied / 2) / games")
    score_low = serializers.FloatField(help_text="95% Wilson score interval, low end")
    score_high = serializers.FloatField(help_text="95% Wilson score interval, high end")


def _head_to_head_row(h: HeadToHead) -> dict[str, Any]:
    return {
        "ladder": h.ladder_id,
        "opponent": {"id": h.opponent_id, "name": h.opponent_name},
        "games": h.games,
        "ahead": h.ahead,
        "behind": h.behind,
        "tied": h.tied,
        "mean_rank_difference": round(h.mean_rank_difference, 4),
        "score": round(h.score, 4),
        "score_low": round(h.score_low, 4),
        "score_high": round(h.score_high, 4),
    }


class HeadToHeadFilterSerializer(serializers.Serializer[Any]):
    ladder = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1)


class BotHeadToHeadApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        description="The bot against every opponent it met in rated matches, per ladder, most games first.",
        parameters=[OpenApiParameter("ladder", int, description="only this ladder")],
        responses=HeadToHeadSerializer(many=True),
    )
    def get(self, request: Request, bot_id: int) -> Response:
        filters = parse_query(HeadToHeadFilterSerializer, request)
        bot = _bot(bot_id)
        rows = head_to_head(bot_id=bot.pk, ladder_id=filters.get("ladder"))
        return Response([_head_to_head_row(h) for h in rows])


class StandingSerializer(serializers.Serializer[Any]):
    rank = serializers.IntegerField()
    tier = serializers.IntegerField()
    provisional = serializers.BooleanField()
    elo = serializers.FloatField()
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    conservative = serializers.FloatField(help_text="mu - 3 sigma: the ranking key")
    rating_low = serializers.FloatField(help_text="mu - 2 sigma")
    rating_high = serializers.FloatField(help_text="mu + 2 sigma")
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    win_rate = serializers.FloatField(allow_null=True)
    win_rate_low = serializers.FloatField(allow_null=True)
    win_rate_high = serializers.FloatField(allow_null=True)


def _standing(s: Standing | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {
        "rank": s.rank,
        "tier": s.tier,
        "provisional": s.provisional,
        "elo": round(s.elo, 2),
        "mu": round(s.mu, 4),
        "sigma": round(s.sigma, 4),
        "conservative": round(s.conservative, 4),
        "rating_low": round(s.rating_low, 4),
        "rating_high": round(s.rating_high, 4),
        "games": s.games,
        "wins": s.wins,
        "win_rate": _round(s.win_rate),
        "win_rate_low": _round(s.win_rate_low),
        "win_rate_high": _round(s.win_rate_high),
    }


class BotCompareApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        description="Two bots side by side on every ladder both are listed on: each one's leaderboard "
        "standing, whether they share a tier (statistically tied), and their head-to-head from the first "
        "bot's side (null when they never met there). Ratings over time: GET /bots/{id}/history/. "
        + RANKING_RULES,
        responses=inline_serializer(
            "BotComparison",
            {
                "bots": inline_serializer(
                    "ComparedBot",
                    {"id": serializers.IntegerField(), "name": serializers.CharField()},
                    many=True,
                ),
                "ladders": inline_serializer(
                    "ComparedLadder",
                    {
                        "ladder": inline_serializer(
                            "ComparedLadderName",
                            {
                                "id": serializers.IntegerField(),
                                "slug": serializers.CharField(),
                                "name": serializers.CharField(),
                            },
                        ),
                        "standings": serializers.ListField(
                            child=StandingSerializer(allow_null=True),
                            help_text="the two bots' standings, in the order asked (null: not listed)",
                        ),
                        "same_tier": serializers.BooleanField(allow_null=True),
                        "head_to_head": HeadToHeadSerializer(allow_null=True),
                    },
                    many=True,
                ),
            },
        ),
    )
    def get(self, request: Request, bot_id: int, other_id: int) -> Response:
        a, b = _bot(bot_id), _bot(other_id)
        if a.pk == b.pk:
            raise ValidationError({"other_id": ["compare two different bots"]})
        a_ladders = {r.ladder_id: r.ladder for r in bot_ratings(bot_id=a.pk) if r.games}
        b_ladders = {r.ladder_id for r in bot_ratings(bot_id=b.pk) if r.games}
        a_standings, b_standings = bot_standings(bot_id=a.pk), bot_standings(bot_id=b.pk)
        meetings = {h.ladder_id: h for h in head_to_head(bot_id=a.pk, opponent_id=b.pk)}
        ladders = []
        for ladder_id in sorted(set(a_ladders) & b_ladders):
            ladder = a_ladders[ladder_id]
            sa, sb = a_standings.get(ladder_id), b_standings.get(ladder_id)
            meeting = meetings.get(ladder_id)
            ladders.append(
                {
                    "ladder": {"id": ladder.pk, "slug": ladder.slug, "name": ladder.name},
                    "standings": [_standing(sa), _standing(sb)],
                    "same_tier": sa.tier == sb.tier if sa and sb else None,
                    "head_to_head": _head_to_head_row(meeting) if meeting else None,
                }
            )
        return Response(
            {"bots": [{"id": a.pk, "name": a.name}, {"id": b.pk, "name": b.name}], "ladders": ladders}
        )


SEASON_RULES = (
    "Closing a season freezes its leaderboard (ranks, tiers, provisional marks, ratings and games) as the "
    "season's standings, browsable for good, and starts the next season. A bot's first game of the new "
    "season starts from its rating carried over: Elo and mu kept, sigma widened to sqrt(sigma^2 + (0.5 * "
    "start sigma)^2), at most the start sigma; games and wins count from zero, so the new board lists "
    "only bots that played in the new season."
)


class SeasonSerializer(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    name = serializers.CharField()
    started_at = serializers.DateTimeField()
    closed_at = serializers.DateTimeField()
    bots = serializers.IntegerField(help_text="bots in the frozen standings")


class SeasonStandingSerializer(serializers.Serializer[Any]):
    position = serializers.IntegerField()
    rank = serializers.IntegerField()
    tier = serializers.IntegerField()
    provisional = serializers.BooleanField()
    bot = inline_serializer(
        "SeasonStandingBot", {"id": serializers.IntegerField(), "name": serializers.CharField()}
    )
    elo = serializers.FloatField()
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    conservative = serializers.FloatField()
    games = serializers.IntegerField()
    wins = serializers.IntegerField()


def _season(season: Season, bots: int | None = None) -> dict[str, Any]:
    return {
        "number": season.number,
        "name": season.name or f"Season {season.number}",
        "started_at": serializers.DateTimeField().to_representation(season.started_at),
        "closed_at": serializers.DateTimeField().to_representation(season.closed_at),
        "bots": bots if bots is not None else season.standings.count(),
    }


class LadderSeasonsApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        operation_id="ladders_seasons_list",
        description="The ladder's current season number and its closed seasons, newest first. "
        + SEASON_RULES,
        responses=inline_serializer(
            "LadderSeasons",
            {"current": serializers.IntegerField(), "closed": SeasonSerializer(many=True)},
        ),
    )
    def get(self, request: Request, ladder_id: int) -> Response:
        ladder = _ladder(ladder_id)
        closed = season_list(ladder_id=ladder.pk).annotate(bots=Count("standings"))
        return Response({"current": ladder.season, "closed": [_season(s, s.bots) for s in closed]})


class LadderSeasonDetailApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        description="A closed season's frozen standings. " + SEASON_RULES,
        responses=inline_serializer(
            "SeasonDetail",
            {"season": SeasonSerializer(), "standings": SeasonStandingSerializer(many=True)},
        ),
    )
    def get(self, request: Request, ladder_id: int, number: int) -> Response:
        ladder = _ladder(ladder_id)
        try:
            season = season_get(ladder_id=ladder.pk, number=number)
        except ObjectDoesNotExist as exc:
            raise NotFound(str(exc)) from exc
        rows = list(season_standings(season=season))
        standings = [
            {
                "position": r.position,
                "rank": r.rank,
                "tier": r.tier,
                "provisional": r.provisional,
                "bot": {"id": r.bot_id, "name": r.bot.name},
                "elo": round(r.elo, 2),
                "mu": round(r.mu, 4),
                "sigma": round(r.sigma, 4),
                "conservative": round(r.conservative, 4),
                "games": r.games,
                "wins": r.wins,
            }
            for r in rows
        ]
        return Response({"season": _season(season, len(rows)), "standings": standings})


class SeasonCloseInputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")


class LadderSeasonCloseApi(APIView):
    permission_classes = [permissions.IsAdminUser]

    @extend_schema(
        description="Staff: close the ladder's current season. " + SEASON_RULES,
        request=SeasonCloseInputSerializer,
        responses={201: SeasonSerializer},
    )
    def post(self, request: Request, ladder_id: int) -> Response:
        ladder = _ladder(ladder_id)
        data = SeasonCloseInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        season = season_close(ladder_id=ladder.pk, name=data.validated_data["name"])
        return Response(_season(season), status=status.HTTP_201_CREATED)
