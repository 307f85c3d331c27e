"""The luck bench's statistics on fake pools whose answer is known (seat-and-seed luck that a duplicate set
cancels exactly, identical matches, luck of each match alone), the pseudo-sets it draws, and that a played
set records each bot's result under the right rotation."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bench.bench_luck import (
    EPSILONS,
    PLAYERS,
    EpsilonGreedy,
    PlayedSet,
    bootstrap_weights,
    draw_units,
    interval,
    needed,
    ordered_share,
    plan_pool,
    play_set,
    pool_arrays,
    rating_right,
    rotation_seats,
    variances,
)
from engine_service.referee import HouseSeat, run_match


def fake_pool(sets: int, luck: str, seed: int = 1) -> list[PlayedSet]:
    """Bot b scores 10 b plus luck: "seat" luck belongs to the seed and seat (the same in every rotation of
    a set), "match" luck to the match alone, "none" makes every match of a table identical."""
    rng = random.Random(seed)
    pool = []
    for _ in range(sets):
        bots = rng.sample(range(len(EPSILONS)), PLAYERS)
        start = bots.index(min(bots))
        lineup = tuple(bots[start:] + bots[:start])
        seat_luck = [rng.gauss(0, 8) for _ in range(PLAYERS)]
        ranks, scores = [], []
        for k in range(PLAYERS):
            seat_of = [(j - k) % PLAYERS for j in range(PLAYERS)]
            noise = {"seat": [seat_luck[s] for s in seat_of], "match": [rng.gauss(0, 8) for _ in seat_of]}
            row = [10.0 * b + noise.get(luck, [0.0] * PLAYERS)[j] for j, b in enumerate(lineup)]
            order = sorted(range(PLAYERS), key=lambda j: -row[j])
            ranks.append(tuple(order.index(j) + 1 for j in range(PLAYERS)))
            scores.append(tuple(row))
        pool.append(PlayedSet(rng.randrange(2**32), lineup, tuple(ranks), tuple(scores)))
    return pool


def _variances(pool: list[PlayedSet], merit: str) -> dict[str, np.ndarray]:
    arrays = pool_arrays(pool)
    return variances(arrays, merit, bootstrap_weights(arrays.sets, 200, np.random.default_rng(3)))


def test_a_set_cancels_the_luck_of_its_seed_and_seats():
    v = _variances(fake_pool(120, "seat"), "score")
    assert v["paired"][0] == pytest.approx(0.0, abs=1e-9)
    assert v["independent"][0] > 10.0  # two seats' luck of sd 8 each, over three matches
    assert interval(v["paired"] / v["independent"])["high"] < 1e-9


def test_identical_matches_have_no_variance_either_way():
    v = _variances(fake_pool(60, "none"), "score")
    assert v["paired"][0] == pytest.approx(0.0, abs=1e-12)
    assert v["independent"][0] == pytest.approx(0.0, abs=1e-12)


def test_luck_of_each_match_alone_gives_a_ratio_near_one():
    for merit in ("score", "rank"):
        v = _variances(fake_pool(300, "match"), merit)
        ratio = interval(v["paired"] / v["independent"])
        assert ratio["low"] < 1.0 < ratio["high"] and 0.8 < ratio["value"] < 1.25
    # per match: the variance of two seats' noise, 2 * 8 ** 2 = 128, over 3 matches
    assert _variances(fake_pool(300, "match"), "score")["independent"][0] == pytest.approx(128 / 3, rel=0.15)


def test_pseudo_sets_are_one_table_on_three_seeds_and_sets_one_seed():
    arrays = pool_arrays(fake_pool(200, "match"))
    drawn = draw_units(arrays, 5, 30, np.random.default_rng(4))
    dup, ind = drawn["duplicate"], drawn["independent"]
    assert (dup == dup[:, :, :1]).all()
    assert (arrays.group[ind] == arrays.group[dup]).all()  # the duplicate unit's table
    assert all(len(set(triple)) == PLAYERS for triple in ind.reshape(-1, PLAYERS).tolist())


def test_ordering_share_and_matches_needed():
    arrays = pool_arrays(fake_pool(200, "none"))
    share = ordered_share(arrays, draw_units(arrays, 20, 40, np.random.default_rng(5))["duplicate"])
    assert share[-1] == 1.0 and share[0] == 0.0  # one table leaves a bot unseen, scored 0
    assert needed(np.array([0.5, 0.95, 0.85, 0.92, 0.95])) == 4
    assert needed(np.array([0.95, 0.99])) == 1
    assert needed(np.array([0.95, 0.5])) is None


def test_the_ladder_rating_orders_a_field_that_never_varies():
    pool = fake_pool(200, "none")
    right = rating_right(pool, draw_units(pool_arrays(pool), 2, 60, np.random.default_rng(6))["duplicate"])
    assert right.shape == (2, 60 * PLAYERS) and right[:, -1].all()


def test_a_played_set_records_each_bot_under_its_rotation():
    plan = plan_pool("expedition-v1", 1)[0]
    played = play_set(plan)
    k = 1
    bots = rotation_seats(plan.lineup, k)
    seats = [HouseSeat(EpsilonGreedy(EPSILONS[b], seed=(plan.seed + 1_000_003 * b) % 2**32)) for b in bots]
    record = run_match("expedition-v1", PLAYERS, plan.seed, seats)
    assert record.result is not None
    for seat, bot in enumerate(bots):
        j = plan.lineup.index(bot)
        assert played.ranks[k][j] == record.result["ranks"][seat]
        assert played.scores[k][j] == record.result["game"]["scores"][seat]
