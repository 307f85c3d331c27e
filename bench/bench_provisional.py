"""How many rated games a new bot needs before it stops being provisional (its OpenSkill sigma at or below
the ladder's `provisional_sigma`, default 5.0), computed with the ladder's own rating code
(`ladder.ratings.elo.openskill_update` at the default mu 25 and sigma 25/3).

Sigma falls by an amount that depends on the match's finishing order and on the seats' ratings, so the
count is a function of the results. Bots of equal strength are assumed (every finishing order equally
likely), drawn from fixed seeds, so the figures are the same on every run:
- "all new": a field of as many new bots as seats plays match after match (every seat new, the ladder's
  first days): the games each bot needs, over FIELDS fields;
- "among settled": one new bot plays opponents already settled (mu 25 and the sigma an all-new field has
  after SETTLED_AFTER games: a ladder that has been running), over NEWCOMERS new bots;
- the extremes: a bot that always finishes first, or always last (every seat even, mu equal).

Run: `python -m bench provisional`; writes bench/results/provisional.json. `PUBLISHED` holds the medians
the leaderboard page and README state; tests/bench/test_bench_provisional.py checks them against this
computation, so a change of the rating maths that moves them fails there.
"""

from __future__ import annotations

import os
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from bench.common import percentile, print_table, write_results
from ladder.ratings.elo import DEFAULT_MU, DEFAULT_SIGMA, openskill_update
from ladder.ratings.standing import DEFAULT_PROVISIONAL_SIGMA

PLAYER_COUNTS = (2, 3, 4, 5)
FIELDS = 100
NEWCOMERS = 400
SETTLED_AFTER = 100
# median games to sigma <= 5.0 per player count: (every seat new, among settled opponents)
PUBLISHED = {2: (21, 12), 3: (24, 11), 4: (30, 13), 5: (37, 16)}


@dataclass(frozen=True)
class Needed:
    """Games to leave provisional at one player count: every bot's count (all new, among settled) and the
    extremes (always first, always last) when every seat is new."""

    players: int
    all_new: list[int]
    settled: list[int]
    settled_sigma: float
    always_first: int
    always_last: int


def _update(skills: Sequence[tuple[float, float]], ranks: Sequence[int]) -> list[tuple[float, float]]:
    return openskill_update(skills, ranks, mu=DEFAULT_MU, sigma=DEFAULT_SIGMA)


def field_games(players: int, rng: random.Random, threshold: float) -> list[int]:
    """One all-new field: the game after which each bot's sigma first is at most `threshold`."""
    skills = [(DEFAULT_MU, DEFAULT_SIGMA)] * players
    done: list[int | None] = [None] * players
    played = 0
    while any(d is None for d in done):
        played += 1
        skills = _update(skills, rng.sample(range(1, players + 1), players))
        done = [
            d if d is not None or s > threshold else played for d, (_, s) in zip(done, skills, strict=True)
        ]
    return [d for d in done if d is not None]


def field_sigma(players: int, rng: random.Random, games: int) -> float:
    """The median sigma of an all-new field after `games` matches among themselves."""
    skills = [(DEFAULT_MU, DEFAULT_SIGMA)] * players
    for _ in range(games):
        skills = _update(skills, rng.sample(range(1, players + 1), players))
    return statistics.median(s for _, s in skills)


def newcomer_games(players: int, rng: random.Random, threshold: float, opponent_sigma: float) -> int:
    """One new bot among settled opponents (mu at the start value, `opponent_sigma`)."""
    me = (DEFAULT_MU, DEFAULT_SIGMA)
    opponents = [(DEFAULT_MU, opponent_sigma)] * (players - 1)
    played = 0
    while me[1] > threshold:
        played += 1
        me = _update([me, *opponents], rng.sample(range(1, players + 1), players))[0]
    return played


def fixed_rank_games(players: int, rank: int, threshold: float) -> int:
    """Every seat new and even (mu and sigma equal); the bot always finishes `rank`."""
    sigma, played = DEFAULT_SIGMA, 0
    order = [rank] + [r for r in range(1, players + 1) if r != rank]
    while sigma > threshold:
        played += 1
        sigma = _update([(DEFAULT_MU, sigma)] * players, order)[0][1]
    return played


def measure(players: int, *, fields: int = FIELDS, newcomers: int = NEWCOMERS) -> Needed:
    threshold = DEFAULT_PROVISIONAL_SIGMA
    rng = random.Random(f"provisional/{players}")
    all_new = [g for _ in range(fields) for g in field_games(players, rng, threshold)]
    settled_sigma = statistics.median(field_sigma(players, rng, SETTLED_AFTER) for _ in range(9))
    settled = [newcomer_games(players, rng, threshold, settled_sigma) for _ in range(newcomers)]
    return Needed(
        players,
        all_new,
        settled,
        settled_sigma,
        always_first=fixed_rank_games(players, 1, threshold),
        always_last=fixed_rank_games(players, players, threshold),
    )


HEADERS = ["players", "all new: median [5%-95%]", "always 1st / always last", "settled sigma",
           "among settled: median [5%-95%]"]  # fmt: skip


def _spread(values: Sequence[int]) -> str:
    return f"{statistics.median(values):g} [{percentile(values, 5):g}-{percentile(values, 95):g}]"


def main() -> int:
    load = [round(v, 2) for v in os.getloadavg()]
    results = [measure(n) for n in PLAYER_COUNTS]
    rows = [
        [
            r.players,
            _spread(r.all_new),
            f"{r.always_first} / {r.always_last}",
            f"{r.settled_sigma:.2f}",
            _spread(r.settled),
        ]
        for r in results
    ]
    print(
        f"games until sigma <= {DEFAULT_PROVISIONAL_SIGMA} (start sigma {DEFAULT_SIGMA:.2f}), bots of equal strength"
    )
    print_table(HEADERS, rows)
    figures = {
        str(r.players): {
            "all_new": {
                "median": statistics.median(r.all_new),
                "p5": percentile(r.all_new, 5),
                "p95": percentile(r.all_new, 95),
                "bots": len(r.all_new),
            },
            "always_first": r.always_first,
            "always_last": r.always_last,
            "settled_sigma": round(r.settled_sigma, 3),
            "among_settled": {
                "median": statistics.median(r.settled),
                "p5": percentile(r.settled, 5),
                "p95": percentile(r.settled, 95),
                "bots": len(r.settled),
            },
        }
        for r in results
    }
    write_results(
        "provisional",
        {
            "provisional_sigma": DEFAULT_PROVISIONAL_SIGMA,
            "load_average": load,
            "fields": FIELDS,
            "newcomers": NEWCOMERS,
            "settled_after": SETTLED_AFTER,
            "players": figures,
        },
    )
    return 0
