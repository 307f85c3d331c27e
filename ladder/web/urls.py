"""URLs of the web pages."""

from django.contrib.auth import views as auth_views
from django.urls import path

from ladder.web import game_views, practice_views, views

app_name = "web"

urlpatterns = [
    path("", views.home, name="home"),
    path("ladders/<slug:slug>/", views.leaderboard, name="leaderboard"),
    path("ladders/<slug:slug>/seasons/<int:number>/", views.season_detail, name="season"),
    path("games/<str:game_id>/", game_views.game_reference_page, name="game-reference"),
    path("bots/new/", views.bot_new, name="bot-new"),
    path("bots/<int:bot_id>/", views.bot_detail, name="bot"),
    path("bots/<int:bot_id>/edit/", views.bot_edit, name="bot-edit"),
    path("bots/<int:bot_id>/versions/", views.bot_version, name="bot-version"),
    path("bots/<int:bot_id>/practice/", practice_views.practice_new, name="bot-practice"),
    path("bots/<int:bot_id>/token/", views.bot_token, name="bot-token"),
    path("bots/<int:bot_id>/<str:action>/", views.bot_action, name="bot-action"),
    path("me/bots/", views.my_bots, name="my-bots"),
    path("compare/", views.compare, name="compare"),
    path("matches/", views.match_index, name="matches"),
    path("matches/<int:match_id>/", views.match_detail, name="match"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("signup/", views.signup, name="signup"),
]
