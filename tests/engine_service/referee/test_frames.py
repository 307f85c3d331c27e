"""Frames as a seat, in every game: each frame before the game is over is exactly that seat's observation
(no other seat's hidden item), and the final frame, the game over, holds every seat's hidden items too (the
revealed table's keys) while keeping the seat's own perspective (its "seat", its own hand or goals)."""

from __future__ import annotations

import pytest

from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, frame_at, frames, replay, run_match
from engine_service.referee.replay import apply_recorded

GAMES = [("expedition-v1", 3), ("voyages-v1", 3), ("mp2-v1", 3), ("dragonda-v1", 3)]
# Where each game's revealed table names every seat's hidden items, one entry per seat.
SEAT_ITEMS = {
    "expedition-v1": "hands",
    "voyages-v1": "all_goals",
    "mp2-v1": "all_goals",
    "dragonda-v1": "hands",
}


@pytest.mark.parametrize(("game_id", "players"), GAMES, ids=[g for g, _ in GAMES])
def test_a_seats_frames_hide_the_others_until_the_final_one_reveals_every_seat(game_id, players):
    seats = [HouseSeat(make_policy("random", seed=i)) for i in range(players)]
    record = run_match(game_id, players, 5, seats, {})
    final = replay(record)
    assert final.is_over()
    revealed = final.spectator_view(reveal=True)
    hidden_keys = set(revealed) - set(final.spectator_view())
    items = SEAT_ITEMS[game_id]
    assert items in hidden_keys and len(revealed[items]) == players
    for seat in range(players):
        run = frames(record, start=0, count=record.steps + 1, seat=seat)
        state = replay(record, upto=0)
        for frame, (actor, action_id) in zip(run, record.actions, strict=False):
            assert frame["view"] == state.observation(seat), f"seat {seat} at step {frame['step']}"
            assert not hidden_keys & set(frame["view"]), f"seat {seat} at step {frame['step']}"
            apply_recorded(state, actor, action_id)
        view = run[-1]["view"]
        assert run[-1]["step"] == record.steps and run[-1]["result"] is not None
        assert {key: view[key] for key in hidden_keys} == {key: revealed[key] for key in hidden_keys}
        assert view[items] == revealed[items]  # every seat's, the others' included
        own = final.observation(seat)
        assert {key: view[key] for key in own} == own  # the seat's own keys and perspective, unchanged
        assert view["seat"] == seat
        assert frame_at(record, record.steps, seat)["view"] == view
