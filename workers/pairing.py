"""Ladder matchmaking's table planning: which online bots play together, in which seats.

Layer: pure maths of the workers (`workers.matchmaking` calls it): no Django, no I/O, no clock; randomness
only from the `random.Random` the caller passes (seeded in tests), so a pairing is reproducible from its
inputs. The tournament maths both processes use (round robins, Swiss rounds, points, standings, `pair_key`,
`rotate_seats`) is the top-level `pairing` package's.

Ladder matchmaking (`plan_tables`): each table is built around an anchor, the remote bot with the most free
capacity (ties broken at random). The other seats go, one by one, to the candidate with the lowest cost:
    |rating - anchor rating + noise| + repeat_penalty * (recent meetings with the bots already seated)
                                     + house_penalty (house bots only),
noise ~ N(0, spread), so opponents are near in rating with some spread, repeats are avoided, and house bots
only fill seats remote bots cannot. Newcomers (new or provisional bots) anchor first, and their tables take
slow bots (house bots that search) only when no fast one is left, so a new bot's first result comes soon.
Seats are then rotated (`pairing.tournament.rotate_seats`): among every order of the table, the one whose
bots have sat least often in those seats recently. A duplicate set is the same table played once per seat
rotation with one seed.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from pairing.tournament import pair_key, rotate_seats


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


def recent_pairs(matches: Sequence[Sequence[int]]) -> Counter[tuple[int, int]]:
    """How often each pair of bots met in `matches` (each a list of bot ids)."""
    counts: Counter[tuple[int, int]] = Counter()
    for bots in matches:
        for a, b in itertools.combinations(bots, 2):
            counts[pair_key(a, b)] += 1
    return counts


@dataclass(frozen=True)
class Costs:
    """The weights of a seat's cost (see the module docstring)."""

    spread: float = 100.0
    repeat_penalty: float = 150.0
    house_penalty: float = 250.0


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
    costs = Costs(spread, repeat_penalty, house_penalty)
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
        chosen = _fill_table(anchor, candidates, num_players, recent, rng, costs)
        if len(chosen) < num_players:
            stuck.add(anchor.bot_id)
            continue
        order = rotate_seats([c.bot_id for c in chosen], seat_counts, rng)
        rotations = [order]
        if duplicate_sets and all(c.house or c.free >= num_players for c in chosen):
            rotations = [order[i:] + order[:i] for i in range(num_players)]
        rotations = rotations[: max_tables - len(tables)]
        dup = group if len(rotations) > 1 else None
        group += 1
        tables.extend(Table(tuple(seats), dup) for seats in rotations)
        _book(chosen, rotations, recent, seat_counts)
    return tables


def _fill_table(
    anchor: Candidate,
    candidates: Sequence[Candidate],
    num_players: int,
    recent: Counter[tuple[int, int]],
    rng: random.Random,
    costs: Costs,
) -> list[Candidate]:
    """The anchor and the cheapest candidates one seat at a time (fewer than `num_players` if none is left)."""
    chosen = [anchor]
    while len(chosen) < num_players:
        pool = [c for c in candidates if c.free > 0 and all(c.bot_id != x.bot_id for x in chosen)]
        if anchor.newcomer and any(not c.slow for c in pool):
            pool = [c for c in pool if not c.slow]
        if not pool:
            break
        cost = [
            abs(c.rating - anchor.rating + rng.gauss(0.0, costs.spread))
            + costs.repeat_penalty * sum(recent[pair_key(c.bot_id, x.bot_id)] for x in chosen)
            + (costs.house_penalty if c.house else 0.0)
            for c in pool
        ]
        chosen.append(pool[cost.index(min(cost))])
    return chosen


def _book(
    chosen: Sequence[Candidate],
    rotations: Sequence[tuple[int, ...]],
    recent: Counter[tuple[int, int]],
    seat_counts: dict[int, Counter[int]],
) -> None:
    """Count the tables just planned: seats used, remote capacity consumed, pairs met."""
    for seats in rotations:
        for i, b in enumerate(seats):
            seat_counts.setdefault(b, Counter())[i] += 1
    for c in chosen:
        if not c.house:
            c.free -= len(rotations)
    for a, b in itertools.combinations([c.bot_id for c in chosen], 2):
        recent[pair_key(a, b)] += len(rotations)
