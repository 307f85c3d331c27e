"""The pure rating maths: Elo by pairwise decomposition and OpenSkill."""

from __future__ import annotations

import math

import pytest

from ladder.ratings import elo


def test_two_equal_players_winner_gains_half_k():
    assert elo.elo_update([1500.0, 1500.0], [1, 2], k=32, scale=400) == [1516.0, 1484.0]


def test_tie_counts_as_half():
    assert elo.elo_update([1500.0, 1500.0], [1, 1], k=32, scale=400) == [1500.0, 1500.0]
    stronger, weaker = elo.elo_update([1600.0, 1400.0], [1, 1], k=32, scale=400)
    assert stronger < 1600.0 and weaker > 1400.0


def test_expected_score_uses_scale():
    # 400 points apart at scale 400: the favourite is expected to score 10/11.
    new = elo.elo_update([1900.0, 1500.0], [1, 2], k=32, scale=400)
    assert new[0] == pytest.approx(1900 + 32 * (1 - 10 / 11))


@pytest.mark.parametrize(
    ("ratings", "ranks"),
    [
        ([1500.0, 1520.0, 1480.0], [2, 1, 3]),
        ([1400.0, 1500.0, 1600.0, 1700.0], [1, 2, 2, 4]),
        ([1510.0, 1490.0, 1550.0, 1450.0, 1500.0], [5, 4, 3, 2, 1]),
    ],
)
def test_multiplayer_conserves_sum_and_bounds_change(ratings, ranks):
    new = elo.elo_update(ratings, ranks, k=32, scale=400)
    assert sum(new) == pytest.approx(sum(ratings), abs=1e-9)
    assert all(abs(a - b) <= 32 for a, b in zip(new, ratings, strict=True))
    best = ranks.index(1)
    assert new[best] > ratings[best]


def test_sole_winner_of_four_equal_players_gains_k_times_half():
    new = elo.elo_update([1500.0] * 4, [1, 2, 3, 4], k=32, scale=400)
    # Three pairs won, each (1 - 0.5) * 32 / 3.
    assert new[0] == pytest.approx(1516.0)
    assert new[3] == pytest.approx(1484.0)


@pytest.mark.parametrize(
    ("ratings", "ranks"),
    [([1500.0], [1]), ([1500.0, 1500.0], [1, 3]), ([1500.0, 1500.0], [0, 1]), ([1500.0, 1500.0], [1, 2, 3])],
)
def test_bad_ranks_raise(ratings, ranks):
    with pytest.raises(ValueError):
        elo.elo_update(ratings, ranks, k=32, scale=400)


def test_openskill_winner_gains_mu_and_everyone_loses_sigma_is_bounded():
    params = elo.RatingParams()
    before = [elo.initial(params)] * 3
    after = elo.rate_match(before, [1, 2, 3], params)
    assert after[0].mu > params.mu > after[2].mu
    assert all(r.sigma < params.sigma + 0.2 for r in after)
    assert after[0].conservative == pytest.approx(after[0].mu - 3 * after[0].sigma)


def test_rate_match_is_deterministic():
    params = elo.RatingParams(k=24, scale=300, start=1200, mu=30, sigma=9)
    before = [elo.SeatRating(1210.5, 31.2, 7.1), elo.SeatRating(1190.25, 28.0, 8.5)]
    assert elo.rate_match(before, [2, 1], params) == elo.rate_match(before, [2, 1], params)


@pytest.mark.parametrize("field", ["k", "scale", "mu", "sigma"])
def test_params_validate(field):
    with pytest.raises(ValueError, match=field):
        elo.RatingParams(**{field: -1.0}).validate()
    with pytest.raises(ValueError):
        elo.RatingParams(**{field: math.nan}).validate()
