"""Pairing maths for ladder matchmaking, Swiss rounds and round robins, and tournament standings.

Pure: no Django, no I/O, no clock; randomness only from the `random.Random` the caller passes (seeded in
tests), so a pairing is reproducible from its inputs.

Ladder matchmaking (`plan_tables`): each table is built around an anchor, the remote bot with the most free
capacity (ties broken at random). The other seats go, one by one, to the candidate with the lowest cost:
    |rating - anchor rating + noise| + repeat_penalty * (recent meetings with the bots already seated)
                                     + house_penalty (house bots only),
noise ~ N(0, spread), so opponents are near in rating with some spread, repeats are avoided, and house bots
only fill seats remote bots cannot. Newcomers (new or provisional bots) anchor first, and their tables take
slow bots (house bots that search) only when no fast one is left, so a new bot's first result comes soon.
Seats are then rotated: among every order of the table, the one whose bots have sat least often in those
seats recently. A duplicate set is the same table played once per seat
rotation with one seed.

Tournament scoring (`match_points`): a seat earns, per opponent, 1 for finishing ahead, 1/2 for a tie, 0
behind, divided by the number of opponents (1 for a 2-player win, 1/2 for a draw, 0 for a loss).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Candidate:
    """A bot matchmaking may seat: its rating on the ladder, its free capacity, recent seat use."""

    bot_id: int
    rating: float
    free: int
    house: bool = False
    seat_counts: Counter[int] = field(default_factory=Counter)
    newcomer: bool = False  # new or provisional on this ladder: seated first, at a table that finishes soon
    slow: bool = False  # a bot whose decisions take long (a house bot that searches)


@dataclass(frozen=True)
class Table:
    """One match to create: bot ids in seat order; `duplicate_of` groups a duplicate set (same seed)."""

    bot_ids: tuple[int, ...]
    duplicate_group: int | None = None


def pair_key(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def recent_pairs(matches: Sequence[Sequence[int]]) -> Counter[tuple[int, int]]:
    """How often each pair of bots met in `matches` (each a list of bot ids)."""
    counts: Counter[tuple[int, int]] = Counter()
    for bots in matches:
        for a, b in itertools.combinations(bots, 2):
            counts[pair_key(a, b)] += 1
    return counts


def rotate_seats(
    bot_ids: Sequence[int], seat_counts: dict[int, Counter[int]], rng: random.Random
) -> tuple[int, ...]:
    """The seat order whose bots have sat least in those seats (ties at random)."""
    orders = list(itertools.permutations(bot_ids))
    rng.shuffle(orders)
    return min(orders, key=lambda order: sum(seat_counts.get(b, Counter())[i] for i, b in enumerate(order)))


def plan_tables(
    candidates: Sequence[Candidate],
    num_players: int,
    recent: Counter[tuple[int, int]],
    rng: random.Random,
    *,
    spread: float = 100.0,
    repeat_penalty: float = 150.0,
    house_penalty: float = 250.0,
    max_tables: int = 8,
    duplicate_sets: bool = False,
) -> list[Table]:
    """Tables for one ladder. Every table has at least one remote bot; free capacity is consumed (the caller's
    `Candidate.free` values are decremented, so several ladders can share one capacity budget)."""
    if num_players < 2:
        raise ValueError("a table needs at least two players")
    recent = Counter(recent)
    seat_counts = {c.bot_id: c.seat_counts for c in candidates}
    tables: list[Table] = []
    group = 0
    stuck: set[int] = set()  # anchors nobody is left to play
    while len(tables) < max_tables:
        anchors = [c for c in candidates if not c.house and c.free > 0 and c.bot_id not in stuck]
        if not anchors:
            break
        rng.shuffle(anchors)
        anchor = max(anchors, key=lambda c: (c.newcomer, c.free))
        chosen = [anchor]
        while len(chosen) < num_players:
            pool = [c for c in candidates if c.free > 0 and all(c.bot_id != x.bot_id for x in chosen)]
            if anchor.newcomer and any(not c.slow for c in pool):
                pool = [c for c in pool if not c.slow]
            if not pool:
                break
            costs = [
                abs(c.rating - anchor.rating + rng.gauss(0.0, spread))
                + repeat_penalty * sum(recent[pair_key(c.bot_id, x.bot_id)] for x in chosen)
                + (house_penalty if c.house else 0.0)
                for c in pool
            ]
            chosen.append(pool[costs.index(min(costs))])
        if len(chosen) < num_players:
            stuck.add(anchor.bot_id)
            continue
        ids = [c.bot_id for c in chosen]
        order = rotate_seats(ids, seat_counts, rng)
        rotations = [order]
        if duplicate_sets and all(c.house or c.free >= num_players for c in chosen):
            rotations = [order[i:] + order[:i] for i in range(num_players)]
        take = min(len(rotations), max_tables - len(tables))
        rotations = rotations[:take]
        dup = group if len(rotations) > 1 else None
        group += 1
        for seats in rotations:
            tables.append(Table(tuple(seats), dup))
            for i, b in enumerate(seats):
                seat_counts.setdefault(b, Counter())[i] += 1
        for c in chosen:
            if not c.house:
                c.free -= len(rotations)
        for a, b in itertools.combinations(ids, 2):
            recent[pair_key(a, b)] += len(rotations)
    return tables


# --- tournaments --------------------------------------------------------------------------------------------


def match_points(ranks: Sequence[int]) -> list[float]:
    """Points per seat for one match from its final ranks (see the module docstring)."""
    n = len(ranks)
    if n < 2:
        raise ValueError("a match has at least two seats")
    points = []
    for i, r in enumerate(ranks):
        beaten = sum(
            1.0 if r < other else 0.5 if r == other else 0.0 for j, other in enumerate(ranks) if j != i
        )
        points.append(beaten / (n - 1))
    return points


def round_robin_rounds(bot_ids: Sequence[int], num_players: int) -> list[list[tuple[int, ...]]]:
    """Every group of `num_players` bots meets once. Two players: the circle method (n - 1 rounds, or n with a
    bye when n is odd). More: all combinations, packed greedily into rounds where no bot plays twice."""
    bots = list(bot_ids)
    if len(set(bots)) != len(bots):
        raise ValueError("a bot can enter a tournament once")
    if len(bots) < num_players:
        raise ValueError(f"a round robin of {num_players}-player matches needs at least {num_players} bots")
    if num_players == 2:
        ring: list[int | None] = [*bots, None] if len(bots) % 2 else list(bots)
        pair_rounds: list[list[tuple[int, ...]]] = []
        for _ in range(len(ring) - 1):
            pairs: list[tuple[int, ...]] = []
            for i in range(len(ring) // 2):
                a, b = ring[i], ring[-1 - i]
                if a is not None and b is not None:
                    pairs.append((a, b) if len(pair_rounds) % 2 == 0 else (b, a))
            pair_rounds.append(pairs)
            ring = [ring[0], ring[-1], *ring[1:-1]]
        return pair_rounds
    remaining = list(itertools.combinations(bots, num_players))
    rounds: list[list[tuple[int, ...]]] = []
    while remaining:
        used: set[int] = set()
        this_round: list[tuple[int, ...]] = []
        for group in list(remaining):
            if used.isdisjoint(group):
                this_round.append(group)
                used.update(group)
                remaining.remove(group)
        rounds.append(this_round)
    # rotate seats so that every bot sits first about equally often
    rotated = []
    for r, groups in enumerate(rounds):
        rotated.append([g[r % num_players :] + g[: r % num_players] for g in groups])
    return rotated


def swiss_round(
    standings: Sequence[tuple[int, float, float]],
    num_players: int,
    met: Counter[tuple[int, int]],
    seat_counts: dict[int, Counter[int]],
    rng: random.Random,
    byes_had: Counter[int] | None = None,
) -> tuple[list[tuple[int, ...]], list[int]]:
    """One Swiss round. `standings` is (bot id, points, rating). Bots that cannot fill a table sit out with a
    bye: the lowest-placed among those with the fewest byes so far. The rest, ordered by points then rating,
    are seated table by table: the highest unseated bot, then the bots that met it (and the others already
    seated) least, higher-placed first. Returns the tables (seats rotated) and the byes."""
    byes_had = byes_had or Counter()
    order = [s[0] for s in sorted(standings, key=lambda s: (-s[1], -s[2], s[0]))]
    byes: list[int] = []
    for _ in range(len(order) % num_players):
        fewest = min(byes_had[b] for b in order if b not in byes)
        byes.append(next(b for b in reversed(order) if b not in byes and byes_had[b] == fewest))
    waiting = [b for b in order if b not in byes]
    tables = []
    while waiting:
        table = [waiting.pop(0)]
        while len(table) < num_players:
            best = min(
                range(len(waiting)),
                key=lambda i: (sum(met[pair_key(waiting[i], t)] for t in table), i),
            )
            table.append(waiting.pop(best))
        tables.append(rotate_seats(table, seat_counts, rng))
    return tables, byes


def standings_table(
    results: Sequence[tuple[Sequence[int], Sequence[int]]], bot_ids: Sequence[int]
) -> tuple[dict[int, dict[str, float]], dict[int, dict[int, float]]]:
    """Standings and crosstable from finished matches, each (bot ids in seat order, final ranks).
    Standings: points, played, wins (rank 1), Buchholz (sum of opponents' points). Crosstable: for each pair,
    the pairwise points of the row bot against the column bot over every match they shared."""
    points = {b: 0.0 for b in bot_ids}
    played = {b: 0 for b in bot_ids}
    wins = {b: 0 for b in bot_ids}
    opponents: dict[int, list[int]] = {b: [] for b in bot_ids}
    cross: dict[int, dict[int, float]] = {b: {} for b in bot_ids}
    for bots, ranks in results:
        for b, p in zip(bots, match_points(ranks), strict=True):
            if b in points:
                points[b] += p
                played[b] += 1
        for i, a in enumerate(bots):
            if a not in cross:
                continue
            if ranks[i] == 1:
                wins[a] += 1
            for j, b in enumerate(bots):
                if i == j:
                    continue
                opponents[a].append(b)
                score = 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
                cross[a][b] = cross[a].get(b, 0.0) + score
    table = {
        b: {
            "points": points[b],
            "played": played[b],
            "wins": wins[b],
            "buchholz": sum(points.get(o, 0.0) for o in opponents[b]),
        }
        for b in bot_ids
    }
    return table, cross
