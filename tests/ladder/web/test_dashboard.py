"""A bot's own dashboard: whether it is connected now (read from a real SQLite session registry), its faults
and fault rate, its matches in progress, "My bots" at a glance, the token page's connect commands, the
confirmation of rotate/revoke/retire, and Post/Redirect/Get on register and rotate."""

from __future__ import annotations

import time

import pytest
from django.test import Client, override_settings

from engine_service.gateway.registry import SessionInfo, SqliteRegistry
from ladder.bots.models import Bot
from ladder.bots.selectors import bot_fault_summary, bot_identity_for_token
from ladder.bots.services import bot_create, bot_hosted_token_issue
from ladder.matches.models import Seat
from ladder.matches.services import match_create, match_mark_running
from tests.ladder.conftest import play

pytestmark = pytest.mark.django_db

API = "/api/v1/"
RELAY = "10.9.8.7:50052"  # internal: must never be shown


@pytest.fixture
def registry(tmp_path, monkeypatch) -> SqliteRegistry:
    """A real registry file, where the ladder's presence reader looks (CARAVANSERAI_REGISTRY_PATH)."""
    path = tmp_path / "registry.sqlite3"
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("CARAVANSERAI_REGISTRY_PATH", str(path))
    reg = SqliteRegistry(path)
    yield reg
    reg.close()


def connect(registry: SqliteRegistry, bot: Bot, sid: str, **fields) -> SessionInfo:
    now = time.time()
    values = {
        "session_id": sid,
        "bot_id": str(bot.pk),
        "bot_name": bot.name,
        "gateway_id": "gw-east-1",
        "relay_address": RELAY,
        "games": ("expedition-v1",),
        "capacity": 2,
        "matches": 1,
        "connected_at": now - 600,
        "heartbeat_at": now,
        "asked": 4,
        "bot_version": "v1.2.3",
    }
    values.update(fields)
    session = SessionInfo(**values)
    registry.register(session)
    return session


@pytest.fixture
def alice_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def bob_client(other_user) -> Client:
    client = Client()
    client.force_login(other_user)
    return client


# Presence


def test_presence_on_api_and_pages(registry, make_bot, alice_client, bob_client, alice_api, bob_api):
    bot, idle = make_bot(name="Caravel"), make_bot(name="Idle")
    connect(registry, bot, "s1")
    connect(registry, bot, "s2", gateway_id="gw-west-2", capacity=3, matches=0, asked=3, bot_version="")
    connect(registry, bot, "old", heartbeat_at=time.time() - 3600)  # a dead gateway's session: ignored

    public = bob_api.get(f"{API}bots/{bot.pk}/").json()["presence"]
    assert public == {"state": "connected", "connected": True, "streams": 2, "free": 4, "sessions": None}
    owner = alice_api.get(f"{API}bots/{bot.pk}/").json()
    streams = owner["presence"]["sessions"]
    assert [(s["gateway_id"], s["asked"], s["capacity"], s["matches"], s["free"]) for s in streams] == [
        ("gw-east-1", 4, 2, 1, 1),
        ("gw-west-2", 3, 3, 0, 3),
    ]
    assert streams[0]["bot_version"] == "v1.2.3" and streams[0]["connected_at"].endswith("Z")
    assert RELAY not in str(owner) and "relay" not in str(owner)
    offline = bob_api.get(f"{API}bots/{idle.pk}/").json()["presence"]
    assert offline == {"state": "offline", "connected": False, "streams": 0, "free": 0, "sessions": None}

    page = bob_client.get(f"/bots/{bot.pk}/").content.decode()
    assert "presence-connected" in page and "2 streams" in page and "room for 4 more" in page
    assert "gw-east-1" not in page and "v1.2.3" not in page and RELAY not in page
    mine = alice_client.get(f"/bots/{bot.pk}/").content.decode()
    assert 'id="streams"' in mine and "gw-east-1" in mine and "gw-west-2" in mine and "v1.2.3" in mine
    assert "4 / 2" in mine and RELAY not in mine
    assert "presence-offline" in bob_client.get(f"/bots/{idle.pk}/").content.decode()


@pytest.mark.parametrize("broken", ["directory", "garbage"])
def test_unreadable_registry_gives_unknown(broken, tmp_path, monkeypatch, make_bot, alice_client, alice_api):
    bot = make_bot()
    if broken == "directory":
        path = tmp_path  # a directory is no database
    else:
        path = tmp_path / "registry.sqlite3"
        path.write_bytes(b"this is not a SQLite database file at all" * 100)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("CARAVANSERAI_REGISTRY_PATH", str(path))
    response = alice_api.get(f"{API}bots/{bot.pk}/")
    assert response.status_code == 200
    assert response.json()["presence"] == {
        "state": "unknown",
        "connected": None,
        "streams": None,
        "free": None,
        "sessions": None,
    }
    page = alice_client.get(f"/bots/{bot.pk}/")
    assert page.status_code == 200 and "presence-unknown" in page.content.decode()
    mine = alice_client.get("/me/bots/")
    assert mine.status_code == 200 and "presence-unknown" in mine.content.decode()
    confirm = alice_client.get(f"/bots/{bot.pk}/rotate/")
    assert confirm.status_code == 200 and "unknown" in confirm.content.decode()


# Faults and matches in progress


def test_faults_rate_and_replay_links(ladder2, make_bot, api, client):
    bot, rival = make_bot(name="Faulty"), make_bot(name="Rival")
    clean = play(ladder2, [bot, rival], 71)
    first = play(ladder2, [bot, rival], 72)
    second = play(ladder2, [rival, bot], 73)
    Seat.objects.filter(match=first, bot=bot).update(
        faults=[
            {"step": 4, "kind": "timeout", "reason": "no answer within 1.50s at step 4", "forfeit": False},
            {"step": 10, "kind": "illegal", "reason": "not legal: 'fly'", "forfeit": False},
        ]
    )
    Seat.objects.filter(match=second, bot=bot).update(
        faults=[{"step": 7, "kind": "timeout", "reason": "no answer", "forfeit": True}]
    )
    Seat.objects.filter(match=second, bot=rival).update(faults=[{"step": 3, "kind": "crash", "reason": "x"}])
    queued = match_create(ladder_id=ladder2.pk, bot_ids=[bot.pk, rival.pk], seed=74)  # not finished
    assert queued.status == "QUEUED"

    steps = sum(m.steps for m in (clean, first, second))
    summary = api.get(f"{API}bots/{bot.pk}/").json()["fault_summary"]
    assert summary["matches"] == 3 and summary["faults"] == 3 and summary["matches_with_faults"] == 2
    assert summary["by_kind"] == {"timeout": 2, "illegal": 1}
    assert summary["decisions"] == pytest.approx(steps / 2, abs=0.1)
    assert summary["per_100_decisions"] == pytest.approx(100 * 3 / (steps / 2), abs=0.01)
    assert summary["match_share"] == pytest.approx(2 / 3, abs=1e-3)
    recent = summary["recent"]
    assert [(f["match"], f["step"], f["kind"]) for f in recent] == [
        (second.pk, 7, "timeout"),
        (first.pk, 10, "illegal"),
        (first.pk, 4, "timeout"),
    ]
    assert recent[0]["seat"] == 1 and recent[0]["forfeit"] is True
    assert recent[0]["replay"] == f"/matches/{second.pk}/?step=7&seat=1#replay"
    assert recent[2]["replay"] == f"/matches/{first.pk}/?step=4&seat=0#replay"

    page = client.get(f"/bots/{bot.pk}/").content.decode()
    assert 'id="fault-list"' in page and "3 faults in the last 3 finished matches" in page
    assert f'href="/matches/{second.pk}/?step=7&amp;seat=1#replay"' in page
    assert "67%</strong> of matches with a fault" in page
    assert api.get(f"{API}bots/{rival.pk}/").json()["fault_summary"]["by_kind"] == {"crash": 1}
    # Only the last N finished matches count.
    assert bot_fault_summary(bot_id=bot.pk, matches=1).faults == 1
    assert bot_fault_summary(bot_id=bot.pk, matches=2).matches == 2


def test_no_matches_yet(make_bot, api, client):
    bot = make_bot()
    body = api.get(f"{API}bots/{bot.pk}/").json()
    assert body["fault_summary"]["matches"] == 0 and body["fault_summary"]["per_100_decisions"] is None
    assert body["fault_summary"]["match_share"] is None and body["in_progress"] == []
    page = client.get(f"/bots/{bot.pk}/").content.decode()
    assert "No finished match yet." in page and "No match queued or running." in page


def test_matches_in_progress(ladder2, make_bot, api, client):
    bot, rival = make_bot(name="Busy"), make_bot(name="Other")
    done = play(ladder2, [bot, rival], 81)
    queued = match_create(ladder_id=ladder2.pk, bot_ids=[rival.pk, bot.pk], seed=82)
    running = match_create(ladder_id=ladder2.pk, bot_ids=[bot.pk, rival.pk], seed=83)
    assert match_mark_running(match_id=running.pk)
    rows = api.get(f"{API}bots/{bot.pk}/").json()["in_progress"]
    assert [(r["match"], r["status"], r["live"], r["seat"]) for r in rows] == [
        (running.pk, "RUNNING", True, 0),
        (queued.pk, "QUEUED", False, 1),
    ]
    assert rows[0]["page"] == f"/matches/{running.pk}/" and done.pk not in [r["match"] for r in rows]
    page = client.get(f"/bots/{bot.pk}/").content.decode()
    assert f'<a class="live-link" href="/matches/{running.pk}/">' in page and "watch live" in page
    assert f'href="/matches/{queued.pk}/">#{queued.pk}</a>' in page


def test_my_bots_at_a_glance(registry, ladder2, make_bot, alice_client):
    bot, quiet, rival = make_bot(name="Glance"), make_bot(name="Quiet"), make_bot(name="Rival")
    connect(registry, bot, "s1", capacity=3, matches=1)
    match = play(ladder2, [bot, rival], 91)
    Seat.objects.filter(match=match, bot=bot).update(faults=[{"step": 2, "kind": "illegal", "reason": "x"}])
    match_create(ladder_id=ladder2.pk, bot_ids=[bot.pk, rival.pk], seed=92)
    page = alice_client.get("/me/bots/")
    assert page.status_code == 200
    html = page.content.decode()
    row = html[html.index(f'id="bot-{bot.pk}"') : html.index(f'id="bot-{quiet.pk}"')]
    assert "presence-connected" in row and "1 stream, 2 free" in row
    assert f'href="/bots/{bot.pk}/#in-progress">1</a>' in row
    assert f'href="/bots/{bot.pk}/#faults">1</a>' in row and "in 1" in row
    assert ladder2.name in row  # its best rating's ladder
    quiet_row = html[html.index(f'id="bot-{quiet.pk}"') :]
    assert "presence-offline" in quiet_row.split("</tr>")[0]
    assert Client().get("/me/bots/").status_code == 302


# The token page, Post/Redirect/Get


@override_settings(LADDER_GATEWAY_PUBLIC_ADDR="bots.example.org:443")
def test_register_redirects_and_shows_the_token_once_with_commands(alice_client, caplog):
    form = {"name": "Fresh", "games": ["expedition-v1"], "description": "", "max_concurrent": 1}
    posted = alice_client.post("/bots/new/", form)
    bot = Bot.objects.get(name="Fresh")
    assert posted.status_code == 302 and posted["Location"] == f"/bots/{bot.pk}/token/"
    page = alice_client.get(posted["Location"])
    assert page.status_code == 200 and page["Cache-Control"] == "no-store"
    token = page.context["token"]
    assert bot_identity_for_token(token=token).bot_id == bot.pk
    html = page.content.decode()
    assert "Fresh is registered" in html and 'id="gateway-address">bots.example.org:443<' in html
    assert (
        f"python clients/python/examples/random_bot.py --target bots.example.org:443 --token {token} "
        "--concurrent 1" in html
    )
    assert f"node clients/node/bot.js --target bots.example.org:443 --token {token} --concurrent 1" in html
    assert "caravan gateway health --target bots.example.org:443" in html
    assert f"caravan gateway hello --target bots.example.org:443 --token {token} --concurrent 1" in html
    assert "grpcurl" not in html
    assert "ask for 1 match at once" in html and "at most 16" in html
    assert "white-space: pre-wrap; overflow-wrap: anywhere" in html  # long commands wrap, never cut off
    assert token not in str(dict(alice_client.session))  # popped once shown
    assert token not in caplog.text

    again = alice_client.get(posted["Location"])  # a reload: already shown, not shown again
    assert again.status_code == 200 and again.context["token"] is None
    assert token not in again.content.decode() and "already shown" in again.content.decode()
    assert f"/bots/{bot.pk}/rotate/" in again.content.decode()
    assert "--token YOUR_TOKEN" in again.content.decode()
    assert Bot.objects.filter(name="Fresh").count() == 1


def test_token_page_is_the_owners(alice_client, bob_client, make_bot):
    bot = make_bot()
    assert bob_client.get(f"/bots/{bot.pk}/token/").status_code == 403
    assert Client().get(f"/bots/{bot.pk}/token/").status_code == 302  # log in first
    assert alice_client.get("/bots/999999/token/").status_code == 404


def test_rotate_is_post_redirect_get(alice_client, make_bot):
    bot = make_bot()
    bot.refresh_from_db()
    old_hash = bot.token_hash
    posted = alice_client.post(f"/bots/{bot.pk}/rotate/", {"confirm": "yes"})
    assert posted.status_code == 302 and posted["Location"] == f"/bots/{bot.pk}/token/"
    page = alice_client.get(posted["Location"])
    token = page.context["token"]
    assert "New token for" in page.content.decode() and token in page.content.decode()
    bot.refresh_from_db()
    assert bot.token_hash != old_hash and bot_identity_for_token(token=token).bot_id == bot.pk
    reload = alice_client.get(posted["Location"])
    assert reload.context["token"] is None and "already shown" in reload.content.decode()


def test_a_token_revoked_before_its_display_is_not_shown(alice_client, make_bot):
    bot = make_bot()
    alice_client.post(f"/bots/{bot.pk}/rotate/", {"confirm": "yes"})
    alice_client.post(f"/bots/{bot.pk}/revoke/", {"confirm": "yes"})
    page = alice_client.get(f"/bots/{bot.pk}/token/")
    assert page.context["token"] is None and "no token now" in page.content.decode()


# Confirmations


@pytest.mark.parametrize("action", ["rotate", "revoke", "retire"])
def test_actions_ask_first(action, alice_client, bob_client, ladder2, make_bot):
    bot, rival = make_bot(name="Careful"), make_bot()
    match_create(ladder_id=ladder2.pk, bot_ids=[bot.pk, rival.pk], seed=5)
    bot.refresh_from_db()
    before = (bot.token_hash, bot.active)
    page = alice_client.get(f"/bots/{bot.pk}/{action}/")
    html = page.content.decode()
    assert page.status_code == 200 and "What will happen" in html and 'name="confirm" value="yes"' in html
    assert "1 queued match is cancelled" in html and "No match is running" in html
    for data in ({}, {"confirm": "no"}, {"confirm": ""}):
        refused = alice_client.post(f"/bots/{bot.pk}/{action}/", data)
        assert refused.status_code == 400 and "Nothing was changed" in refused.content.decode()
    bot.refresh_from_db()
    assert (bot.token_hash, bot.active) == before
    assert bob_client.get(f"/bots/{bot.pk}/{action}/").status_code == 403
    assert bob_client.post(f"/bots/{bot.pk}/{action}/", {"confirm": "yes"}).status_code == 403
    assert Client().get(f"/bots/{bot.pk}/{action}/").status_code == 302
    bot.refresh_from_db()
    assert (bot.token_hash, bot.active) == before
    done = alice_client.post(f"/bots/{bot.pk}/{action}/", {"confirm": "yes"})
    assert done.status_code == 302
    bot.refresh_from_db()
    assert (bot.token_hash, bot.active) != before


def test_bot_page_links_to_the_confirmations(alice_client, make_bot):
    bot = make_bot()
    html = alice_client.get(f"/bots/{bot.pk}/").content.decode()
    for action in ("rotate", "revoke", "retire"):
        assert f'href="/bots/{bot.pk}/{action}/"' in html
    assert 'method="post" action="/bots/{bot.pk}/retire/"' not in html and "onsubmit" not in html


def test_confirmations_of_what_cannot_be_done(alice_client, user, make_bot):
    bot = make_bot()
    assert alice_client.get(f"/bots/{bot.pk}/explode/").status_code == 404
    alice_client.post(f"/bots/{bot.pk}/revoke/", {"confirm": "yes"})
    nothing = alice_client.get(f"/bots/{bot.pk}/revoke/", follow=True)
    assert "has no token to revoke" in nothing.content.decode()
    retired, _ = bot_create(owner=user, name="Gone", games=["expedition-v1"])
    alice_client.post(f"/bots/{retired.pk}/retire/", {"confirm": "yes"})
    for action in ("rotate", "revoke", "retire"):
        response = alice_client.get(f"/bots/{retired.pk}/{action}/", follow=True)
        assert "is retired" in response.content.decode()
    retired.refresh_from_db()
    assert retired.token_hash is None and not retired.active


def test_confirmations_say_a_hosted_version_keeps_its_own_credential(alice_client, make_bot):
    bot = make_bot()
    assert "keeps its own credential" not in alice_client.get(f"/bots/{bot.pk}/revoke/").content.decode()
    bot_hosted_token_issue(bot_id=bot.pk)
    assert "keeps its own credential" in alice_client.get(f"/bots/{bot.pk}/revoke/").content.decode()
    assert "its hosted credential are revoked" in alice_client.get(f"/bots/{bot.pk}/retire/").content.decode()
