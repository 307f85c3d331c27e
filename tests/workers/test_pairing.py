"""The pure pairing maths: matchmaking tables, round robins, Swiss rounds, points and standings."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from workers.pairing import (
    Candidate,
    match_points,
    pair_key,
    plan_tables,
    recent_pairs,
    round_robin_rounds,
    standings_table,
    swiss_round,
)


def test_tables_pair_near_ratings_and_consume_capacity():
    candidates = [
        Candidate(1, 1500, free=1),
        Candidate(2, 1510, free=1),
        Candidate(3, 1900, free=1),
        Candidate(4, 1890, free=1),
    ]
    tables = plan_tables(candidates, 2, Counter(), random.Random(1), spread=1.0)
    assert sorted(tuple(sorted(t.bot_ids)) for t in tables) == [(1, 2), (3, 4)]
    assert all(c.free == 0 for c in candidates)


def test_repeats_are_avoided():
    candidates = [Candidate(1, 1500, free=1), Candidate(2, 1500, free=1), Candidate(3, 1500, free=1)]
    recent = recent_pairs([[1, 2], [1, 2], [2, 1]])
    assert recent[pair_key(1, 2)] == 3
    for seed in range(10):
        for c in candidates:
            c.free = 1
        tables = plan_tables(candidates, 2, recent, random.Random(seed), spread=50.0)
        assert tables and all(set(t.bot_ids) != {1, 2} for t in tables)


def test_house_bots_only_fill_seats_where_given():
    remote = [Candidate(1, 1500, free=2), Candidate(2, 1500, free=2)]
    house = [Candidate(10, 1500, free=10**6, house=True)]
    tables = plan_tables([*remote, *house], 3, Counter(), random.Random(3), max_tables=1)
    assert len(tables) == 1 and set(tables[0].bot_ids) == {1, 2, 10}
    # without house bots a 3-player table cannot be filled by two remote bots
    for c in remote:
        c.free = 2
    assert plan_tables(remote, 3, Counter(), random.Random(3)) == []
    # a table of only house bots is never made
    assert (
        plan_tables([*house, Candidate(11, 1500, free=10**6, house=True)], 2, Counter(), random.Random(3))
        == []
    )


def test_seats_rotate_towards_the_least_used():
    a = Candidate(1, 1500, free=1, seat_counts=Counter({0: 5}))
    b = Candidate(2, 1500, free=1, seat_counts=Counter({1: 5}))
    tables = plan_tables([a, b], 2, Counter(), random.Random(0))
    assert tables[0].bot_ids == (2, 1)


def test_duplicate_sets_rotate_seats_on_one_group():
    candidates = [Candidate(b, 1500, free=3) for b in (1, 2, 3)]
    tables = plan_tables(candidates, 3, Counter(), random.Random(5), duplicate_sets=True)
    assert len(tables) == 3
    assert len({t.duplicate_group for t in tables}) == 1 and tables[0].duplicate_group is not None
    for seat in range(3):
        assert sorted(t.bot_ids[seat] for t in tables) == [1, 2, 3]  # every bot once in every seat


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
