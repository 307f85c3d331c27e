"""The live view of a running match over REST, the replay index, and the worker's publication of progress:
only public information while the match runs (no hand, no action id, no seed), the ladder's delay, each
seat's clock and the score series as the replay of the same match later shows them at that step, none for
a match of a duplicate set still being played, and the progress gone once the match is recorded
(the worker's side: tests/workers/test_matches.py)."""

from __future__ import annotations

import json

import pytest

from engine_service.referee import match_index, replay
from ladder.matches.services import match_create, match_mark_running, match_record_result
from ladder.replays import selectors
from ladder.replays.models import LiveProgress
from ladder.replays.services import live_progress_publish
from tests.ladder.conftest import make_record
from tests.ladder.replays.test_moves import _banked

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


def _changes(series: list[list[int]], upto: int) -> list[dict]:
    """A replay's score series up to `upto` as the points where a score changed, and the last step."""
    points = [{"step": 0, "scores": series[0]}]
    for step in range(1, upto + 1):
        if series[step] != points[-1]["scores"]:
            points.append({"step": step, "scores": series[step]})
    if points[-1]["step"] != upto:
        points.append({"step": upto, "scores": points[-1]["scores"]})
    return points


def test_the_live_frame_carries_the_clocks_and_score_series_the_replay_shows_at_its_step(running, api):
    match, record = running
    record.clocks = _banked(record)  # step s took s/1000 s and left 30 - s/100 s (seat 2 would be unclocked)
    match.ladder.live_delay_steps = 3
    match.ladder.save()
    seen = {}
    for published in (20, 45):  # the second poll builds on the series the first one computed
        assert live_progress_publish(
            match_id=match.pk, actions=record.actions[:published], clocks=record.clocks
        )
        body = api.get(f"/api/v1/matches/{match.pk}/live/").json()
        assert body["step"] == published - 3
        seen[body["step"]] = body["frame"]
    assert set(LiveProgress.objects.get(match=match).clocks) == {str(step) for step in range(45)}
    selectors._series.clear()  # another web process, with nothing kept, serves the same series
    again = api.get(f"/api/v1/matches/{match.pk}/live/").json()["frame"]
    assert again["score_series"] == seen[42]["score_series"]
    assert match_record_result(match_id=match.pk, record=record)
    series = api.get(f"/api/v1/matches/{match.pk}/moves/").json()["scores"]
    for step, frame in seen.items():
        replayed = api.get(f"/api/v1/matches/{match.pk}/frames/{step}/").json()
        assert frame["clocks"] == replayed["clocks"]  # only decisions before the step shown, never later ones
        assert all(clock is not None and clock["step"] < step for clock in frame["clocks"])
        assert frame["score_series"] == _changes(series, step)
        assert len(frame["score_series"]) > 2, "the scores changed during the steps shown"


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
