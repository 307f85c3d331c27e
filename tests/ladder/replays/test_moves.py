"""The move list, the clocks and the score series of a finished match over REST, for every game on a seeded
match (a greedy house bot against two random ones: quicker to play than three greedy ones): one entry per
action in the game's words (never its id), grouped by round and turn, each seat's clock as the record
measured it (seconds used, bank left) on the moves and on every frame, the running score per seat at every
step ending on the result's scores, paging with clear errors, and a seat's frames still holding nothing of
another seat's hidden items."""

from __future__ import annotations

import json

import pytest

from engine_service.referee import MatchRecord
from ladder.ladders.services import ladder_create
from ladder.matches.services import match_create, match_mark_running, match_record_result
from ladder.replays.selectors import MAX_MOVES_PER_REQUEST
from tests.ladder.conftest import make_record

pytestmark = pytest.mark.django_db

GAMES = ["expedition-v1", "voyages-v1", "mp2-v1", "dragonda-v1"]


def _finished(game_id: str, make_bot, clocks=None, options=None) -> tuple[int, MatchRecord]:
    ladder = ladder_create(game_id=game_id, num_players=3, options=options or {})
    bots = [make_bot(name=f"{game_id} {i}", games=(game_id,)) for i in range(3)]
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=7)
    assert match_mark_running(match_id=match.pk)
    record = make_record(match, ("greedy", "random", "random"))
    if clocks is not None:
        record.clocks = clocks(record)
    assert match_record_result(match_id=match.pk, record=record)
    return match.pk, record


def _banked(record: MatchRecord) -> dict[int, list[float | None]]:
    """Clocked seats' decisions: step s took s/1000 s and left a bank of 30 - s/100 s (seat 2 unclocked)."""
    return {
        step: [step / 1000, None if seat == 2 else 30 - step / 100]
        for step, (seat, _action) in enumerate(record.actions)
    }


@pytest.mark.parametrize("game_id", GAMES)
def test_the_move_list_has_every_action_in_words_and_the_score_series(game_id, make_bot, api):
    match_id, record = _finished(game_id, make_bot)
    body = api.get(f"/api/v1/matches/{match_id}/moves/").json()
    moves = body["moves"]
    assert body["steps"] == record.steps == len(moves)
    assert [m["step"] for m in moves] == list(range(record.steps))
    assert [m["seat"] for m in moves] == [seat for seat, _action in record.actions]
    for move, (_seat, action_id) in zip(moves, record.actions, strict=True):
        assert "action" not in move and move["text"] and move["text"] != action_id
        assert move["clock"] is not None and move["clock"]["bank"] is None  # house seats are unclocked
        assert move["clock"]["seconds"] >= 0
    assert any(m["turn"] is not None for m in moves)
    rounds = [m["round"] for m in moves if m["round"] is not None]
    assert rounds == sorted(rounds) and rounds, "moves are in round order"
    assert body["score_label"]
    assert len(body["scores"]) == record.steps + 1
    assert all(len(scores) == 3 for scores in body["scores"])
    assert body["scores"][-1] == record.result["game"]["scores"]
    assert len({tuple(s) for s in body["scores"]}) > 1, "the scores change over the game"


def test_voyages_moves_never_name_the_goal_cards_a_seat_kept(make_bot, api):
    match_id, record = _finished("voyages-v1", make_bot, options={"goal_draft": True})
    text = json.dumps(api.get(f"/api/v1/matches/{match_id}/moves/").json())
    kept = [action for _seat, action in record.actions if action.startswith("keep")]
    assert kept and all(action not in text for action in kept)
    assert "kept 2 of the 4 goal cards" in text or "keeps 2 of the 4 goal cards" in text


def test_moves_are_paged_with_clear_errors(make_bot, api):
    match_id, record = _finished("expedition-v1", make_bot)
    page = api.get(f"/api/v1/matches/{match_id}/moves/?start=10&count=5").json()
    assert [m["step"] for m in page["moves"]] == [10, 11, 12, 13, 14]
    assert len(page["scores"]) == record.steps + 1 and page["start"] == 10
    tail = api.get(f"/api/v1/matches/{match_id}/moves/?start={record.steps}").json()
    assert tail["moves"] == []
    too_far = api.get(f"/api/v1/matches/{match_id}/moves/?start={record.steps + 1}")
    assert too_far.status_code == 400 and "outside this match" in json.dumps(too_far.json())
    too_many = api.get(f"/api/v1/matches/{match_id}/moves/?count={MAX_MOVES_PER_REQUEST + 1}")
    assert too_many.status_code == 400 and "count" in too_many.json()["detail"]
    missing = api.get("/api/v1/matches/987654/moves/")
    assert missing.status_code == 404 and "no match" in missing.json()["detail"]


def test_every_frame_carries_each_seats_last_clock_and_the_scores(make_bot, api):
    match_id, record = _finished("expedition-v1", make_bot, clocks=_banked)
    series = api.get(f"/api/v1/matches/{match_id}/moves/").json()["scores"]
    for seat in (None, 0):
        query = "" if seat is None else f"&seat={seat}"
        body = api.get(f"/api/v1/matches/{match_id}/frames/?start=0&count=60{query}").json()
        for frame in body["frames"]:
            step = frame["step"]
            assert frame["scores"] == series[step]
            actor = record.actions[step][0]
            assert frame["next_action"]["clock"] == {
                "seconds": step / 1000,
                "bank": None if actor == 2 else 30 - step / 100,
            }
            for s, clock in enumerate(frame["clocks"]):
                before = [k for k, (who, _a) in enumerate(record.actions[:step]) if who == s]
                if not before:
                    assert clock is None
                    continue
                last = before[-1]
                assert clock == {
                    "step": last,
                    "seconds": last / 1000,
                    "bank": None if s == 2 else 30 - last / 100,
                }
    final = api.get(f"/api/v1/matches/{match_id}/frames/{record.steps}/").json()
    assert final["scores"] == record.result["game"]["scores"] and final["next_action"] is None


def test_the_live_frame_carries_the_public_scores(ladder2, make_bot, api):
    from ladder.replays.services import live_progress_publish

    bots = [make_bot(name="Marco"), make_bot(name="Maffeo")]
    match = match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in bots], seed=5)
    assert match_mark_running(match_id=match.pk)
    record = make_record(match)
    assert live_progress_publish(match_id=match.pk, actions=record.actions[:30])
    frame = api.get(f"/api/v1/matches/{match.pk}/live/").json()["frame"]
    assert frame["scores"] == [p["gold"] for p in frame["view"]["players"]]
    assert api.get(f"/api/v1/matches/{match.pk}/moves/").status_code == 404  # no move list while it runs
