"""The leaderboard's rules (pure): conservative ranking with shared ranks, provisional marks, tiers of
overlapping intervals, and the Wilson interval."""

from __future__ import annotations

import pytest

from ladder.ratings.standing import place, rating_interval, wilson_interval


def test_ranks_by_conservative_rating_not_mu():
    # A lucky newcomer (high mu, wide sigma) ranks below a bot the results are sure of.
    board = place([(30.0, 8.0), (26.0, 1.0), (24.0, 1.0)], provisional_sigma=5.0)
    assert [p.index for p in board] == [1, 2, 0]
    assert [p.rank for p in board] == [1, 2, 3]
    assert [p.provisional for p in board] == [False, False, True]


def test_equal_conservative_ratings_share_a_rank_and_the_next_skips():
    board = place([(25.0, 2.0), (25.0, 2.0), (20.0, 1.0)], provisional_sigma=5.0)
    assert [p.rank for p in board] == [1, 1, 3]
    assert [p.index for p in board] == [0, 1, 2]  # input order breaks the exact tie


def test_tiers_group_bots_whose_intervals_overlap_the_tier_leader():
    # intervals (mu +/- 2 sigma): [26, 34], [22, 30], [18, 26], [5, 13]
    board = place([(30.0, 2.0), (26.0, 2.0), (22.0, 2.0), (9.0, 2.0)], provisional_sigma=5.0)
    assert [p.tier for p in board] == [1, 1, 1, 2]  # [18, 26] touches the leader's [26, 34]
    board = place([(30.0, 1.0), (25.0, 1.0), (20.0, 1.0)], provisional_sigma=5.0)
    assert [p.tier for p in board] == [1, 2, 3]
    assert rating_interval(30.0, 1.0) == (28.0, 32.0)


def test_provisional_threshold_is_strict():
    board = place([(25.0, 5.0), (25.0, 5.0001)], provisional_sigma=5.0)
    assert [p.provisional for p in board] == [False, True]


def test_wilson_interval():
    assert wilson_interval(0, 0) is None
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    low, high = wilson_interval(0, 4)
    assert low == 0.0 and 0.4 < high < 0.5  # never below 0 and not a zero-width interval
    assert wilson_interval(3, 3)[1] == 1.0
    assert wilson_interval(4, 3) is None and wilson_interval(-1, 3) is None  # inconsistent: no interval
