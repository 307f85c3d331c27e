"""Tournament API routes, included under /api/v1/ by `ladder.api_urls`."""

from django.urls import path

from ladder.tournaments import apis

urlpatterns = [
    path("tournaments/", apis.TournamentListApi.as_view(), name="tournament-list"),
    path("tournaments/<int:tournament_id>/", apis.TournamentDetailApi.as_view(), name="tournament-detail"),
]
