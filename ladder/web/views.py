"""Web page views: thin, server-rendered. Reads through selectors, writes through services.

Layer: presentation. A bot's token appears in exactly one response (the one that created or rotated it),
sent with `Cache-Control: no-store`; it is never put in the session or a redirect.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_POST

from ladder.bots import services as bot_services
from ladder.bots.models import Bot
from ladder.core.throttles import auth_attempt_wait, too_many_attempts
from ladder.ladders.models import Ladder
from ladder.ladders.selectors import game_has_board, ladder_list
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.matches.selectors import match_list, match_live_watchable, match_secrets_revealed
from ladder.ratings.models import Rating
from ladder.ratings.selectors import bot_ratings, leaderboard_list, rating_history
from ladder.web.charts import Series, rating_chart_svg
from ladder.web.forms import BotForm, SignupForm


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        wait = auth_attempt_wait(request)
        if wait is not None:
            return too_many_attempts(request, wait)
        return super().post(request, *args, **kwargs)


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("web:my-bots")
    form = SignupForm(request.POST or None)
    if request.method == "POST":
        wait = auth_attempt_wait(request)
        if wait is not None:
            return too_many_attempts(request, wait)
        if form.is_valid():
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.username}. Register your first bot below.")
            return redirect("web:bot-new")
    return render(request, "registration/signup.html", {"form": form})


def home(request: HttpRequest) -> HttpResponse:
    ladders = list(
        ladder_list().annotate(
            rated=Count("ratings", filter=Q(ratings__games__gt=0, ratings__bot__active=True)),
            done=Count("matches", filter=Q(matches__status=MatchStatus.DONE), distinct=True),
        )
    )
    for ladder in ladders:
        ladder.top = list(leaderboard_list(ladder_id=ladder.pk)[:3])
    recent = list(match_list(status=MatchStatus.DONE)[:8])
    return render(request, "web/home.html", {"ladders": ladders, "recent": recent})


def leaderboard(request: HttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    paginator = Paginator(leaderboard_list(ladder_id=ladder.pk), 50)
    page = paginator.get_page(request.GET.get("page"))
    first_rank = (page.number - 1) * paginator.per_page
    rows = []
    previous = None
    rank = 0
    for offset, rating in enumerate(page.object_list):
        position = first_rank + offset + 1
        if previous is None:
            rank = (
                1
                + Rating.objects.filter(
                    ladder=ladder, bot__active=True, games__gte=1, elo__gt=rating.elo
                ).count()
            )
        elif rating.elo != previous:
            rank = position
        previous = rating.elo
        rows.append((rank, rating))
    recent = list(match_list(ladder_id=ladder.pk)[:10])
    return render(
        request, "web/leaderboard.html", {"ladder": ladder, "rows": rows, "page": page, "recent": recent}
    )


def bot_detail(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
    ratings = list(bot_ratings(bot_id=bot.pk))
    series = []
    for rating in ratings:
        history = rating_history(bot_id=bot.pk, ladder_id=rating.ladder_id, limit=500)
        if history:
            first_game = rating.games - len(history)
            points = [(first_game + i + 1, row.elo_after) for i, row in enumerate(history)]
            series.append(Series(rating.ladder.name, points, start=history[0].elo_before))
    chart = rating_chart_svg(series)
    matches = list(match_list(bot_id=bot.pk)[:20])
    is_owner = request.user.is_authenticated and request.user.pk == bot.owner_id
    return render(
        request,
        "web/bot_detail.html",
        {"bot": bot, "ratings": ratings, "chart": chart, "matches": matches, "is_owner": is_owner},
    )


def match_index(request: HttpRequest) -> HttpResponse:
    ladder_id = request.GET.get("ladder")
    status = request.GET.get("status")
    bot_id = request.GET.get("bot")
    filters = {}
    if ladder_id and ladder_id.isdigit():
        filters["ladder_id"] = int(ladder_id)
    if bot_id and bot_id.isdigit():
        filters["bot_id"] = int(bot_id)
    if status in MatchStatus.values:
        filters["status"] = status
    paginator = Paginator(match_list(**filters), 30)
    page = paginator.get_page(request.GET.get("page"))
    query = "&".join(f"{k}={v}" for k, v in (("ladder", ladder_id), ("status", status), ("bot", bot_id)) if v)
    return render(
        request,
        "web/match_list.html",
        {
            "page": page,
            "ladders": ladder_list(),
            "statuses": MatchStatus.choices,
            "selected": {"ladder": ladder_id or "", "status": status or "", "bot": bot_id or ""},
            "query": query,
        },
    )


def match_detail(request: HttpRequest, match_id: int) -> HttpResponse:
    matches = Match.objects.select_related("ladder").prefetch_related(
        Prefetch("seats", queryset=Seat.objects.select_related("bot", "bot__owner").order_by("index"))
    )
    match = get_object_or_404(matches, pk=match_id)
    seats = list(match.seats.all())
    revealed = match_secrets_revealed(match=match)
    has_replay = match.is_done and revealed
    live = match.status == MatchStatus.RUNNING and match_live_watchable(match=match)
    viewer = {
        "matchId": match.pk,
        "gameId": match.ladder.game_id,
        "family": game_family(match.ladder.game_id),
        "steps": match.steps or 0,
        "seats": [{"seat": s.index, "name": s.bot.name} for s in seats],
        "hasBoard": game_has_board(game_id=match.ladder.game_id),
        "api": "/api/v1/",
        "mode": "replay" if has_replay else "live" if live else "none",
    }
    context = {
        "match": match,
        "seats": seats,
        "viewer_json": json.dumps(viewer),
        "revealed": revealed,
        "has_replay": has_replay,
        "live": live,
        "family": viewer["family"],
    }
    return render(request, "web/match_detail.html", context)


def game_family(game_id: str) -> str:
    """The name of a game's viewer files under static/web/games/ (its id without the version)."""
    return game_id.rsplit("-v", 1)[0]


@login_required
def my_bots(request: HttpRequest) -> HttpResponse:
    bots = Bot.objects.filter(owner=request.user).order_by("-active", "name")
    return render(request, "web/my_bots.html", {"bots": bots})


def _token_page(request: HttpRequest, bot: Bot, token: str, created: bool) -> HttpResponse:
    response = render(request, "web/bot_token.html", {"bot": bot, "token": token, "created": created})
    add_never_cache_headers(response)
    response["Cache-Control"] = "no-store"
    return response


@login_required
def bot_new(request: HttpRequest) -> HttpResponse:
    form = BotForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            bot, token = bot_services.bot_create(owner=request.user, **form.cleaned_data)
        except ValidationError as exc:
            for field, errors in (
                exc.message_dict.items() if hasattr(exc, "error_dict") else [(None, exc.messages)]
            ):
                for error in errors:
                    form.add_error(field if field in form.fields else None, error)
        else:
            return _token_page(request, bot, token, created=True)
    return render(request, "web/bot_form.html", {"form": form, "editing": None})


@login_required
def bot_edit(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = get_object_or_404(Bot, pk=bot_id)
    if bot.owner_id != request.user.pk:
        raise PermissionDenied("only the owner may edit this bot")
    initial = {
        "name": bot.name,
        "games": bot.games,
        "description": bot.description,
        "max_concurrent": bot.max_concurrent,
    }
    form = BotForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            bot_services.bot_update(bot_id=bot.pk, user=request.user, **form.cleaned_data)
        except ValidationError as exc:
            for field, errors in (
                exc.message_dict.items() if hasattr(exc, "error_dict") else [(None, exc.messages)]
            ):
                for error in errors:
                    form.add_error(field if field in form.fields else None, error)
        else:
            messages.success(request, "Saved.")
            return redirect("web:bot", bot_id=bot.pk)
    return render(request, "web/bot_form.html", {"form": form, "editing": bot})


@login_required
@require_POST
def bot_action(request: HttpRequest, bot_id: int, action: str) -> HttpResponse:
    bot = get_object_or_404(Bot, pk=bot_id)
    if bot.owner_id != request.user.pk:
        raise PermissionDenied("only the owner may change this bot")
    try:
        if action == "rotate":
            bot, token = bot_services.bot_token_rotate(bot_id=bot.pk, user=request.user)
            return _token_page(request, bot, token, created=False)
        if action == "revoke":
            bot_services.bot_token_revoke(bot_id=bot.pk, user=request.user)
            messages.success(request, "Token revoked: the bot is disconnected until you rotate a new token.")
        elif action == "retire":
            bot_services.bot_retire(bot_id=bot.pk, user=request.user)
            messages.success(request, f"{bot.name} is retired.")
        else:
            raise Http404("unknown action")
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect("web:bot", bot_id=bot.pk)
