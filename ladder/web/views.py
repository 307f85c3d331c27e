"""Web page views: thin, server-rendered. Reads through selectors, writes through services.

Layer: presentation. A bot's token appears in exactly one response: registering or rotating (a POST)
keeps the new token in the session and redirects to the bot's token page (Post/Redirect/Get, so a reload
never registers or rotates again); that page pops it, shows it once with `Cache-Control: no-store`, and a
reload says it was already shown. A token is never put in a URL, a message or a log. Rotating, revoking and
retiring ask first: GET shows what will happen, POST with `confirm=yes` does it.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods, require_POST

from ladder.bots import services as bot_services
from ladder.bots.models import Bot
from ladder.bots.presence import bot_presence, bots_presence
from ladder.bots.selectors import (
    RECENT_MATCHES,
    bot_fault_summary,
    bot_matches_in_progress,
    bots_in_progress_counts,
)
from ladder.bots.versions import bot_version_set, bot_versions, version_games
from ladder.core.throttles import auth_attempt_wait, too_many_attempts
from ladder.core.users import request_user
from ladder.ladders.capacity import held_tables
from ladder.ladders.models import Ladder
from ladder.ladders.selectors import game_has_board, ladder_list, ladder_list_with_counts
from ladder.matches.incidents import match_incident_summary
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.matches.selectors import match_list, match_live_watchable, match_secrets_revealed
from ladder.ratings.audit import match_rating_changes
from ladder.ratings.models import Rating, RatingLedger
from ladder.ratings.seasons import season_get, season_list, season_standings
from ladder.ratings.selectors import (
    LeaderboardPages,
    bot_ratings,
    bot_standings,
    head_to_head,
    leaderboard_page,
    rating_history,
    seat_statistics,
)
from ladder.ratings.standing import RANKING_RULES, rating_interval
from ladder.web.charts import PALETTE, Marker, Panel, Point, Series, rating_panels_svg
from ladder.web.compare import CompareForm
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
    # (ladder, its top three) per ladder
    ladders = [
        (ladder, leaderboard_page(ladder=ladder, limit=3).rows) for ladder in ladder_list_with_counts()
    ]
    recent = list(match_list(status=MatchStatus.DONE)[:8])
    held = held_tables()
    for ladder, _ in ladders:
        ladder.held_tables = held.per_ladder.get(ladder.slug, 0)  # type: ignore[attr-defined]
    context = {"ladders": ladders, "recent": recent, "held": held}
    return render(request, "web/home.html", context)


def leaderboard(request: HttpRequest, slug: str) -> HttpResponse:
    ladder = get_object_or_404(Ladder, slug=slug)
    paginator = Paginator(LeaderboardPages(ladder=ladder), 50)  # one page read, not the whole board
    page = paginator.get_page(request.GET.get("page"))
    seats = seat_statistics(ladder=ladder)
    recent = list(match_list(ladder_id=ladder.pk)[:10])
    context = {
        "ladder": ladder,
        "rows": page.object_list,
        "page": page,
        "seats": seats,
        "seat_matches": seats[0].games if seats else 0,
        "fair_share": 1 / ladder.num_players,
        "rules": RANKING_RULES,
        "seasons": list(season_list(ladder_id=ladder.pk)),
        "recent": recent,
    }
    return render(request, "web/leaderboard.html", context)


def season_detail(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """A closed season's frozen standings."""
    ladder = get_object_or_404(Ladder, slug=slug)
    try:
        season = season_get(ladder_id=ladder.pk, number=number)
    except ObjectDoesNotExist as exc:
        raise Http404(str(exc)) from exc
    context = {
        "ladder": ladder,
        "season": season,
        "standings": list(season_standings(season=season)),
        "seasons": list(season_list(ladder_id=ladder.pk)),
    }
    return render(request, "web/season.html", context)


CHART_Y_LABEL = "OpenSkill \u03bc and \u03bc \u2212 3\u03c3"


def _history_points(rows: list[RatingLedger], first_game: int, *, label: str) -> list[Point]:
    """Chart points from ledger rows: OpenSkill mu with its interval, the conservative rating the board ranks
    by, a hover text per game."""
    points = []
    for i, row in enumerate(rows):
        low, high = rating_interval(row.mu_after, row.sigma_after)
        when = row.created_at.astimezone(dt.UTC).strftime("%d %b %Y %H:%M UTC")
        points.append(
            Point(
                row.created_at,
                row.mu_after,
                low,
                high,
                f"{label} · {when} · game {first_game + i + 1} (match {row.match_id}, rank {row.rank})"
                f"{' · version ' + row.version if row.version else ''} · "
                f"μ {row.mu_after:.2f} ± {2 * row.sigma_after:.2f} · conservative "
                f"{row.conservative_after:.2f} · Elo {row.elo_after:.0f}",
                ranked=row.conservative_after,
            )
        )
    return points


def _version_markers(rows: list[RatingLedger]) -> list[Marker]:
    """A marker at each game where the bot's reported version changes."""
    markers = []
    current = ""
    for row in rows:
        if row.version and row.version != current:
            markers.append(Marker(row.created_at, f"v {row.version}"))
            current = row.version
    return markers


def _bot_series(
    bot: Bot, rating: Rating, *, color: str | None = None, label: str = ""
) -> tuple[Series, list[Marker]] | None:
    history = rating_history(bot_id=bot.pk, ladder_id=rating.ladder_id, limit=500)
    if not history:
        return None
    label = label or rating.ladder.name
    points = _history_points(history, rating.games - len(history), label=label)
    return Series(label, points, color=color), _version_markers(history)


def bot_detail(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
    ratings = list(bot_ratings(bot_id=bot.pk))
    standings = bot_standings(bot_id=bot.pk)
    panels = []
    for index, rating in enumerate(ratings):
        drawn = _bot_series(bot, rating, color=PALETTE[index % len(PALETTE)])
        if drawn is not None:
            series, markers = drawn
            panels.append(Panel(rating.ladder.name, [series], markers=markers, y_label=CHART_Y_LABEL))
    chart = rating_panels_svg(panels, label=f"{bot.name}: rating history per ladder")
    ladder_names = {r.ladder_id: r.ladder for r in ratings}
    versus = [(ladder_names.get(h.ladder_id), h) for h in head_to_head(bot_id=bot.pk)]
    matches = list(match_list(bot_id=bot.pk)[:20])
    is_owner = request.user.is_authenticated and request.user.pk == bot.owner_id
    games = version_games(bot_id=bot.pk)
    versions = [(v, games.get(v.name, 0)) for v in bot_versions(bot_id=bot.pk)]
    context = {
        "bot": bot,
        "ratings": [(r, standings.get(r.ladder_id)) for r in ratings],  # (rating, standing or None)
        "chart": chart,
        "versions": versions,
        "versus": versus,
        "matches": matches,
        "is_owner": is_owner,
        "presence": bot_presence(bot_id=bot.pk),
        "fault_summary": bot_fault_summary(bot_id=bot.pk, recent=20),
        "recent_matches": RECENT_MATCHES,
        "in_progress": bot_matches_in_progress(bot_id=bot.pk),
    }
    return render(request, "web/bot_detail.html", context)


@login_required
@require_POST
def bot_version(request: HttpRequest, bot_id: int) -> HttpResponse:
    """The owner announces a version or sets its "reset rating" choice (until it has a rated game)."""
    bot = get_object_or_404(Bot, pk=bot_id)
    try:
        version = bot_version_set(
            bot_id=bot.pk,
            user=request_user(request),
            name=request.POST.get("name", ""),
            reset_rating=request.POST.get("reset_rating") == "on",
        )
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    else:
        start = "the ladder's start rating" if version.reset_rating else "its parent's rating, sigma widened"
        messages.success(request, f"Version {version.name} starts from {start}.")
    return redirect("web:bot", bot_id=bot.pk)


def compare(request: HttpRequest) -> HttpResponse:
    """Two bots side by side: ratings on the ladders both play, their head-to-head, their histories."""
    both = "a" in request.GET and "b" in request.GET
    form = CompareForm(request.GET if both else None, initial={"a": request.GET.get("a")})
    context: dict[str, Any] = {"form": form}
    if form.is_bound and form.is_valid():
        a, b = form.cleaned_data["a"], form.cleaned_data["b"]
        context.update(a=a, b=b, ladders=[])
        a_ratings = {r.ladder_id: r for r in bot_ratings(bot_id=a.pk)}
        b_ratings = {r.ladder_id: r for r in bot_ratings(bot_id=b.pk)}
        a_standings, b_standings = bot_standings(bot_id=a.pk), bot_standings(bot_id=b.pk)
        meetings = {h.ladder_id: h for h in head_to_head(bot_id=a.pk, opponent_id=b.pk)}
        for ladder_id in sorted(set(a_ratings) & set(b_ratings), key=lambda i: a_ratings[i].ladder.name):
            ra, rb = a_ratings[ladder_id], b_ratings[ladder_id]
            series = [
                drawn[0]
                for drawn in (
                    _bot_series(a, ra, color=PALETTE[0], label=a.name),
                    _bot_series(b, rb, color=PALETTE[1], label=b.name),
                )
                if drawn is not None
            ]
            chart = rating_panels_svg(
                [Panel(ra.ladder.name, series, y_label=CHART_Y_LABEL)],
                label=f"{a.name} and {b.name} on {ra.ladder.name}",
            )
            context["ladders"].append(
                {
                    "ladder": ra.ladder,
                    "rows": [(a, ra, a_standings.get(ladder_id)), (b, rb, b_standings.get(ladder_id))],
                    "a_standing": a_standings.get(ladder_id),
                    "b_standing": b_standings.get(ladder_id),
                    "meeting": meetings.get(ladder_id),
                    "chart": chart,
                }
            )
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(request, "web/compare.html", context, status=status)


def match_index(request: HttpRequest) -> HttpResponse:
    ladder_id = request.GET.get("ladder")
    status = request.GET.get("status")
    bot_id = request.GET.get("bot")
    matches = match_list(
        ladder_id=int(ladder_id) if ladder_id and ladder_id.isdigit() else None,
        bot_id=int(bot_id) if bot_id and bot_id.isdigit() else None,
        status=status if status in MatchStatus.values else None,
    )
    paginator = Paginator(matches, 30)
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
        "incident_summary": match_incident_summary(match=match),
        "rating_changes": match_rating_changes(match_id=match.pk),
    }
    return render(request, "web/match_detail.html", context)


def game_family(game_id: str) -> str:
    """The name of a game's viewer files under static/web/games/ (its id without the version)."""
    return game_id.rsplit("-v", 1)[0]


@login_required
def my_bots(request: HttpRequest) -> HttpResponse:
    """The owner's bots at a glance: connected now, matches in progress, recent faults, best rating."""
    bots = list(Bot.objects.filter(owner=request_user(request)).order_by("-active", "name"))
    ids = [bot.pk for bot in bots]
    presence = bots_presence(bot_ids=ids)
    in_progress = bots_in_progress_counts(bot_ids=ids)
    best: dict[int, Rating] = {}
    ladders: dict[int, int] = {}
    for rating in Rating.objects.filter(bot_id__in=ids, games__gte=1).select_related("ladder"):
        ladders[rating.bot_id] = ladders.get(rating.bot_id, 0) + 1
        if rating.bot_id not in best or rating.conservative > best[rating.bot_id].conservative:
            best[rating.bot_id] = rating
    rows = [
        {
            "bot": bot,
            "presence": presence[bot.pk],
            "in_progress": in_progress[bot.pk],
            "faults": bot_fault_summary(bot_id=bot.pk, recent=0),
            "best": best.get(bot.pk),
            "ladders": ladders.get(bot.pk, 0),
        }
        for bot in bots
    ]
    return render(request, "web/my_bots.html", {"rows": rows, "recent_matches": RECENT_MATCHES})


TOKEN_SESSION_KEY = "bot-token:{bot_id}"  # the session entry holding a new token until its one display
TOKEN_PLACEHOLDER = "YOUR_TOKEN"


def _keep_token_for_display(request: HttpRequest, bot: Bot, token: str, *, created: bool) -> HttpResponse:
    """Post/Redirect/Get: the new token waits in the session for the token page, which pops it."""
    request.session[TOKEN_SESSION_KEY.format(bot_id=bot.pk)] = {"token": token, "created": created}
    return redirect("web:bot-token", bot_id=bot.pk)


def connect_commands(*, address: str, token: str, bot: Bot) -> list[dict[str, str]]:
    """Copy-paste commands that connect `bot` to the gateway at `address` with `token` (BOTS.md), asking
    for as many matches at once as the bot is registered for (`max_concurrent`)."""
    target, secret, n = shlex.quote(address), shlex.quote(token), bot.max_concurrent
    return [
        {
            "id": "python",
            "label": "Python SDK example (pip install -e clients/python first)",
            "command": f"python clients/python/examples/random_bot.py --target {target} --token {secret} "
            f"--concurrent {n}",
        },
        {
            "id": "node",
            "label": "Node bot (cd clients/node && npm ci first; run from the repository root)",
            "command": f"node clients/node/bot.js --target {target} --token {secret} --concurrent {n}",
        },
        {
            "id": "caravan-gateway",
            "label": "caravan (pip install -e . first): the gateway's health, then a check of the token "
            "(its Welcome and the round trip; run it before your bot starts)",
            "command": f"caravan gateway health --target {target}\n"
            f"caravan gateway hello --target {target} --token {secret} --concurrent {n}",
        },
    ]


def _token_page(request: HttpRequest, bot: Bot, token: str | None, created: bool) -> HttpResponse:
    address = settings.LADDER_GATEWAY_PUBLIC_ADDR
    context = {
        "bot": bot,
        "token": token,
        "created": created,
        "gateway_address": address,
        "commands": connect_commands(address=address, token=token or TOKEN_PLACEHOLDER, bot=bot),
        "max_concurrent_limit": bot_services.MAX_CONCURRENT_LIMIT,
    }
    response = render(request, "web/bot_token.html", context)
    add_never_cache_headers(response)
    response["Cache-Control"] = "no-store"
    return response


@login_required
def bot_token(request: HttpRequest, bot_id: int) -> HttpResponse:
    """The token page: the new token once (popped from the session), then "already shown" on a reload."""
    bot = get_object_or_404(Bot, pk=bot_id)
    if bot.owner_id != request.user.pk:
        raise PermissionDenied("only the owner may see this bot's token page")
    kept = request.session.pop(TOKEN_SESSION_KEY.format(bot_id=bot.pk), None)
    token = kept.get("token") if isinstance(kept, dict) else None
    created = bool(kept.get("created")) if isinstance(kept, dict) else False
    if not isinstance(token, str) or bot_services.token_hash(token) != bot.token_hash:
        token = None  # shown already, or replaced or revoked since
    return _token_page(request, bot, token, created)


def _form_errors(form: BotForm, exc: ValidationError) -> None:
    for field, errors in exc.message_dict.items() if hasattr(exc, "error_dict") else [(None, exc.messages)]:
        for error in errors:
            form.add_error(field if field in form.fields else None, error)


@login_required
def bot_new(request: HttpRequest) -> HttpResponse:
    form = BotForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            bot, token = bot_services.bot_create(owner=request_user(request), **form.cleaned_data)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            return _keep_token_for_display(request, bot, token, created=True)
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
        "accepts_challenges": bot.accepts_challenges,
    }
    form = BotForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            bot_services.bot_update(bot_id=bot.pk, user=request.user, **form.cleaned_data)
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, "Saved.")
            return redirect("web:bot", bot_id=bot.pk)
    return render(request, "web/bot_form.html", {"form": form, "editing": bot})


@dataclass(frozen=True)
class BotAction:
    """What a confirmation page of an owner's action says: its title, its button, and whether it is red."""

    title: str  # with {name}
    button: str
    danger: bool


BOT_ACTIONS = {
    "rotate": BotAction("Rotate the token of {name}?", "Rotate the token", danger=False),
    "revoke": BotAction("Revoke the token of {name}?", "Revoke the token", danger=True),
    "retire": BotAction("Retire {name} for good?", "Retire the bot", danger=True),
}


@login_required
@require_http_methods(["GET", "POST"])
def bot_action(request: HttpRequest, bot_id: int, action: str) -> HttpResponse:
    """Rotate, revoke or retire: GET shows what will happen; POST with `confirm=yes` does it (a POST
    without it gets the same page, 400, and changes nothing)."""
    bot = get_object_or_404(Bot, pk=bot_id)
    if action not in BOT_ACTIONS:
        raise Http404("unknown action")
    if bot.owner_id != request.user.pk:
        raise PermissionDenied("only the owner may change this bot")
    if not bot.active:
        messages.error(request, f"{bot.name} is retired: nothing more can change.")
        return redirect("web:bot", bot_id=bot.pk)
    if action == "revoke" and not bot.has_token:
        messages.error(request, f"{bot.name} has no token to revoke.")
        return redirect("web:bot", bot_id=bot.pk)
    if request.method == "GET" or request.POST.get("confirm") != "yes":
        in_progress = bot_matches_in_progress(bot_id=bot.pk, limit=1000)
        context = {
            "bot": bot,
            "action": action,
            "title": BOT_ACTIONS[action].title.format(name=bot.name),
            "button": BOT_ACTIONS[action].button,
            "danger": BOT_ACTIONS[action].danger,
            "presence": bot_presence(bot_id=bot.pk),
            "running": sum(m.status == MatchStatus.RUNNING for m in in_progress),
            "queued": sum(m.status == MatchStatus.QUEUED for m in in_progress),
            "unconfirmed": request.method == "POST",
        }
        status = 400 if request.method == "POST" else 200
        return render(request, "web/bot_confirm.html", context, status=status)
    try:
        if action == "rotate":
            bot, token = bot_services.bot_token_rotate(bot_id=bot.pk, user=request.user)
            return _keep_token_for_display(request, bot, token, created=False)
        request.session.pop(TOKEN_SESSION_KEY.format(bot_id=bot.pk), None)  # a token not shown yet dies
        if action == "revoke":
            bot_services.bot_token_revoke(bot_id=bot.pk, user=request.user)
            messages.success(request, "Token revoked: the bot is disconnected until you issue a new token.")
        else:
            bot_services.bot_retire(bot_id=bot.pk, user=request.user)
            messages.success(request, f"{bot.name} is retired.")
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect("web:bot", bot_id=bot.pk)
