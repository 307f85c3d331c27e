"""The leaderboard says how many games a new bot needs before it stops being provisional, per player count,
with the figures `python -m bench provisional` computes (`PUBLISHED`), and only where they hold (the
default rating parameters and threshold)."""

from __future__ import annotations

import pytest

from bench.bench_provisional import PUBLISHED
from ladder.ladders.services import ladder_create

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("players", sorted(PUBLISHED))
def test_the_board_states_the_measured_games(client, players):
    ladder = ladder_create(game_id="expedition-v1", num_players=players)
    html = client.get(f"/ladders/{ladder.slug}/").content.decode()
    all_new, settled = PUBLISHED[players]
    assert f"after about {all_new} games while every bot at its tables is new" in html
    assert f"after about {settled} among settled bots" in html


def test_no_figures_for_another_threshold(client):
    ladder = ladder_create(game_id="expedition-v1", num_players=3)
    ladder.provisional_sigma = 4.0
    ladder.save(update_fields=["provisional_sigma"])
    html = client.get(f"/ladders/{ladder.slug}/").content.decode()
    assert "above 4.0. The bot is ranked" in html and "among settled bots" not in html
