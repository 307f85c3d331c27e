"""Practice matches a bot owner asks for, over REST and on the bot's practice page: validated (own bot,
known game and options, allowed house bots, bots that accept challenges, a cap on open requests) with a
clear 4xx and nothing created otherwise; created NEW and unrated on an inactive ladder of their own; sent
once by the scheduler; recorded without touching any rating (the scheduler's side:
tests/workers/test_matchmaking.py)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from ladder.accounts.services import user_token_issue
from ladder.matches.models import Match, MatchStatus
from ladder.matches.practice import practice_match_mark_sent, practice_match_request, practice_matches_to_send
from ladder.matches.services import match_mark_running, match_record_result
from ladder.ratings.models import Rating, RatingLedger
from tests.ladder.conftest import make_record

pytestmark = pytest.mark.django_db


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


def test_sent_once_and_recorded_without_a_rating(mine, user):
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
