"""End to end with real processes, on PostgreSQL and Redis when DATABASE_URL and REDIS_URL are set (the
embedded defaults otherwise): SDK bots connect to the gateway, beat schedules matches, two workers play
them in parallel, and the leaderboard, matches, live frames and replays appear over REST; a practice
match asked for is played unrated. A worker killed with SIGKILL
mid-match and a gateway restarted mid-round (stopped, or killed and started at once) lose no match and rate
none twice, and forfeit no bot."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator

import pytest

from tests.workers.stack import Stack, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("end_to_end_stack")]  # one stack per run


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    s = Stack(tmp_path_factory.mktemp("e2e"), workers=2)
    try:
        yield s.start()
    finally:
        s.stop()


def test_bots_play_rated_matches_visible_over_rest(stack: Stack):
    def live_frame() -> dict | None:
        for match_id in stack.running():
            body = stack.rest(f"/api/v1/matches/{match_id}/live/")
            if body.get("frame") and body["steps"] > 0:
                return body
        return None

    live = wait_for(live_frame, 60, "a running match's live frame, published by its worker")
    assert live["frame"]["next_action"] is None and live["frame"]["view"].get("hands") is None
    wait_for(lambda: stack.done_count() >= 6, 90, "six finished matches")
    ladder2 = stack.info["ladders"]["2"]

    def leaderboard_rows() -> list[dict]:
        board = stack.rest(f"/api/v1/ladders/{ladder2}/leaderboard/")
        return board["results"] if isinstance(board, dict) else board

    # Matchmaking serves both ladders, not necessarily in turn: wait for the 2-player one to be rated.
    rows = wait_for(leaderboard_rows, 90, "a rated 2-player match on the leaderboard")
    assert all(row["games"] >= 1 for row in rows)
    matches = stack.rest("/api/v1/matches/?status=DONE")["results"]
    assert matches and all(m["status"] == "DONE" for m in matches)
    remote = [m for m in matches if any(not s["bot"]["is_house"] for s in m["seats"])]
    assert len(remote) == len(matches)  # matchmaking seats at least one connected bot in every match
    match_id = matches[0]["id"]
    record = stack.rest(f"/api/v1/matches/{match_id}/replay/")
    assert record["format"] == "caravanserai-match/1" and record["match_id"] == str(match_id)
    assert any(s["kind"] == "remote" for s in record["seats"])
    frame = stack.rest(f"/api/v1/matches/{match_id}/frames/10/")
    assert frame["step"] == 10
    # both workers played
    for name in ("worker1", "worker2"):
        wait_for(
            lambda name=name: "recorded in" in stack.procs[name].output(), 60, f"{name} to record a match"
        )
    stack.assert_rated_exactly_once()


def test_a_practice_match_is_played_unrated_and_replayed(stack: Stack):
    bot_id = min(int(b) for b in stack.info["tokens"])
    match_id = stack.request_practice(bot_id)
    wait_for(lambda: stack.status(match_id)[0] == "DONE", 120, "the practice match to be played")
    match = stack.rest(f"/api/v1/matches/{match_id}/")
    assert match["rated"] is False and match["has_replay"]
    assert match["seats"][0]["seat"] == 0 and match["seats"][0]["bot"]["id"] == bot_id
    assert stack.rest(f"/api/v1/matches/{match_id}/frames/3/")["step"] == 3
    ledger = stack.query("SELECT COUNT(*) FROM ratings_ratingledger WHERE match_id = ?", (match_id,))
    assert ledger[0][0] == 0
    stack.assert_rated_exactly_once()


def test_a_worker_killed_mid_match_loses_nothing(stack: Stack):
    def running_with_holder():
        for match_id in stack.running():
            pid = stack.lease_holder_pid(match_id)
            if pid:
                return match_id, pid
        return None

    match_id, pid = wait_for(running_with_holder, 60, "a running match")
    group = os.getpgid(pid)  # the whole worker: its main process and its pool child
    victim = next(p for p in stack.procs.values() if p.popen.pid == group)
    victim.kill(signal.SIGKILL)
    assert stack.status(match_id)[0] == "RUNNING"
    wait_for(lambda: stack.status(match_id)[0] == "DONE", 90, f"match {match_id} to finish elsewhere")
    _status, attempts = stack.status(match_id)
    assert attempts >= 2
    stack.start_worker(victim.name)  # back to two workers
    stack.assert_rated_exactly_once()


def test_a_gateway_restart_mid_round_loses_and_double_rates_nothing(stack: Stack):
    in_play = wait_for(lambda: stack.running(), 60, "matches in play")
    stack.procs["gateway"].stop(timeout=10)
    stack.start_gateway()
    for match_id in in_play:
        wait_for(
            lambda match_id=match_id: stack.status(match_id)[0] == "DONE", 120, f"match {match_id} to finish"
        )
    before = stack.done_count()
    wait_for(lambda: stack.done_count() >= before + 3, 90, "matches after the restart")
    assert not stack.query("SELECT id FROM matches_match WHERE status = 'ERROR'")
    stack.assert_rated_exactly_once()


def test_a_gateway_killed_and_restarted_at_once_forfeits_no_bot(stack: Stack):
    """SIGKILL, no goodbye: the SDK bots' backoff (at most 4 s) brings them back inside the reconnect grace,
    which counts from when the new gateway is up; no seat of a match in play records a disconnect."""
    in_play = wait_for(lambda: stack.running(), 60, "matches in play")
    stack.procs["gateway"].kill(signal.SIGKILL)
    stack.start_gateway()
    for match_id in in_play:
        wait_for(
            lambda match_id=match_id: stack.status(match_id)[0] == "DONE", 120, f"match {match_id} to finish"
        )
    marks = ",".join(str(i) for i in in_play)
    rows = stack.query(f"SELECT match_id, faults FROM matches_seat WHERE match_id IN ({marks})")
    faults = [(m, f) for m, raw in rows for f in (json.loads(raw) if isinstance(raw, str) else raw)]
    assert [x for x in faults if x[1]["kind"] == "disconnect"] == []
    stack.assert_rated_exactly_once()
