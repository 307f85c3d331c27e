"""Matchmaking's table planning (pure): near ratings, capacity, repeats avoided, house bots, seat rotation."""

from __future__ import annotations

import random
from collections import Counter

from pairing.tournament import pair_key
from workers.pairing import Candidate, plan_tables, recent_pairs


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
