"""The REST API (/api/v1/): every endpoint, permissions, filters, pagination, caching, throttling, and a
clear 4xx (never a 500) for bad input."""

from __future__ import annotations

import copy
import itertools

import pytest
from rest_framework.test import APIClient

from engine_service.referee import frame_at
from ladder.bots.models import Bot
from ladder.matches.models import Match, MatchStatus
from ladder.matches.services import match_create, match_mark_running
from ladder.replays.selectors import ReplayUnavailable, replay_frames, replay_record
from tests.ladder.conftest import clear_test_cache, play

pytestmark = pytest.mark.django_db

API = "/api/v1/"


def test_games_and_board(api):
    games = api.get(f"{API}games/").json()
    assert "expedition-v1" in [g["game_id"] for g in games]
    assert api.get(f"{API}games/expedition-v1/").json()["max_players"] == 5
    board = api.get(f"{API}games/expedition-v1/board/").json()
    assert len(board["spaces"]) == 29 and board["daidu"] == 28
    response = api.get(f"{API}games/chess-v9/")
    assert response.status_code == 404 and "known games" in response.json()["detail"]


def test_ladders(api, ladder2, ladder4):
    ladders = api.get(f"{API}ladders/").json()
    assert [lad["slug"] for lad in ladders] == ["expedition-v1-2p", "expedition-v1-4p"]
    assert api.get(f"{API}ladders/?game=expedition-v1").json()[0]["elo_k"] == 32.0
    assert api.get(f"{API}ladders/{ladder4.pk}/").json()["num_players"] == 4
    missing = api.get(f"{API}ladders/999999/")
    assert missing.status_code == 404 and "no ladder with id 999999" in missing.json()["detail"]


def test_register_bot_shows_token_once(api, alice_api):
    assert api.post(
        f"{API}bots/", {"name": "Anon", "games": ["expedition-v1"]}, format="json"
    ).status_code in (401, 403)
    response = alice_api.post(f"{API}bots/", {"name": "Marco", "games": ["expedition-v1"]}, format="json")
    assert response.status_code == 201
    body = response.json()
    token = body["token"]
    assert body["bot"]["name"] == "Marco" and body["bot"]["token_hint"] == token[:8]
    detail = alice_api.get(f"{API}bots/{body['bot']['id']}/").json()
    assert token not in str(detail) and "token" not in detail
    public = APIClient().get(f"{API}bots/{body['bot']['id']}/").json()
    assert "token_hint" not in public


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"name": "Marco", "games": ["chess-v1"]}, "unknown game 'chess-v1'"),
        ({"name": "", "games": ["expedition-v1"]}, "name"),
        ({"name": "Marco"}, "games"),
        ({"name": "Marco", "games": "expedition-v1"}, "games"),
        ({"name": "Marco", "games": ["expedition-v1"], "max_concurrent": "many"}, "max_concurrent"),
        ({"name": "a/b", "games": ["expedition-v1"]}, "letters, digits"),
    ],
)
def test_register_bot_bad_input(alice_api, payload, fragment):
    response = alice_api.post(f"{API}bots/", payload, format="json")
    assert response.status_code == 400
    assert fragment in response.json()["detail"] or fragment in str(response.json()["errors"])
    assert not Bot.objects.exists()


def test_malformed_json_is_a_400(alice_api):
    response = alice_api.post(f"{API}bots/", data="{not json", content_type="application/json")
    assert response.status_code == 400 and "JSON parse error" in response.json()["detail"]


def test_owner_only_changes(alice_api, bob_api, api, make_bot):
    bot = make_bot()
    url = f"{API}bots/{bot.pk}/"
    for client in (bob_api,):
        assert client.patch(url, {"name": "Stolen"}, format="json").status_code == 403
        assert client.post(f"{url}token/rotate/").status_code == 403
        assert client.post(f"{url}token/revoke/").status_code == 403
        assert client.post(f"{url}retire/").status_code == 403
        assert client.delete(url).status_code == 403
    assert api.patch(url, {"name": "Stolen"}, format="json").status_code in (401, 403)
    assert api.post(f"{url}token/rotate/").status_code in (401, 403)
    bot.refresh_from_db()
    assert bot.name == "bot-1" and bot.active and bot.token_hash
    response = alice_api.patch(url, {"description": "mine"}, format="json")
    assert response.status_code == 200 and response.json()["description"] == "mine"
    assert alice_api.patch(url, {"owner": "bob"}, format="json").status_code == 400
    assert alice_api.patch(url, {}, format="json").status_code == 400
    rotated = alice_api.post(f"{url}token/rotate/").json()
    assert rotated["token"].startswith("cvs_")
    assert alice_api.post(f"{url}token/revoke/").json()["status"] == "token revoked"
    assert alice_api.post(f"{url}retire/").json()["status"] == "retired"
    assert alice_api.patch(url, {"description": "again"}, format="json").status_code == 400
    assert alice_api.post(f"{API}bots/999999/retire/").status_code == 404


def test_bot_list_filters(api, make_bot, other_user):
    make_bot(name="Alpha")
    make_bot(name="Beta", owner=other_user)
    assert [b["name"] for b in api.get(f"{API}bots/?owner=bob").json()] == ["Beta"]
    assert [b["name"] for b in api.get(f"{API}bots/?search=alp").json()] == ["Alpha"]
    assert api.get(f"{API}bots/?include_retired=perhaps").status_code == 400


def test_leaderboard_ranks_pagination_and_cache(api, ladder2, make_bot, django_capture_on_commit_callbacks):
    bots = [make_bot() for _ in range(5)]
    for seed in range(1, 9):
        play(ladder2, [bots[seed % 5], bots[(seed + 1) % 5]], seed)
    first = api.get(f"{API}ladders/{ladder2.pk}/leaderboard/?page_size=2")
    assert first.status_code == 200 and first["X-Cache"] == "miss"
    assert api.get(f"{API}ladders/{ladder2.pk}/leaderboard/?page_size=2")["X-Cache"] == "hit"
    rows, url = [], f"{API}ladders/{ladder2.pk}/leaderboard/?page_size=2"
    while url:
        page = api.get(url).json()
        rows += page["results"]
        url = page["next"]
    assert len(rows) == 5 and len({r["bot"]["id"] for r in rows}) == 5
    ranked_by = [r["conservative"] for r in rows]  # the ladder ranks by mu - 3 sigma, Elo beside it
    assert ranked_by == sorted(ranked_by, reverse=True)
    assert next(r["rank"] for r in rows) == 1
    for a, b in itertools.pairwise(rows):
        assert b["rank"] == a["rank"] if b["conservative"] == a["conservative"] else b["rank"] > a["rank"]
    full = api.get(f"{API}ladders/{ladder2.pk}/leaderboard/").json()["results"]
    assert [r["rank"] for r in full] == [r["rank"] for r in rows]
    assert {"owner", "mu", "sigma", "games", "win_rate", "last_played_at", "conservative"} <= set(full[0])
    # A new result invalidates every cached page of the ladder.
    with django_capture_on_commit_callbacks(execute=True):
        play(ladder2, [bots[0], bots[2]], 77)
    again = api.get(f"{API}ladders/{ladder2.pk}/leaderboard/?page_size=2")
    assert again["X-Cache"] == "miss"
    assert sum(r["games"] for r in api.get(f"{API}ladders/{ladder2.pk}/leaderboard/").json()["results"]) == 18
    assert api.get(f"{API}ladders/{ladder2.pk}/leaderboard/?page_size=0").status_code == 400
    assert api.get(f"{API}ladders/{ladder2.pk}/leaderboard/?cursor=garbage").status_code == 404


def test_leaderboard_hides_retired_bots(api, alice_api, ladder2, make_bot):
    a, b = make_bot(), make_bot()
    play(ladder2, [a, b], 1)
    alice_api.post(f"{API}bots/{a.pk}/retire/")
    names = [r["bot"]["name"] for r in api.get(f"{API}ladders/{ladder2.pk}/leaderboard/").json()["results"]]
    assert names == [b.name]


def test_matches_filters_and_detail(api, ladder2, ladder4, make_bot):
    bots = [make_bot() for _ in range(4)]
    done = play(ladder2, bots[:2], 5)
    queued = match_create(ladder_id=ladder4.pk, bot_ids=[b.pk for b in bots], seed=6)
    assert [m["id"] for m in api.get(f"{API}matches/").json()["results"]] == [queued.pk, done.pk]
    assert [m["id"] for m in api.get(f"{API}matches/?status=DONE").json()["results"]] == [done.pk]
    assert [m["id"] for m in api.get(f"{API}matches/?ladder={ladder4.pk}").json()["results"]] == [queued.pk]
    assert [m["id"] for m in api.get(f"{API}matches/?bot={bots[3].pk}").json()["results"]] == [queued.pk]
    assert api.get(f"{API}matches/?since=2000-01-01&until=2999-01-01").json()["results"]
    assert not api.get(f"{API}matches/?since=2999-01-01").json()["results"]
    for bad in ("status=FINISHED", "since=yesterday", "ladder=abc", "since=2030-01-01&until=2020-01-01"):
        response = api.get(f"{API}matches/?{bad}")
        assert response.status_code == 400 and response.json()["detail"], bad
    detail = api.get(f"{API}matches/{done.pk}/").json()
    assert detail["status"] == "DONE" and detail["has_replay"]
    assert sorted(s["rank"] for s in detail["seats"]) in ([1, 2], [1, 1])
    assert api.get(f"{API}matches/999999/").status_code == 404


def test_match_create_is_staff_only(alice_api, staff_user, ladder2, make_bot):
    a, b = make_bot(), make_bot()
    payload = {"ladder": ladder2.pk, "bot_ids": [a.pk, b.pk], "seed": 4}
    assert alice_api.post(f"{API}matches/", payload, format="json").status_code == 403
    staff = APIClient()
    staff.force_authenticate(staff_user)
    created = staff.post(f"{API}matches/", payload, format="json")
    assert created.status_code == 201 and created.json()["status"] == "QUEUED"
    bad = staff.post(f"{API}matches/", {**payload, "bot_ids": [a.pk, a.pk]}, format="json")
    assert bad.status_code == 400 and "only one seat" in bad.json()["detail"]


def test_replay_record_and_frames(api, ladder4, make_bot):
    bots = [make_bot() for _ in range(4)]
    match = play(ladder4, bots, 12)
    record = api.get(f"{API}matches/{match.pk}/replay/").json()
    assert record["format"] == "caravanserai-match/1" and record["seed"] == 12
    mid = len(record["actions"]) // 2
    spectator = api.get(f"{API}matches/{match.pk}/frames/{mid}/").json()
    assert "hands" in spectator["view"]  # finished match: the table sees every hand
    seat1 = api.get(f"{API}matches/{match.pk}/frames/{mid}/?seat=1").json()
    assert seat1["view"]["seat"] == 1 and "hands" not in seat1["view"] and "hand" in seat1["view"]
    expected = frame_at(replay_record(match_id=match.pk), mid, 1)
    assert seat1["view"] == expected["view"]
    batch = api.get(f"{API}matches/{match.pk}/frames/?start={mid}&count=3&seat=1").json()
    assert [f["step"] for f in batch["frames"]] == [mid, mid + 1, mid + 2]
    assert batch["frames"][0]["view"] == expected["view"]
    assert batch["frames"][2]["view"] == frame_at(replay_record(match_id=match.pk), mid + 2, 1)["view"]
    last = api.get(f"{API}matches/{match.pk}/frames/?start={len(record['actions']) - 1}&count=10").json()
    assert [f["step"] for f in last["frames"]][-1] == len(record["actions"])
    for bad in (
        f"frames/{mid}/?seat=4",
        f"frames/{mid}/?seat=x",
        "frames/100000/",
        "frames/?count=0",
        "frames/?start=-1",
        "frames/?count=9999",
    ):
        response = api.get(f"{API}matches/{match.pk}/{bad}")
        assert response.status_code == 400 and response.json()["detail"], bad


def test_replay_of_unfinished_match(api, ladder2, make_bot):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=3)
    match_mark_running(match_id=match.pk)
    for path in ("replay/", "frames/0/", "frames/"):
        response = api.get(f"{API}matches/{match.pk}/{path}")
        assert response.status_code == 404 and "no replay yet" in response.json()["detail"]
    assert api.get(f"{API}matches/999999/replay/").status_code == 404


def test_spectators_of_a_running_match_never_see_hands(ladder2, make_bot):
    match = play(ladder2, [make_bot(), make_bot()], 4)
    Match.objects.filter(pk=match.pk).update(status=MatchStatus.RUNNING)  # as if still being played
    with pytest.raises(ReplayUnavailable):
        replay_frames(match_id=match.pk, start=0, count=20)


def test_rating_history_and_ratings(api, ladder2, make_bot):
    a, b = make_bot(), make_bot()
    for seed in (1, 2, 3):
        play(ladder2, [a, b], seed)
    history = api.get(f"{API}bots/{a.pk}/history/?ladder={ladder2.pk}").json()
    assert len(history) == 3 and history[0]["elo_before"] == 1500.0
    assert all(h2["elo_before"] == h1["elo_after"] for h1, h2 in itertools.pairwise(history))
    ratings = api.get(f"{API}bots/{a.pk}/ratings/").json()
    assert ratings[0]["games"] == 3 and ratings[0]["elo"] == history[-1]["elo_after"]
    assert api.get(f"{API}bots/{a.pk}/history/?limit=0").status_code == 400
    assert api.get(f"{API}bots/999999/history/").status_code == 404


def test_token_auth(api, user, make_bot):
    response = api.post(
        f"{API}auth/token/", {"username": "alice", "password": "correct-horse-battery"}, format="json"
    )
    key = response.json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(f"{API}auth/me/").json()["username"] == "alice"
    assert (
        client.post(f"{API}bots/", {"name": "ByToken", "games": ["expedition-v1"]}, format="json").status_code
        == 201
    )
    wrong = api.post(f"{API}auth/token/", {"username": "alice", "password": "nope"}, format="json")
    assert wrong.status_code in (401, 403) and "wrong password" in wrong.json()["detail"]
    assert api.post(f"{API}auth/token/", {"username": "alice"}, format="json").status_code == 400


def test_throttles(settings, api, alice_api):
    rest = copy.deepcopy(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {"auth": "3/min", "writes": "2/min"}
    settings.REST_FRAMEWORK = rest
    clear_test_cache()  # this process's keys: a FLUSHDB would empty the other xdist processes' caches too
    codes = [
        api.post(f"{API}auth/token/", {"username": "x", "password": "y"}, format="json").status_code
        for _ in range(4)
    ]
    assert all(code in (401, 403) for code in codes[:3]) and codes[3] == 429
    writes = [
        alice_api.post(
            f"{API}bots/", {"name": f"T{i}", "games": ["expedition-v1"]}, format="json"
        ).status_code
        for i in range(3)
    ]
    assert writes == [201, 201, 429]
    throttled = alice_api.post(f"{API}bots/", {"name": "T9", "games": ["expedition-v1"]}, format="json")
    assert "throttled" in throttled.json()["detail"].lower()
    assert alice_api.get(f"{API}bots/").status_code == 200  # reads are not write-throttled


def test_schema_and_docs(api):
    schema = api.get(f"{API}schema/?format=json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert (
        "/api/v1/ladders/{ladder_id}/leaderboard/" in paths
        and "/api/v1/matches/{match_id}/frames/{step}/" in paths
    )
    assert api.get(f"{API}docs/").status_code == 200
