"""Practice matches a bot owner asks for, over REST and on the bot's practice page: validated (own bot,
known game and options, allowed house bots, bots that accept challenges, a cap on open requests) with a
clear 4xx and nothing created otherwise; created NEW and unrated on an inactive ladder of their own; sent
once by the scheduler, and only when the bot has a free slot (else it waits, saying why, on its page and
over REST, and is called off with that reason after LADDER_PRACTICE_MAX_WAIT_SECONDS); recorded without
touching any rating (the scheduler's side: tests/workers/test_matchmaking.py)."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from engine_service.gateway.registry import SessionInfo
from ladder.accounts.services import user_token_issue
from ladder.matches.models import Match, MatchStatus
from ladder.matches.practice import (
    practice_match_mark_sent,
    practice_match_request,
    practice_match_waiting,
    practice_matches_to_send,
)
from ladder.matches.services import match_create, match_mark_running, match_record_result
from ladder.ratings.models import Rating, RatingLedger
from tests.ladder.conftest import make_record

pytestmark = pytest.mark.django_db


class Sessions:
    """The gateways' session registry as the practice module reads it: the streams open now."""

    def __init__(self) -> None:
        self.streams: list[SessionInfo] = []
        self.broken = False

    def connect(self, bot, *, capacity: int = 1, matches: int = 0, games=("expedition-v1",)) -> None:
        now = time.time()
        self.streams.append(
            SessionInfo(
                session_id=f"s{len(self.streams)}",
                bot_id=str(bot.pk),
                bot_name=bot.name,
                gateway_id="gw-1",
                relay_address="127.0.0.1:1",
                games=tuple(games),
                capacity=capacity,
                matches=matches,
                connected_at=now,
                heartbeat_at=now,
            )
        )

    def sessions(self) -> list[SessionInfo]:
        if self.broken:
            raise ConnectionError("registry down")
        return list(self.streams)


@pytest.fixture
def sessions(monkeypatch) -> Sessions:
    registry = Sessions()
    monkeypatch.setattr("ladder.bots.presence.registry", lambda: registry)
    return registry


def ask(user, bot, *opponents, game_id="expedition-v1"):
    return practice_match_request(
        user=user, bot_id=bot.pk, game_id=game_id, options={}, opponents=list(opponents or ["greedy"])
    )


@pytest.fixture
def mine(make_bot, user):
    return make_bot(owner=user, name="Marco", games=("expedition-v1", "mp2-v1"))


def test_a_request_makes_an_unrated_match_on_its_own_inactive_ladder(mine, user):
    match = practice_match_request(
        user=user,
        bot_id=mine.pk,
        game_id="mp2-v1",
        options={"caravans": True},
        opponents=["greedy", "random"],
    )
    assert match.status == MatchStatus.NEW and not match.rated and match.requested_by == user
    assert not match.ladder.active and match.ladder.options["caravans"] is True
    assert match.ladder.num_players == 3 and "Caravans" not in match.ladder.name  # options shown by name
    assert "caravans=True" in match.ladder.name
    assert [s.bot.name for s in match.seats.order_by("index")] == ["Marco", "house-greedy", "house-random"]
    again = practice_match_request(user=user, bot_id=mine.pk, game_id="mp2-v1", options={"caravans": True},
                                   opponents=["random", "greedy"])  # fmt: skip
    assert again.ladder == match.ladder  # one practice ladder per game, players and options


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"game_id": "chess-v1"}, "game_id", "unknown game"),
        ({"options": {"caravans": "yes"}}, "options", "caravans"),
        ({"options": {"speed": 3}}, "options", "unknown option"),
        ({"opponents": ["mcts:5000"]}, "opponents", "not a house bot here"),
        ({"opponents": []}, "opponents", "at least one"),
        ({"opponents": ["greedy"] * 5}, "opponents", "players"),
        ({"opponents": [True]}, "opponents", "house bot's name or a bot id"),
        ({"bot_id": "1"}, "bot", "one of your bots"),
    ],
)
def test_bad_requests_name_the_field_and_create_nothing(mine, user, changes, field, words):
    request = {"bot_id": mine.pk, "game_id": "expedition-v1", "options": {}, "opponents": ["greedy"]}
    with pytest.raises(ValidationError) as info:
        practice_match_request(user=user, **{**request, **changes})
    assert field in info.value.message_dict
    assert words in " ".join(info.value.message_dict[field])
    assert not Match.objects.exists()


def test_only_own_bots_and_bots_that_accept_challenges(mine, user, other_user, make_bot):
    theirs = make_bot(owner=other_user, name="Kublai")
    with pytest.raises(ValidationError, match="does not accept challenges"):
        practice_match_request(
            user=user, bot_id=mine.pk, game_id="expedition-v1", options={}, opponents=[theirs.pk]
        )
    with pytest.raises(ValidationError, match="no bot with id"):
        practice_match_request(user=other_user, bot_id=mine.pk, game_id="expedition-v1", options={},
                               opponents=["greedy"])  # fmt: skip
    theirs.accepts_challenges = True
    theirs.save()
    match = practice_match_request(user=user, bot_id=mine.pk, game_id="expedition-v1", options={},
                                   opponents=[theirs.pk])  # fmt: skip
    assert match.seats.get(index=1).bot == theirs


def test_open_requests_are_capped(mine, user, settings):
    settings.LADDER_PRACTICE_MAX_OPEN = 2
    for _ in range(2):
        practice_match_request(
            user=user, bot_id=mine.pk, game_id="expedition-v1", options={}, opponents=["random"]
        )
    with pytest.raises(ValidationError, match="at most 2 at once"):
        practice_match_request(
            user=user, bot_id=mine.pk, game_id="expedition-v1", options={}, opponents=["random"]
        )


def test_sent_once_and_recorded_without_a_rating(mine, user, sessions):
    sessions.connect(mine)
    match = practice_match_request(user=user, bot_id=mine.pk, game_id="expedition-v1", options={},
                                   opponents=["greedy"])  # fmt: skip
    assert practice_matches_to_send() == [match.pk]
    assert practice_match_mark_sent(match_id=match.pk)
    assert not practice_match_mark_sent(match_id=match.pk)  # a second scheduler pass sends nothing
    assert practice_matches_to_send() == []
    assert match_mark_running(match_id=match.pk)
    assert match_record_result(match_id=match.pk, record=make_record(match))
    match.refresh_from_db()
    assert match.status == MatchStatus.DONE and match.replay.steps == match.steps
    assert not RatingLedger.objects.filter(match=match).exists()
    assert not Rating.objects.filter(ladder=match.ladder).exclude(games=0).exists()


def test_rest_requests_and_lists_practice_matches(mine, user, api, alice_api):
    body = {"bot": mine.pk, "game_id": "expedition-v1", "opponents": ["greedy", "random"]}
    assert api.post("/api/v1/practice/", body, format="json").status_code == 401
    created = alice_api.post("/api/v1/practice/", body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["rated"] is False and created.json()["status"] == "NEW"
    bad = alice_api.post("/api/v1/practice/", {**body, "opponents": ["mcts:9999"]}, format="json")
    assert bad.status_code == 400 and "not a house bot here" in str(bad.json())
    listed = alice_api.get("/api/v1/practice/").json()["results"]
    assert [m["id"] for m in listed] == [created.json()["id"]]


def test_the_practice_page_posts_then_redirects_to_the_match(mine, user, client):
    client.force_login(user)
    assert f"/bots/{mine.pk}/practice/" in client.get(f"/bots/{mine.pk}/").content.decode()
    page = client.get(f"/bots/{mine.pk}/practice/")
    assert page.status_code == 200 and "house bot: greedy" in page.content.decode()
    assert "still waiting after 60 minutes is called off" in page.content.decode()
    form = {"game_id": "expedition-v1", "options": '{"strategic_two_player": true}', "seat1": "house:greedy"}
    response = client.post(f"/bots/{mine.pk}/practice/", form)
    match = Match.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/matches/{match.pk}/"
    assert "practice · unrated" in client.get(response["Location"]).content.decode()
    again = client.post(f"/bots/{mine.pk}/practice/", {**form, "options": "[1]"})
    assert again.status_code == 200 and "JSON object" in again.content.decode()
    assert Match.objects.count() == 1


def test_user_api_tokens_authenticate_practice_requests(mine, user, client):
    token = user_token_issue(user=user)[1]
    response = client.get("/api/v1/practice/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200


def test_a_bot_that_is_not_connected_keeps_its_match_waiting_and_says_so(mine, user, sessions):
    match = ask(user, mine)
    assert practice_matches_to_send() == []
    assert practice_match_waiting(match=match) == (
        "waiting for bot Marco to connect (with a stream for expedition-v1)"
    )
    sessions.connect(mine, games=("mp2-v1",))  # a stream for another game has no room for this one
    assert practice_matches_to_send() == []
    sessions.connect(mine)
    assert practice_matches_to_send() == [match.pk]
    assert "the scheduler sends it within seconds" in practice_match_waiting(match=match)


def test_rated_matches_holding_every_slot_make_it_wait_for_a_free_one_not_call_it_off(
    mine, user, sessions, ladder2, make_bot
):
    rated = match_create(ladder_id=ladder2.pk, bot_ids=[mine.pk, make_bot(name="Rival").pk])
    assert match_mark_running(match_id=rated.pk)  # RUNNING: it holds the bot's one slot
    sessions.connect(mine, capacity=1, matches=1)
    match = ask(user, mine)
    assert practice_matches_to_send() == []
    assert practice_match_waiting(match=match) == (
        "waiting for a free slot of bot Marco: all 1 of its slots (max_concurrent) hold queued or running "
        "matches; raise max_concurrent on the bot's page"
    )
    Match.objects.filter(pk=rated.pk).update(status=MatchStatus.DONE)
    assert practice_matches_to_send() == []  # the gateway still reports the match on the stream
    assert practice_match_waiting(match=match) == (
        "waiting for a free slot of bot Marco: its streams have room for 1 match(es) at once (as its Hello "
        "asked) and all are in use; ask for more in its Hello"
    )
    sessions.streams.clear()
    sessions.connect(mine, capacity=1, matches=0)
    assert practice_matches_to_send() == [match.pk]
    match.refresh_from_db()
    assert match.status == MatchStatus.NEW  # waiting never called it off


def test_slots_are_counted_within_a_pass_oldest_first_and_max_concurrent_caps_the_stream(
    mine, user, sessions
):
    first, second = ask(user, mine, "greedy"), ask(user, mine, "random")
    sessions.connect(mine, capacity=4)  # the stream asks for 4; the bot is registered for 1
    assert practice_matches_to_send() == [first.pk]
    mine.max_concurrent = 2
    mine.save()
    assert practice_matches_to_send() == [first.pk, second.pk]
    assert practice_match_mark_sent(match_id=first.pk)  # now QUEUED: it holds a slot
    mine.max_concurrent = 1
    mine.save()
    assert practice_matches_to_send() == []
    assert "all 1 of its slots (max_concurrent) hold" in practice_match_waiting(match=second)


def test_every_remote_opponent_needs_a_slot_too(mine, user, sessions, make_bot):
    theirs = make_bot(name="Kublai", accepts_challenges=True)
    match = ask(user, mine, theirs.pk, "greedy")
    sessions.connect(mine)
    assert practice_matches_to_send() == []
    assert practice_match_waiting(match=match).startswith("waiting for bot Kublai to connect")
    sessions.connect(theirs)
    assert practice_matches_to_send() == [match.pk]


def test_an_unreadable_registry_sends_nothing_and_says_it_cannot_tell(mine, user, sessions):
    match = ask(user, mine)
    sessions.connect(mine)
    sessions.broken = True
    assert practice_matches_to_send() == []
    assert practice_match_waiting(match=match) == (
        "waiting: whether its bots are connected cannot be told right now"
    )


def test_a_match_that_waited_too_long_is_called_off_with_the_reason(mine, user, sessions, settings, api):
    settings.LADDER_PRACTICE_MAX_WAIT_SECONDS = 600
    old, fresh = ask(user, mine), ask(user, mine, "random")
    Match.objects.filter(pk=old.pk).update(created_at=timezone.now() - dt.timedelta(seconds=601))
    assert practice_matches_to_send() == []
    old.refresh_from_db()
    fresh.refresh_from_db()
    assert old.status == MatchStatus.CANCELLED and fresh.status == MatchStatus.NEW
    assert old.error == (
        "called off, unrated: still waiting for bot Marco to connect (with a stream for expedition-v1) "
        "after 10 minutes"
    )
    status = api.get(f"/api/v1/matches/{old.pk}/status/").json()
    assert status["status"] == "CANCELLED" and status["error"] == old.error and status["waiting"] is None


def test_the_status_endpoint_and_the_match_page_say_why_it_waits(mine, user, sessions, api, client):
    match = ask(user, mine)
    status = api.get(f"/api/v1/matches/{match.pk}/status/")
    assert status.status_code == 200
    assert status.json() == {
        "match": match.pk,
        "status": "NEW",
        "practice": True,
        "waiting": "waiting for bot Marco to connect (with a stream for expedition-v1)",
        "live": False,
        "has_replay": False,
        "error": "",
        "page": f"/matches/{match.pk}/",
    }
    page = client.get(f"/matches/{match.pk}/").content.decode()
    assert "Waiting for bot Marco to connect (with a stream for expedition-v1)." in page
    assert f'data-status-url="/api/v1/matches/{match.pk}/status/"' in page
    assert "web/match_status.js" in page and "reloads when it starts" in page
    assert api.get("/api/v1/matches/999999/status/").status_code == 404


def test_the_page_stops_polling_once_the_match_is_over(mine, user, sessions, api, client):
    sessions.connect(mine)
    match = ask(user, mine)
    assert practice_match_mark_sent(match_id=match.pk)
    assert api.get(f"/api/v1/matches/{match.pk}/status/").json()["waiting"] == (
        "queued: waiting for a worker to start it"
    )
    assert match_mark_running(match_id=match.pk)
    running = api.get(f"/api/v1/matches/{match.pk}/status/").json()
    assert running["status"] == "RUNNING" and running["live"] and running["waiting"] is None
    assert "the live view is below" in client.get(f"/matches/{match.pk}/").content.decode()
    assert match_record_result(match_id=match.pk, record=make_record(match))
    done = api.get(f"/api/v1/matches/{match.pk}/status/").json()
    assert done["status"] == "DONE" and done["has_replay"] and not done["live"]
    assert "web/match_status.js" not in client.get(f"/matches/{match.pk}/").content.decode()


def test_a_waiting_practice_match_holds_its_slot_against_rated_matchmaking(mine, user):
    from workers.matchmaking import in_flight  # the matchmaker counts NEW matches as the bot's own

    ask(user, mine)
    assert in_flight([mine.pk])[mine.pk] == 1


def test_a_pass_reads_the_database_a_fixed_number_of_times(
    mine, user, other_user, make_bot, sessions, django_assert_max_num_queries
):
    theirs = make_bot(owner=other_user, name="Kublai", max_concurrent=16)
    for opponent in ("greedy", "random", "search"):
        ask(user, mine, opponent)
        ask(other_user, theirs, opponent)
    sessions.connect(mine, capacity=16)
    sessions.connect(theirs, capacity=16)
    with django_assert_max_num_queries(4):  # expiry, the pending matches, their seats, their bots' slots
        assert len(practice_matches_to_send()) == 4  # Marco's one slot, Kublai's three
