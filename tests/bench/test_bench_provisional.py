"""The games a new bot needs to leave provisional, as the leaderboard and README state them (`PUBLISHED`),
are what the ladder's own rating code gives (`python -m bench provisional`'s computation)."""

from __future__ import annotations

import statistics

import pytest

from bench.bench_provisional import PLAYER_COUNTS, PUBLISHED, fixed_rank_games, measure
from ladder.ratings.elo import DEFAULT_MU, DEFAULT_SIGMA, openskill_update
from ladder.ratings.standing import DEFAULT_PROVISIONAL_SIGMA


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_published_games_are_the_rating_codes(players):
    needed = measure(players)
    assert (statistics.median(needed.all_new), statistics.median(needed.settled)) == PUBLISHED[players]
    assert needed.always_last <= min(needed.all_new) and needed.settled_sigma < DEFAULT_PROVISIONAL_SIGMA


def test_fixed_rank_count_is_the_first_game_below_the_threshold():
    sigma, games = DEFAULT_SIGMA, 0
    while sigma > DEFAULT_PROVISIONAL_SIGMA:
        games += 1
        sigma = openskill_update([(DEFAULT_MU, sigma)] * 2, [2, 1], mu=DEFAULT_MU, sigma=DEFAULT_SIGMA)[0][1]
    assert fixed_rank_games(2, 2, DEFAULT_PROVISIONAL_SIGMA) == games
