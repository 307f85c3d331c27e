"""The bots' debug texts over REST and on the match page: a seat's bot's owner (and staff) reads them, an
opponent, a spectator or an anonymous visitor never does (not in the debug endpoint, the record, the frames,
the move list, the live view or the page), a text over the limit is cut, and the stored replay is the same."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from engine_service.referee.debug_text import MAX_DEBUG_BYTES
from ladder.matches.services import match_create, match_mark_running, match_record_result
from ladder.replays.debug import decision_debug_store
from ladder.replays.models import DecisionDebug, Replay
from ladder.replays.services import live_progress_publish
from tests.ladder.conftest import make_record

pytestmark = pytest.mark.django_db

SECRET = "alice-secret-plan"  # in every text of seat 0 (alice's bot)


@pytest.fixture
def played(ladder2, make_bot, other_user):
    """A finished match: seat 0 is alice's bot, seat 1 bob's; both wrote debug texts."""
    bots = [make_bot(name="AliceBot"), make_bot(owner=other_user, name="BobBot")]
    match = match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in bots], seed=424_242)
    assert match_mark_running(match_id=match.pk)
    record = make_record(match)
    for step, (seat, _action) in enumerate(record.actions):
        record.debug[step] = f"{SECRET} at {step}" if seat == 0 else f"bob-thoughts at {step}"
    long_step = next(step for step, (seat, _) in enumerate(record.actions) if seat == 0)
    record.debug[long_step] = SECRET + "x" * 5000
    live_progress_publish(match_id=match.pk, actions=record.actions[:6])
    assert match_record_result(match_id=match.pk, record=record)
    return match, record, long_step


def _texts(body: dict) -> dict[int, list[str]]:
    return {seat["seat"]: [e["text"] for e in seat["entries"]] for seat in body["seats"]}


def test_the_owner_reads_their_own_seats_texts_with_links_to_the_replay(played, alice_api) -> None:
    match, record, long_step = played
    body = alice_api.get(f"/api/v1/matches/{match.pk}/debug/").json()
    [seat] = body["seats"]
    assert seat["seat"] == 0 and seat["bot"]["name"] == "AliceBot" and body["next_start"] is None
    steps = [e["step"] for e in seat["entries"]]
    assert steps == [s for s, (who, _) in enumerate(record.actions) if who == 0]
    entry = seat["entries"][1]
    assert entry["text"] == f"{SECRET} at {entry['step']}"
    assert entry["replay"] == f"/matches/{match.pk}/?step={entry['step']}&seat=0#replay"
    long = next(e["text"] for e in seat["entries"] if e["step"] == long_step)
    assert len(long.encode()) <= MAX_DEBUG_BYTES and long.endswith("over the 2048-byte limit]")
    one = alice_api.get(f"/api/v1/matches/{match.pk}/debug/?seat=0").json()
    assert _texts(one) == _texts(body)


def test_pages_follow_on_from_next_start(played, alice_api) -> None:
    match, record, _ = played
    first = alice_api.get(f"/api/v1/matches/{match.pk}/debug/?count=3").json()
    assert len(first["seats"][0]["entries"]) == 3 and first["next_start"] is not None
    rest = alice_api.get(f"/api/v1/matches/{match.pk}/debug/?start={first['next_start']}").json()
    steps = [e["step"] for e in first["seats"][0]["entries"] + rest["seats"][0]["entries"]]
    assert steps == [s for s, (who, _) in enumerate(record.actions) if who == 0]


def test_nobody_else_reads_a_seats_texts(played, api, bob_api) -> None:
    match, _, _ = played
    url = f"/api/v1/matches/{match.pk}/debug/"
    anonymous = api.get(url)
    assert anonymous.status_code == 403 and "owner" in anonymous.json()["detail"]
    bob = bob_api.get(url).json()
    assert _texts(bob).keys() == {1} and SECRET not in json.dumps(bob)
    denied = bob_api.get(url + "?seat=0")
    assert denied.status_code == 403 and "AliceBot, not a bot of yours" in denied.json()["detail"]
    assert bob_api.get(url + "?seat=7").status_code == 404
    assert bob_api.get("/api/v1/matches/999999/debug/").status_code == 404
    assert bob_api.get(url + "?seat=x").status_code == 400


def test_a_stranger_reads_none_and_staff_read_every_seat(played, make_bot, staff_user) -> None:
    match, _, _ = played
    from django.contrib.auth import get_user_model

    stranger = APIClient()
    stranger.force_authenticate(get_user_model().objects.create_user("carol", password="pw-carol-strong"))
    response = stranger.get(f"/api/v1/matches/{match.pk}/debug/")
    assert response.status_code == 403 and "no seat" in response.json()["detail"]
    staff = APIClient()
    staff.force_authenticate(staff_user)
    assert _texts(staff.get(f"/api/v1/matches/{match.pk}/debug/").json()).keys() == {0, 1}


def test_no_public_view_of_the_match_holds_a_text(played, api, bob_api, client) -> None:
    match, record, _ = played
    base = f"/api/v1/matches/{match.pk}"
    for path in ("/replay/", "/frames/?count=200", "/frames/?seat=0&count=200", "/moves/", "/live/", "/"):
        for reader in (api, bob_api):
            response = reader.get(base + path)
            assert response.status_code == 200, path
            assert SECRET not in response.content.decode(), path
    page = client.get(f"/matches/{match.pk}/")
    assert page.status_code == 200 and SECRET not in page.content.decode()
    stored = Replay.objects.get(match=match)
    assert SECRET not in stored.record_text() and "debug" not in json.loads(stored.record_text())
    assert stored.record().hashes == record.hashes and stored.record().actions == record.actions


def test_storing_again_keeps_what_was_stored(played) -> None:
    match, record, _ = played
    before = list(DecisionDebug.objects.filter(match=match).values_list("step", "text"))
    record.debug = {step: "changed" for step in record.debug}
    decision_debug_store(match_id=match.pk, record=record)
    assert list(DecisionDebug.objects.filter(match=match).values_list("step", "text")) == before


def test_the_match_page_has_an_empty_panel_for_a_signed_in_visitor_only(played, client, user) -> None:
    match, _, _ = played
    anonymous = client.get(f"/matches/{match.pk}/").content.decode()
    assert 'id="debug"' not in anonymous and "debug.js" not in anonymous
    client.force_login(user)
    page = client.get(f"/matches/{match.pk}/").content.decode()
    assert f'data-debug-url="/api/v1/matches/{match.pk}/debug/"' in page and "web/debug.js" in page
    assert SECRET not in page  # the panel is filled by debug.js from the owner-only endpoint
