"""Luck control, measured: how many matches a ladder of bots of known strength needs before its ranking is
right and stays right, with and without duplicate sets (the same seed played once per seat rotation, so
every bot meets the same dice and cards from each seat).

For each game, four house bots of known order (epsilon-greedy: the greedy house bot playing a uniformly
random legal action with probability 1, 0.6, 0.3 and 0; the order is checked by the mean rank each level
gets) play N three-player matches: each match seats three of the four, drawn at random, in random seats. In
"independent" mode every match has its own seed; in "duplicate" mode the matches come in sets of three that
share a seed with the seats rotated. Ratings are the ladder's own (`ladder.ratings.elo.rate_match`, default
parameters) and the ranking is the ladder's rule: the conservative OpenSkill rating, mu - 3 sigma. Reported
per game and mode, over R replicates (different seeds): the median number of matches after which the
ranking equals the true order and never leaves it, how often it is right at the end, and Kendall's tau
between the ranking and the true order after N/4, N/2 and N matches.

Run: `python -m bench luck` (CARAVANSERAI_BENCH_LUCK_MATCHES, default 120, and
CARAVANSERAI_BENCH_LUCK_REPLICATES, default 3, set the size; matches are played on every core).
"""

from __future__ import annotations

import os
import random
import statistics
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from bench.common import print_table, write_results
from engine_service.games import Action
from engine_service.policies import make_policy
from engine_service.policies.base import Policy
from engine_service.referee import HouseSeat, run_match
from ladder.ratings.elo import RatingParams, SeatRating, initial, rate_match

GAMES = ("expedition-v1", "voyages-v1", "mp2-v1", "dragonda-v1")
EPSILONS = (1.0, 0.6, 0.3, 0.0)  # weakest first: the true order, bot 0 < 1 < 2 < 3
PLAYERS = 3
MODES = ("independent", "duplicate")


class EpsilonGreedy(Policy):
    """The greedy house bot, playing a uniformly random legal action with probability `epsilon`."""

    def __init__(self, epsilon: float, seed: int) -> None:
        super().__init__(seed)
        self.name = f"eps-{epsilon:g}"
        self.epsilon = epsilon
        self.greedy = make_policy("greedy", seed=seed)
        self.random = random.Random(seed)

    def reset(self, game_id: str, seat: int) -> None:
        self.greedy.reset(game_id, seat)

    def choose(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> str:
        if self.random.random() < self.epsilon:
            return self.random.choice(list(legal_actions)).id
        return self.greedy.choose(observation, legal_actions)


@dataclass(frozen=True)
class Table:
    game_id: str
    seed: int
    bots: tuple[int, ...]  # bot (level) per seat


def schedule(game_id: str, mode: str, matches: int, replicate: int) -> list[Table]:
    rng = random.Random(f"{game_id}/{mode}/{replicate}")
    tables: list[Table] = []
    while len(tables) < matches:
        bots = rng.sample(range(len(EPSILONS)), PLAYERS)
        seed = rng.randrange(2**48)
        if mode == "independent":
            tables.append(Table(game_id, seed, tuple(bots)))
            continue
        for shift in range(PLAYERS):  # a duplicate set: the same seed, every bot in every seat once
            tables.append(Table(game_id, seed, tuple(bots[(i + shift) % PLAYERS] for i in range(PLAYERS))))
    return tables[:matches]


def play(table: Table) -> list[int]:
    """The ranks (by seat) of one match."""
    seats = [
        HouseSeat(EpsilonGreedy(EPSILONS[b], seed=table.seed % 10_000 + i)) for i, b in enumerate(table.bots)
    ]
    record = run_match(table.game_id, PLAYERS, table.seed, seats)
    assert record.result is not None
    return [int(r) for r in record.result["ranks"]]


def kendall_tau(order: Sequence[int]) -> float:
    """Kendall's tau between a ranking (bot ids, best first) and the true order (highest level best)."""
    truth = sorted(order, reverse=True)
    position = {bot: i for i, bot in enumerate(truth)}
    ranked = [position[b] for b in order]
    pairs = concordant = 0
    for i in range(len(ranked)):
        for j in range(i + 1, len(ranked)):
            pairs += 1
            concordant += 1 if ranked[i] < ranked[j] else -1
    return concordant / pairs


def replay_ratings(tables: Sequence[Table], results: Sequence[list[int]]) -> dict[str, Any]:
    params = RatingParams()
    ratings: dict[int, SeatRating] = {b: initial(params) for b in range(len(EPSILONS))}
    truth = sorted(ratings, reverse=True)
    last_wrong = 0
    taus: dict[int, float] = {}
    rank_sums = [0.0] * len(EPSILONS)
    games = [0] * len(EPSILONS)
    checkpoints = {max(1, len(tables) // 4), max(1, len(tables) // 2), len(tables)}
    for n, (table, ranks) in enumerate(zip(tables, results, strict=True), start=1):
        after = rate_match([ratings[b] for b in table.bots], ranks, params)
        for bot, rating, rank in zip(table.bots, after, ranks, strict=True):
            ratings[bot] = rating
            rank_sums[bot] += rank
            games[bot] += 1
        order = sorted(ratings, key=lambda b: ratings[b].conservative, reverse=True)
        if order != truth:
            last_wrong = n
        if n in checkpoints:
            taus[n] = kendall_tau(order)
    settled = last_wrong + 1 if last_wrong < len(tables) else None
    mean_ranks = [rank_sums[b] / games[b] if games[b] else 0.0 for b in range(len(EPSILONS))]
    return {"settled_after": settled, "taus": taus, "mean_ranks": mean_ranks}


def main() -> int:
    matches = int(os.environ.get("CARAVANSERAI_BENCH_LUCK_MATCHES", "120"))
    replicates = int(os.environ.get("CARAVANSERAI_BENCH_LUCK_REPLICATES", "3"))
    print(f"{len(EPSILONS)} bots (epsilon {', '.join(f'{e:g}' for e in EPSILONS)}), {PLAYERS} players, "
          f"{matches} matches x {replicates} replicates per game and mode")  # fmt: skip
    rows, report = [], {}
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for game_id in GAMES:
            for mode in MODES:
                outcomes = []
                for replicate in range(replicates):
                    tables = schedule(game_id, mode, matches, replicate)
                    results = list(pool.map(play, tables, chunksize=4))
                    outcomes.append(replay_ratings(tables, results))
                report[f"{game_id}/{mode}"] = outcomes
                rows.append(_row(game_id, mode, matches, outcomes))
                print(" | ".join(f"{h}: {c}" for h, c in zip(HEADERS, rows[-1], strict=True)), flush=True)
    print()
    print_table(HEADERS, rows)
    write_results(
        "luck", {"matches": matches, "replicates": replicates, "epsilons": EPSILONS, "runs": report}
    )
    return 0


HEADERS = ["game", "mode", "settled after (median)", "right at the end", "tau N/4", "tau N/2", "tau N",
           "mean rank by level (weak..strong)"]  # fmt: skip


def _row(game_id: str, mode: str, matches: int, outcomes: list[dict[str, Any]]) -> list[Any]:
    settled = [o["settled_after"] for o in outcomes]
    right = sum(1 for s in settled if s is not None)
    known = sorted(s if s is not None else matches + 1 for s in settled)
    median = statistics.median(known)
    checkpoints = sorted(outcomes[0]["taus"])
    taus = [statistics.mean(o["taus"][c] for o in outcomes) for c in checkpoints]
    ranks = [statistics.mean(o["mean_ranks"][b] for o in outcomes) for b in range(len(EPSILONS))]
    return [
        game_id,
        mode,
        f">{matches}" if median > matches else f"{median:g}",
        f"{right}/{len(outcomes)}",
        *[f"{t:.2f}" for t in taus],
        " ".join(f"{r:.2f}" for r in ranks),
    ]
