"""The live view of a running match over REST, the replay index, and the worker's publication of progress:
only public information while the match runs (no hand, no action id, no seed), the ladder's delay, none for
a match of a duplicate set still being played, and the progress gone once the match is recorded
(the worker's side: tests/workers/test_matches.py)."""

from __future__ import annotations

import json

import pytest

from engine_service.referee import match_index, replay
from ladder.matches.services import match_create, match_mark_running, match_record_result
from ladder.replays.models import LiveProgress
from ladder.replays.services import live_progress_publish
from tests.ladder.conftest import make_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def running(ladder2, make_bot):
    bots = [make_bot(name="Marco"), make_bot(name="Maffeo")]
    match = match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in bots], seed=918_273_645)
    assert match_mark_running(match_id=match.pk)
    return match, make_record(match)


def test_live_frame_is_the_spectators_view_of_the_published_actions(running, api):
    match, record = running
    assert live_progress_publish(match_id=match.pk, actions=record.actions[:12])
    body = api.get(f"/api/v1/matches/{match.pk}/live/").json()
    assert body["status"] == "RUNNING" and body["steps"] == 12 and body["step"] == 12
    frame = body["frame"]
    assert frame["step"] == 12 and frame["next_action"] is None and frame["result"] is None
    assert frame["view"] == replay(record, upto=12).spectator_view(reveal=False)
    assert frame["view"].get("hands") is None and frame["view"].get("hand") is None
    assert all(len(line["text"]) > 5 and "{" not in line["text"] for line in frame["log"])
    text = json.dumps(body)
    assert str(match.seed) not in text
    for _seat, action_id in record.actions[:12]:
        if action_id.startswith("move:"):
            assert action_id not in text  # the actions themselves are never served


def test_live_frame_keeps_the_ladders_delay(running, api):
    match, record = running
    match.ladder.live_delay_steps = 5
    match.ladder.save()
    live_progress_publish(match_id=match.pk, actions=record.actions[:12])
    body = api.get(f"/api/v1/matches/{match.pk}/live/").json()
    assert body["steps"] == 12 and body["step"] == 7 and body["frame"]["step"] == 7


def test_no_live_view_for_an_unfinished_duplicate_set(running, ladder2, make_bot, api):
    match, record = running
    others = [make_bot(name="Niccolo"), make_bot(name="Rustichello")]
    match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in others], seed=match.seed)
    live_progress_publish(match_id=match.pk, actions=record.actions[:3])
    response = api.get(f"/api/v1/matches/{match.pk}/live/")
    assert response.status_code == 404 and "duplicate set" in response.json()["detail"]


def test_a_match_not_running_has_no_live_frame_and_its_progress_goes(running, api):
    match, record = running
    live_progress_publish(match_id=match.pk, actions=record.actions[:3])
    assert match_record_result(match_id=match.pk, record=record)
    assert not LiveProgress.objects.filter(match=match).exists()
    body = api.get(f"/api/v1/matches/{match.pk}/live/").json()
    assert body["status"] == "DONE" and body["frame"] is None
    assert not live_progress_publish(match_id=match.pk, actions=record.actions[:3])  # over: not stored
    assert api.get("/api/v1/matches/999999/live/").status_code == 404


def test_replay_index_lists_where_rounds_and_turns_begin(running, api):
    match, record = running
    assert match_record_result(match_id=match.pk, record=record)
    body = api.get(f"/api/v1/matches/{match.pk}/index/").json()
    assert body == match_index(record)
    assert body["rounds"][0] == {"round": 1, "step": 0}
    assert body["turns"] == sorted(set(body["turns"])) and len(body["turns"]) > len(body["rounds"])
