"""The pure tournament maths: points, round robins, Swiss rounds, standings and crosstable."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from pairing.tournament import (
    match_points,
    pair_key,
    round_robin_rounds,
    standings_table,
    swiss_round,
)


def test_match_points():
    assert match_points([1, 2]) == [1.0, 0.0]
    assert match_points([1, 1]) == [0.5, 0.5]
    assert match_points([2, 1, 3, 4]) == [pytest.approx(2 / 3), 1.0, pytest.approx(1 / 3), 0.0]
    with pytest.raises(ValueError):
        match_points([1])


@pytest.mark.parametrize("n_bots", [4, 5, 6])
def test_round_robin_two_players_meets_everyone_once(n_bots):
    bots = list(range(1, n_bots + 1))
    rounds = round_robin_rounds(bots, 2)
    assert len(rounds) == (n_bots - 1 if n_bots % 2 == 0 else n_bots)
    met = Counter(pair_key(*t) for r in rounds for t in r)
    assert set(met) == {pair_key(a, b) for a, b in itertools.combinations(bots, 2)}
    assert set(met.values()) == {1}
    for r in rounds:
        seated = [b for t in r for b in t]
        assert len(seated) == len(set(seated))


def test_round_robin_three_players_plays_every_group_once():
    rounds = round_robin_rounds([1, 2, 3, 4], 3)
    groups = [frozenset(t) for r in rounds for t in r]
    assert sorted(map(sorted, groups)) == sorted(
        map(sorted, map(frozenset, itertools.combinations([1, 2, 3, 4], 3)))
    )
    with pytest.raises(ValueError):
        round_robin_rounds([1, 2], 3)
    with pytest.raises(ValueError):
        round_robin_rounds([1, 1, 2], 2)


def test_swiss_pairs_leaders_and_gives_the_bye_to_the_lowest():
    standings = [(1, 2.0, 1500), (2, 2.0, 1400), (3, 1.0, 1500), (4, 1.0, 1500), (5, 0.0, 1500)]
    tables, byes = swiss_round(standings, 2, Counter(), {}, random.Random(0))
    assert byes == [5]
    assert {frozenset(t) for t in tables} == {frozenset({1, 2}), frozenset({3, 4})}
    # bot 5 had a bye already: the next lowest without one sits out
    tables, byes = swiss_round(standings, 2, Counter(), {}, random.Random(0), Counter({5: 1}))
    assert byes == [4]
    # 1 and 2 met already: 1 gets the next best opponent
    tables, _ = swiss_round(standings[:4], 2, Counter({pair_key(1, 2): 1}), {}, random.Random(0))
    assert {frozenset(t) for t in tables} == {frozenset({1, 3}), frozenset({2, 4})}


def test_standings_and_crosstable():
    results = [([1, 2], [1, 2]), ([2, 3], [1, 1]), ([3, 1], [2, 1])]
    table, cross = standings_table(results, [1, 2, 3])
    assert table[1]["points"] == 2.0 and table[1]["wins"] == 2 and table[1]["played"] == 2
    assert table[2]["points"] == 0.5 and table[3]["points"] == 0.5
    assert cross[1][2] == 1.0 and cross[2][1] == 0.0 and cross[2][3] == 0.5 and cross[3][2] == 0.5
    assert table[1]["buchholz"] == table[2]["points"] + table[3]["points"]
