"""Server-rendered pages: they render real data, registration shows the token once, owners alone change
their bots, and the rating chart is drawn."""

from __future__ import annotations

import pytest
from django.test import Client

from ladder.bots.models import Bot
from ladder.bots.selectors import bot_identity_for_token
from ladder.bots.services import bot_retire
from ladder.matches.services import (
    match_create,
    match_mark_running,
    match_record_infrastructure_failure,
)
from ladder.web.charts import Series, rating_chart_svg
from tests.ladder.conftest import play

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def some_matches(ladder2, ladder4, make_bot):
    bots = [make_bot(name=f"Caravan {i}") for i in range(4)]
    matches = [play(ladder4, bots, 31), play(ladder2, bots[:2], 32), play(ladder2, bots[1:3], 33)]
    return bots, matches


def test_home_and_leaderboard(client, some_matches, ladder2):
    home = client.get("/")
    assert home.status_code == 200 and b"Expedition, 2 players" in home.content
    board = client.get(f"/ladders/{ladder2.slug}/")
    assert board.status_code == 200
    html = board.content.decode()
    assert "Caravan 1" in html and 'id="leaderboard"' in html
    assert client.get("/ladders/nope/").status_code == 404


def test_bot_page_has_chart(client, some_matches):
    bot = some_matches[0][1]
    page = client.get(f"/bots/{bot.pk}/")
    html = page.content.decode()
    assert page.status_code == 200 and "<svg" in html and "polyline" in html
    assert "Rotate token" not in html  # not the owner


def test_match_pages(client, some_matches):
    match = some_matches[1][0]
    listing = client.get("/matches/?status=DONE")
    assert listing.status_code == 200 and f"#{match.pk}" in listing.content.decode()
    assert client.get("/matches/?status=bogus&ladder=x&page=zz").status_code == 200
    detail = client.get(f"/matches/{match.pk}/")
    html = detail.content.decode()
    assert detail.status_code == 200 and 'id="viewer"' in html and "replay.js" in html
    assert client.get("/matches/999999/").status_code == 404


def test_register_shows_token_once(client, alice_client):
    assert client.get("/bots/new/").status_code == 302  # login first
    posted = alice_client.post(
        "/bots/new/", {"name": "Polo", "games": ["expedition-v1"], "description": "", "max_concurrent": 2}
    )
    assert posted.status_code == 302  # Post/Redirect/Get: the token page shows it
    page = alice_client.get(posted["Location"])
    assert page.status_code == 200 and page["Cache-Control"] == "no-store"
    token = page.context["token"]
    assert token in page.content.decode()
    bot = Bot.objects.get(name="Polo")
    assert bot_identity_for_token(token=token).bot_id == bot.pk
    again = alice_client.get(f"/bots/{bot.pk}/")
    assert token not in again.content.decode() and "Rotate token" in again.content.decode()


def test_register_form_errors(alice_client, make_bot):
    make_bot(name="Taken")
    page = alice_client.post("/bots/new/", {"name": "taken", "games": ["expedition-v1"], "max_concurrent": 1})
    assert page.status_code == 200 and "already exists" in page.content.decode()
    page = alice_client.post("/bots/new/", {"name": "Fine", "games": [], "max_concurrent": 1})
    assert page.status_code == 200 and "This field is required" in page.content.decode()


def test_owner_actions(alice_client, other_user, make_bot):
    bot = make_bot()
    rotated = alice_client.post(f"/bots/{bot.pk}/rotate/", {"confirm": "yes"}, follow=True)
    assert rotated.status_code == 200 and rotated.context["token"].startswith("cvs_")
    assert alice_client.post(f"/bots/{bot.pk}/revoke/", {"confirm": "yes"}).status_code == 302
    bot.refresh_from_db()
    assert bot.token_hash is None
    intruder = Client()
    intruder.force_login(other_user)
    assert intruder.post(f"/bots/{bot.pk}/retire/").status_code == 403
    assert intruder.get(f"/bots/{bot.pk}/edit/").status_code == 403
    assert alice_client.get(f"/bots/{bot.pk}/rotate/").status_code == 200  # the confirmation page
    assert alice_client.put(f"/bots/{bot.pk}/rotate/").status_code == 405
    assert alice_client.post(f"/bots/{bot.pk}/explode/").status_code == 404
    assert alice_client.post(f"/bots/{bot.pk}/retire/", {"confirm": "yes"}).status_code == 302
    bot.refresh_from_db()
    assert not bot.active


def test_edit(alice_client, make_bot):
    bot = make_bot()
    response = alice_client.post(
        f"/bots/{bot.pk}/edit/",
        {"name": "Renamed", "games": ["expedition-v1"], "description": "x", "max_concurrent": 3},
    )
    assert response.status_code == 302
    bot.refresh_from_db()
    assert (bot.name, bot.max_concurrent) == ("Renamed", 3)


def test_signup_login_logout(client, user):
    response = client.post(
        "/signup/",
        {"username": "carol", "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"},
    )
    assert response.status_code == 302 and response["Location"] == "/bots/new/"
    client.post("/logout/")
    assert (
        client.post("/login/", {"username": "alice", "password": "correct-horse-battery"}).status_code == 302
    )
    assert client.get("/me/bots/").status_code == 200


def test_login_is_throttled(client, user, settings, auth_window):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"auth": "20/min"}}
    codes = [
        client.post("/login/", {"username": "alice", "password": "wrong"}).status_code for _ in range(22)
    ]
    assert codes[0] == 200 and codes[-1] == 429


def test_admin_and_health(client, staff_user, some_matches):
    staff_user.is_superuser = True
    staff_user.save()
    client.force_login(staff_user)
    for url in ("/admin/", "/admin/matches/match/", "/admin/ratings/ratingledger/", "/admin/bots/bot/"):
        assert client.get(url).status_code == 200, url
    assert client.get("/healthz").json() == {"status": "ok"}


def test_chart_svg():
    empty = rating_chart_svg([])
    assert "No rated games yet" in empty
    svg = rating_chart_svg([Series("Ladder <2p>", [(1, 1516.0), (2, 1501.2)], start=1500.0)])
    assert svg.startswith("<svg") and "polyline" in svg and "Ladder &lt;2p&gt;" in svg


def test_home_counts_each_bot_and_match_once(client, ladder2, ladder4, make_bot, house_bots):
    """Several rating rows per bot (two ladders) and several matches per bot: counted once each."""
    bots = [make_bot(name=f"Counter {i}") for i in range(4)]
    for seed in range(1, 7):
        play(ladder2, [bots[seed % 3], bots[(seed + 1) % 3]], 200 + seed)
    play(ladder4, bots, 300)
    play(ladder4, bots[::-1], 301)
    retired = make_bot(name="Gone")
    play(ladder2, [retired, bots[0]], 400)
    bot_retire(bot_id=retired.pk)
    page = client.get("/")
    cards = {ladder.pk: ladder for ladder, _top in page.context["ladders"]}  # (ladder, its top three)
    assert (cards[ladder2.pk].rated_bots, cards[ladder2.pk].done_matches) == (3, 7)
    assert (cards[ladder4.pk].rated_bots, cards[ladder4.pk].done_matches) == (4, 2)
    html = page.content.decode()
    assert "3 rated bots" in html and "7 matches" in html and "4 rated bots" in html and "2 matches" in html
    listed = {r["id"]: r["rated_bots"] for r in client.get("/api/v1/ladders/").json()}
    assert listed[ladder2.pk] == 3 and listed[ladder4.pk] == 4
    assert "waiting to start" not in html
    running = match_create(ladder_id=ladder2.pk, bot_ids=[bots[0].pk, bots[1].pk], seed=500)
    match_mark_running(match_id=running.pk)
    match_create(ladder_id=ladder2.pk, bot_ids=[bots[1].pk, bots[2].pk], seed=501)  # queued
    match_create(ladder_id=ladder2.pk, bot_ids=[bots[2].pk, bots[0].pk], seed=502)
    assert "1 playing · 2 waiting to start" in client.get("/").content.decode()


def test_leaderboard_shows_rules_marks_and_seat_statistics(client, some_matches, ladder2):
    html = client.get(f"/ladders/{ladder2.slug}/").content.decode()
    assert 'id="ranking-rules"' in html and "\u03bc \u2212 3\u03c3" in html and "Wilson" in html
    assert "provisional" in html and 'data-tier="1"' in html
    assert 'id="seat-stats"' in html and "Seat 0 moves first" in html


def test_bot_page_statistics_and_compare(client, some_matches, ladder2, ladder4):
    bots = some_matches[0]
    html = client.get(f"/bots/{bots[1].pk}/").content.decode()
    assert 'id="head-to-head"' in html and bots[2].name in html
    assert html.count('class="chart-panel"') == 2  # one panel per ladder played
    assert "chart-band" in html and "<title>" in html and "UTC" in html
    page = client.get(f"/compare/?a={bots[1].pk}&b={bots[2].pk}")
    text = page.content.decode()
    assert page.status_code == 200 and ladder2.name in text and ladder4.name in text
    assert "Met in 1 rated match" in text and text.count('class="chart-panel"') == 2
    assert client.get(f"/compare/?a={bots[1].pk}").status_code == 200  # the form, one bot chosen
    bad = client.get(f"/compare/?a={bots[1].pk}&b={bots[1].pk}")
    assert bad.status_code == 400 and "two different bots" in bad.content.decode()
    assert client.get("/compare/?a=x&b=999999").status_code == 400


def test_chart_panels_dates_bands_and_palette():
    from datetime import UTC, datetime, timedelta

    from ladder.web.charts import PALETTE, Panel, Point, rating_panels_svg

    t0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    points = [Point(t0 + timedelta(minutes=5 * i), 25 + i, 20 + i, 30 + i, f"game {i}") for i in range(6)]
    svg = rating_panels_svg(
        [Panel("Two players", [Series("a", points)]), Panel("Three players", [Series("b", points)])]
    )
    assert svg.count("<svg") == 1 and svg.count('class="chart-panel"') == 2
    assert svg.count("chart-band") == 2 and "<title>game 3</title>" in svg
    assert "12:10" in svg and "UTC, 01 Mar 2025 12:00 to 01 Mar 2025 12:25" in svg
    assert PALETTE[0] in svg and PALETTE[1] in svg  # one colour per ladder, from Okabe-Ito


def test_bot_page_versions_markers_and_reset(alice_client, client, ladder2, make_bot):
    from django.db import transaction
    from django.utils import timezone

    from ladder.matches.services import match_create
    from ladder.ratings.services import SeatOutcome, ratings_apply_match

    a, b = make_bot(name="Versioned"), make_bot(name="Other")
    for seed, version in ((501, "1.0"), (502, "1.0"), (503, "2.0")):
        match = match_create(ladder_id=ladder2.pk, bot_ids=[a.pk, b.pk], seed=seed)
        outcomes = [SeatOutcome(0, a.pk, 1, None, version), SeatOutcome(1, b.pk, 2, None, "")]
        with transaction.atomic():
            ratings_apply_match(
                ladder=ladder2, match_id=match.pk, outcomes=outcomes, finished_at=timezone.now()
            )
    html = client.get(f"/bots/{a.pk}/").content.decode()
    assert 'id="versions"' in html and "<code>2.0</code>" in html and "from parent" in html
    assert html.count('class="chart-marker"') == 2 and "version 2.0" in html
    assert 'id="version-form"' not in html  # not the owner
    page = alice_client.post(f"/bots/{a.pk}/versions/", {"name": "3.0", "reset_rating": "on"}, follow=True)
    assert "Version 3.0 starts from the ladder&#x27;s start rating" in page.content.decode()
    page = alice_client.post(f"/bots/{a.pk}/versions/", {"name": "2.0", "reset_rating": "on"}, follow=True)
    assert "has rated games" in page.content.decode()


def test_a_match_voided_by_server_incidents_says_so_in_words(client, ladder2, make_bot, settings):
    settings.LADDER_MATCH_MAX_ATTEMPTS = 1
    a, b = make_bot(), make_bot()
    match = match_create(ladder_id=ladder2.pk, bot_ids=[a.pk, b.pk], seed=5)
    match_mark_running(match_id=match.pk)
    match_record_infrastructure_failure(
        match_id=match.pk, reason="MatchAborted: no gateway alive", retry=True
    )
    page = client.get(f"/matches/{match.pk}/").content.decode()
    assert "Server incident: stopped by our infrastructure once and voided" in page
    assert "no gateway alive" in page
    assert "server incident · unrated" in client.get(f"/bots/{a.pk}/").content.decode()


def test_the_token_page_commands_ask_for_the_bots_max_concurrent(client, user, make_bot):
    bot = make_bot(owner=user, name="Wide", max_concurrent=5)
    client.force_login(user)
    html = client.get(f"/bots/{bot.pk}/token/").content.decode()
    assert "random_bot.py --target 127.0.0.1:50051 --token YOUR_TOKEN --concurrent 5" in html
    assert "bot.js --target 127.0.0.1:50051 --token YOUR_TOKEN --concurrent 5" in html
    assert "caravan gateway hello --target 127.0.0.1:50051 --token YOUR_TOKEN --concurrent 5" in html
    assert "ask for 5 matches at once" in html and f"/bots/{bot.pk}/edit/" in html


def test_max_concurrent_is_set_on_the_edit_page_and_over_rest(client, user, make_bot, alice_api):
    bot = make_bot(owner=user, name="Narrow")
    assert bot.max_concurrent == 1  # the default
    client.force_login(user)
    form = client.get(f"/bots/{bot.pk}/edit/").content.decode()
    assert 'name="max_concurrent"' in form and "1 by default, at most 16" in form
    posted = client.post(
        f"/bots/{bot.pk}/edit/",
        {"name": "Narrow", "games": ["expedition-v1"], "description": "", "max_concurrent": 3},
    )
    assert posted.status_code == 302
    bot.refresh_from_db()
    assert bot.max_concurrent == 3
    patched = alice_api.patch(f"/api/v1/bots/{bot.pk}/", {"max_concurrent": 4}, format="json")
    assert patched.status_code == 200 and patched.json()["max_concurrent"] == 4
    too_many = alice_api.patch(f"/api/v1/bots/{bot.pk}/", {"max_concurrent": 17}, format="json")
    assert too_many.status_code == 400 and "16" in str(too_many.json())
    schema = alice_api.get("/api/v1/schema/?format=json").json()
    field = schema["components"]["schemas"]["PatchedBotUpdateInputRequest"]["properties"]["max_concurrent"]
    assert field["maximum"] == 16 and "default 1" in field["description"]
