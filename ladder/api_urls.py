"""The public REST API, version 1 (`/api/v1/`, whose root lists every endpoint). A breaking change gets a
`v2` module beside this one. Swagger UI (`docs/`) and ReDoc (`redoc/`) load pinned, installed assets."""

from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from ladder.accounts import apis as accounts
from ladder.analysis import apis as analysis
from ladder.bots import apis as bots
from ladder.bots import version_apis as bot_versions
from ladder.core.root import ApiRootApi
from ladder.hosting import apis as hosting
from ladder.ladders import apis as ladders
from ladder.matches import apis as matches
from ladder.matches import status_apis as match_status
from ladder.ratings import apis as ratings
from ladder.ratings import audit_apis as rating_audit
from ladder.replays import apis as replays
from ladder.replays import dataset_apis as replay_dataset
from ladder.replays import debug_apis as replay_debug

app_name = "api-v1"

urlpatterns: list[URLPattern | URLResolver] = [
    path("", ApiRootApi.as_view(), name="root"),
    path("schema/", SpectacularAPIView.as_view(api_version="v1"), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-v1:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api-v1:schema"), name="redoc"),
    path("auth/token/", accounts.AuthTokenApi.as_view(), name="auth-token"),
    path("auth/token/rotate/", accounts.AuthTokenRotateApi.as_view(), name="auth-token-rotate"),
    path("auth/token/revoke/", accounts.AuthTokenRevokeApi.as_view(), name="auth-token-revoke"),
    path("auth/me/", accounts.MeApi.as_view(), name="auth-me"),
    path("games/", ladders.GameListApi.as_view(), name="game-list"),
    path("games/<str:game_id>/", ladders.GameDetailApi.as_view(), name="game-detail"),
    path("games/<str:game_id>/board/", ladders.GameBoardApi.as_view(), name="game-board"),
    path("games/<str:game_id>/schema/", ladders.GameSchemaApi.as_view(), name="game-schema"),
    path("ladders/", ladders.LadderListApi.as_view(), name="ladder-list"),
    path("ladders/<int:ladder_id>/", ladders.LadderDetailApi.as_view(), name="ladder-detail"),
    path("ladders/<int:ladder_id>/leaderboard/", ladders.LeaderboardApi.as_view(), name="leaderboard"),
    path("ladders/<int:ladder_id>/seats/", ratings.LadderSeatsApi.as_view(), name="ladder-seats"),
    path(
        "ladders/<int:ladder_id>/dataset/", replay_dataset.LadderDatasetApi.as_view(), name="ladder-dataset"
    ),
    path("ladders/<int:ladder_id>/seasons/", ratings.LadderSeasonsApi.as_view(), name="ladder-seasons"),
    path(
        "ladders/<int:ladder_id>/seasons/close/",
        ratings.LadderSeasonCloseApi.as_view(),
        name="ladder-season-close",
    ),
    path(
        "ladders/<int:ladder_id>/seasons/<int:number>/",
        ratings.LadderSeasonDetailApi.as_view(),
        name="ladder-season",
    ),
    path("bots/", bots.BotListApi.as_view(), name="bot-list"),
    path("bots/<int:bot_id>/", bots.BotDetailApi.as_view(), name="bot-detail"),
    path("bots/<int:bot_id>/retire/", bots.BotRetireApi.as_view(), name="bot-retire"),
    path("bots/<int:bot_id>/token/rotate/", bots.BotTokenRotateApi.as_view(), name="bot-token-rotate"),
    path("bots/<int:bot_id>/token/revoke/", bots.BotTokenRevokeApi.as_view(), name="bot-token-revoke"),
    path("bots/<int:bot_id>/ratings/", bots.BotRatingsApi.as_view(), name="bot-ratings"),
    path("bots/<int:bot_id>/history/", bots.BotHistoryApi.as_view(), name="bot-history"),
    path("bots/<int:bot_id>/versions/", bot_versions.BotVersionsApi.as_view(), name="bot-versions"),
    path("bots/<int:bot_id>/hosted/", hosting.HostedStatusApi.as_view(), name="bot-hosted"),
    path(
        "bots/<int:bot_id>/hosted/versions/", hosting.HostedVersionsApi.as_view(), name="bot-hosted-versions"
    ),
    path("bots/<int:bot_id>/head-to-head/", ratings.BotHeadToHeadApi.as_view(), name="bot-head-to-head"),
    path("bots/<int:bot_id>/compare/<int:other_id>/", ratings.BotCompareApi.as_view(), name="bot-compare"),
    path("matches/", matches.MatchListApi.as_view(), name="match-list"),
    path("matches/<int:match_id>/", matches.MatchDetailApi.as_view(), name="match-detail"),
    path("matches/<int:match_id>/status/", match_status.MatchStatusApi.as_view(), name="match-status"),
    path("practice/", matches.PracticeMatchListApi.as_view(), name="practice-list"),
    path("matches/<int:match_id>/replay/", replays.ReplayRecordApi.as_view(), name="match-replay"),
    path("matches/<int:match_id>/frames/", replays.ReplayFramesApi.as_view(), name="match-frames"),
    path("matches/<int:match_id>/frames/<int:step>/", replays.ReplayFrameApi.as_view(), name="match-frame"),
    path("matches/<int:match_id>/index/", replays.ReplayIndexApi.as_view(), name="match-index"),
    path("matches/<int:match_id>/moves/", replays.ReplayMovesApi.as_view(), name="match-moves"),
    path("matches/<int:match_id>/live/", replays.LiveFrameApi.as_view(), name="match-live"),
    path("matches/<int:match_id>/debug/", replay_debug.DecisionDebugApi.as_view(), name="match-debug"),
    path("matches/<int:match_id>/analysis/", analysis.MatchAnalysisApi.as_view(), name="match-analysis"),
    path(
        "matches/<int:match_id>/rating-change/",
        rating_audit.MatchRatingChangeApi.as_view(),
        name="match-rating-change",
    ),
    path("ratings/audit/", rating_audit.RatingsAuditApi.as_view(), name="ratings-audit"),
    path("", include("ladder.tournaments.api_urls")),
]
