"""The dataset export over REST: rows of a seeded finished match match its record (each seat's own
observation at each step, its legal actions, its chosen action, the final rank and score), no row holds
another seat's hidden items, the filters (bots, dates, minimum rating, other ladders, unfinished matches and
duplicate sets still in play), cursor paging that resumes, Parquet, clear errors and the throttle.

The two played matches are made once for the module (`module_db`); each test's changes roll back after it."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.utils import timezone
from rest_framework.settings import api_settings

from engine_service.games.rng import ChanceRng
from engine_service.referee import MatchRecord, replay
from ladder.bots.models import Bot
from ladder.ladders.models import Ladder
from ladder.ladders.services import ladder_create
from ladder.matches.models import Match
from ladder.matches.services import match_create
from ladder.ratings.models import RatingLedger
from ladder.replays import dataset
from tests.ladder.conftest import bot_factory, play

pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("replays-dataset")]


def rows_of(api, ladder_id: int, **params) -> tuple[list[dict], object]:
    response = api.get(f"/api/v1/ladders/{ladder_id}/dataset/", params)
    assert response.status_code == 200, getattr(response, "content", b"")[:300]
    body = b"".join(response.streaming_content).decode()
    return [json.loads(line) for line in body.splitlines()], response


@pytest.fixture(scope="module")
def played(module_db) -> tuple[Ladder, list[Bot], list[Match]]:
    ladder = ladder_create(game_id="expedition-v1", num_players=2)
    make_bot = bot_factory(get_user_model().objects.create_user("seat-bots"))
    bots = [make_bot(name=f"seat bot {i}") for i in range(3)]
    matches = [play(ladder, [bots[0], bots[1]], seed=41), play(ladder, [bots[1], bots[2]], seed=42)]
    return ladder, bots, matches


def test_rows_of_a_finished_match_are_its_record_seen_by_each_seat(played, api):
    ladder, _bots, (first, _second) = played
    rows, response = rows_of(api, ladder.pk, limit=5000)
    record = MatchRecord.loads(first.replay.record_text())
    mine = [r for r in rows if r["match"] == first.pk]
    assert response["Content-Type"] == "application/x-ndjson" and "X-Dataset-Next-Cursor" not in response
    assert [(r["seat"], r["action"]) for r in mine] == record.actions and [r["step"] for r in mine] == list(
        range(record.steps)
    )
    ranks, scores = record.result["ranks"], record.result["game"]["scores"]
    for row in mine[:: max(1, len(mine) // 25)]:
        state = replay(record, upto=row["step"], check=False)
        assert row["observation"] == state.observation(row["seat"])
        assert [a["id"] for a in row["legal_actions"]] == [a.id for a in state.legal_actions(row["seat"])]
        assert (row["final_rank"], row["final_score"]) == (ranks[row["seat"]], scores[row["seat"]])
        assert row["action_index"] is not None and row["game_id"] == "expedition-v1"
        # nothing of what another seat holds: the row is unchanged when every other hand is re-dealt
        hidden = state.shuffle_hidden(row["seat"], ChanceRng(row["step"] + 1))
        assert hidden.observation(row["seat"]) == row["observation"]
        other = 1 - row["seat"]
        assert (
            row["observation"]["hand"] != state.observation(other)["hand"] or not row["observation"]["hand"]
        )
        assert "hand" not in row["observation"]["players"][other]


def test_filters_bots_dates_rating_ladder_and_unfinished(played, api, make_bot):
    ladder, bots, (first, second) = played
    other_ladder = ladder_create(
        game_id="expedition-v1", num_players=2, options={"strategic_two_player": True}
    )
    play(other_ladder, [bots[0], bots[2]], seed=43)
    match_create(ladder_id=ladder.pk, bot_ids=[bots[0].pk, bots[2].pk], seed=44)  # never played

    def matches(**params):
        return sorted({r["match"] for r in rows_of(api, ladder.pk, limit=5000, **params)[0]})

    assert matches() == [first.pk, second.pk]
    assert matches(bots=str(bots[0].pk)) == [first.pk]
    assert matches(bots=f"{bots[0].pk},{bots[2].pk}") == [first.pk, second.pk]
    later = second.finished_at + timedelta(seconds=1)
    assert matches(since=later.isoformat()) == []
    assert matches(until=later.isoformat()) == [first.pk, second.pk]
    Match.objects.filter(pk=first.pk).update(finished_at=timezone.now() - timedelta(days=3))
    assert matches(since=(timezone.now() - timedelta(days=1)).isoformat()) == [second.pk]
    floor = min(RatingLedger.objects.filter(match=second).values_list("elo_before", flat=True))
    RatingLedger.objects.filter(match=first).update(elo_before=floor - 100)
    assert matches(min_rating=floor) == [second.pk]


def test_a_duplicate_set_still_in_play_is_held_back(played, api):
    ladder, bots, (first, second) = played
    match_create(
        ladder_id=ladder.pk, bot_ids=[bots[2].pk, bots[0].pk], seed=first.seed
    )  # same seed, unplayed
    assert {r["match"] for r in rows_of(api, ladder.pk, limit=5000)[0]} == {second.pk}


def test_pages_resume_from_the_cursor_and_join_into_the_whole_export(played, api):
    ladder, _bots, _matches = played
    whole, _ = rows_of(api, ladder.pk, limit=5000)
    joined, cursor, pages = [], None, 0
    while True:
        params = {"limit": 97} | ({"cursor": cursor} if cursor else {})
        rows, response = rows_of(api, ladder.pk, **params)
        assert len(rows) == int(response["X-Dataset-Rows"]) <= 97
        joined += rows
        pages += 1
        cursor = response.get("X-Dataset-Next-Cursor")
        if cursor is None:
            break
        assert f"cursor={cursor}" in response["Link"] and 'rel="next"' in response["Link"]
    assert pages == -(-len(whole) // 97)
    assert [(r["match"], r["step"]) for r in joined] == [(r["match"], r["step"]) for r in whole]


def test_a_page_re_simulates_a_bounded_number_of_matches(played, api, monkeypatch):
    ladder, _bots, (first, second) = played
    monkeypatch.setattr(dataset, "MAX_MATCHES_PER_REQUEST", 1)
    rows, response = rows_of(api, ladder.pk, limit=5000)
    assert {r["match"] for r in rows} == {first.pk}
    assert response["X-Dataset-Next-Cursor"] == f"m{second.pk}s0"


def test_parquet_holds_the_same_rows(played, api):
    ladder, _bots, _matches = played
    whole, _ = rows_of(api, ladder.pk, limit=300)
    response = api.get(f"/api/v1/ladders/{ladder.pk}/dataset/", {"output": "parquet", "limit": 300})
    assert response.status_code == 200 and response["Content-Type"] == "application/vnd.apache.parquet"
    table = pq.read_table(io.BytesIO(response.content))
    assert table.schema.metadata[b"format"] == b"caravanserai-decisions/1"
    parsed = table.to_pylist()
    assert len(parsed) == len(whole) == 300
    for got, want in zip(parsed, whole, strict=True):
        assert json.loads(got.pop("observation")) == want.pop("observation")
        assert json.loads(got.pop("legal_actions")) == want.pop("legal_actions")
        assert got | {"match": want["match"]} == want and got["match"] == str(want["match"])


def test_bad_queries_get_clear_errors(played, api):
    ladder, _bots, _matches = played
    url = f"/api/v1/ladders/{ladder.pk}/dataset/"
    assert api.get("/api/v1/ladders/999999/dataset/").status_code == 404
    response = api.get(url, {"cursor": "page-two"})
    assert response.status_code == 400 and "cursor" in response.json()["errors"]
    for bad in (
        {"limit": 0},
        {"limit": 100000},
        {"bots": "one,two"},
        {"output": "csv"},
        {"since": "yesterday"},
    ):
        response = api.get(url, bad)
        assert response.status_code == 400 and set(bad) <= set(response.json()["errors"]), bad


def test_the_dataset_has_its_own_throttle(played, alice_api):
    ladder, _bots, _matches = played
    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "dataset": "2/min"}
    with override_settings(REST_FRAMEWORK={**_rest_framework(), "DEFAULT_THROTTLE_RATES": rates}):
        statuses = [
            alice_api.get(f"/api/v1/ladders/{ladder.pk}/dataset/", {"limit": 1}).status_code for _ in range(3)
        ]
        assert statuses == [200, 200, 429]


def _rest_framework() -> dict:
    from django.conf import settings

    return dict(settings.REST_FRAMEWORK)
