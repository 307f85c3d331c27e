"""Tournament maths: round robins, Swiss rounds, match points and standings, shared by the ladder (which
pairs and scores tournaments in its services and selectors) and the workers (matchmaking's seat rotation).

Layer: pure, outside both processes. It imports no Django, no Celery, no gRPC and nothing of `ladder`,
`workers` or `engine_service`; no I/O, no clock; randomness only from the `random.Random` the caller passes
(seeded in tests), so a pairing is reproducible from its inputs.

Scoring (`match_points`): a seat earns, per opponent, 1 for finishing ahead, 1/2 for a tie, 0 behind, divided
by the number of opponents (1 for a 2-player win, 1/2 for a draw, 0 for a loss).

Seats (`rotate_seats`): among every order of a table, the one whose bots have sat least often in those seats
recently (ties at random).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence


def pair_key(a: int, b: int) -> tuple[int, int]:
    """The pair of two bot ids in a fixed order (the smaller first): a key for "these two met"."""
    return (a, b) if a < b else (b, a)


def rotate_seats(
    bot_ids: Sequence[int], seat_counts: dict[int, Counter[int]], rng: random.Random
) -> tuple[int, ...]:
    """The seat order whose bots have sat least in those seats (ties at random)."""
    orders = list(itertools.permutations(bot_ids))
    rng.shuffle(orders)
    return min(orders, key=lambda order: sum(seat_counts.get(b, Counter())[i] for i, b in enumerate(order)))


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
