"""A finished match's frames as a seat over REST, in every game: the step before the end hides the other
seats' hidden items, the final step (the game over) shows every seat's, the seat's own view kept."""

from __future__ import annotations

import pytest

from engine_service.referee import replay
from ladder.ladders.services import ladder_create
from tests.ladder.conftest import play

pytestmark = pytest.mark.django_db

# Where each game's revealed table names every seat's hidden items, one entry per seat.
SEAT_ITEMS = {
    "expedition-v1": "hands",
    "voyages-v1": "all_goals",
    "mp2-v1": "all_goals",
    "dragonda-v1": "hands",
}


@pytest.mark.parametrize("game_id", sorted(SEAT_ITEMS))
def test_the_final_frame_as_a_seat_shows_every_seats_hidden_items(game_id, make_bot, api):
    ladder = ladder_create(game_id=game_id, num_players=3)
    match = play(ladder, [make_bot(games=(game_id,)) for _ in range(3)], seed=23)
    record = match.replay.record()
    final, before_final = replay(record), replay(record, upto=record.steps - 1)
    items = SEAT_ITEMS[game_id]
    for seat in range(3):
        body = api.get(
            f"/api/v1/matches/{match.pk}/frames/?start={record.steps - 1}&count=2&seat={seat}"
        ).json()
        before, last = body["frames"]
        assert body["revealed"] is False  # the spectator's flag: a seat's view reveals by the game's end
        assert items not in before["view"] and before["view"] == before_final.observation(seat)
        assert last["result"] is not None and last["view"]["seat"] == seat
        assert last["view"][items] == final.spectator_view(reveal=True)[items]
        own = final.observation(seat)
        assert {key: last["view"][key] for key in own} == own
