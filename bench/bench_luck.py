"""Luck control, measured with the pairing duplicate sets exist for.

A duplicate set plays one seed once per seat rotation, so every bot of the table meets the same dice and
cards from every seat; compared as a unit (the duplicate bridge and poker-AI "duplicate" method), the luck
the bots share cancels. This bench measures, per game, how much that buys.

The field: four house bots of known order (epsilon-greedy: the greedy house bot playing a uniformly random
legal action with probability 1, 0.6, 0.3 and 0; weakest first). For each game it plays a pool of
CARAVANSERAI_BENCH_LUCK_SETS seeds (default 400): each seed seats three of the four bots, drawn at random,
and is played once per rotation of their seats (so 3 x SETS three-player matches per game). A bot's own
random stream is seeded by the seed and the bot, the same in every rotation of a set.

From the pool (the statistics are pure functions of it, tested on fake pools in tests/bench/):
- Variance ratio. For every pair of bots at a table, d = merit(stronger) - merit(weaker), merit being the
  score or minus the rank. Paired: the variance of d averaged over a set's three rotations (same seed).
  Independent: the variance of d averaged over three matches with the same seat rotations and three
  different seeds, which is the pooled variance of one match's d within (pair, seats) cells, divided by 3
  (what a ladder's independent matches, seats rotated as matchmaking does, give). Ratio paired /
  independent, with a 95% bootstrap interval over seeds: below 1, a set is worth 3 / ratio independent
  matches.
- Matches to order the field: the fewest matches after which 90% of ladders order the four bots right,
  drawn from the pool (sequences of sets, or of pseudo-sets: the same table three times, seats rotated,
  three different seeds, so the two modes differ only in the shared seed). Two methods: "paired", each bot
  scored by the mean rank difference against every other bot over the sets or pseudo-sets both sat in; and
  "rating", the ladder's own rating (`ladder.ratings.elo.rate_match` at default parameters, each match
  rated as matchmaking does, ranked by mu - 3 sigma). The share must stay at 90% or above from there to
  the end of the draw. 95% intervals by bootstrap over the pool's seeds within tables (paired method) and
  over the drawn ladders (rating method, which is too slow to redraw per bootstrap).

Run: `python -m bench luck`. Sizes: CARAVANSERAI_BENCH_LUCK_SETS (400 seeds per game),
CARAVANSERAI_BENCH_LUCK_BOOTSTRAP (1000 resamples for the variance intervals),
CARAVANSERAI_BENCH_LUCK_ORDER_RESAMPLES (100 for the paired ordering's, each drawing 200 ladders),
CARAVANSERAI_BENCH_LUCK_LADDERS (100 ladders per mode replayed with the rating), CARAVANSERAI_BENCH_LUCK_JOBS
(2 processes), CARAVANSERAI_BENCH_LUCK_GAMES (the games to play, a comma list; default all four). It plays
them into bench/results/luck-pool.json, which keeps the other games' sets from earlier runs, and analyses
every game of that pool; CARAVANSERAI_BENCH_LUCK_POOL=FILE plays nothing and analyses FILE's games. The
figures, with the load average and the intervals, go to bench/results/luck.json.

It plays house bots in its own processes only: no database, no ladder, no network. The ladder defaults it
informs are set in `ladder.ladders.services` (`DUPLICATE_SETS_GAMES`), by hand, from its results.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
import zlib
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import RESULTS, print_table, write_results
from engine_service.games import Action
from engine_service.policies import make_policy
from engine_service.policies.base import Policy
from engine_service.referee import HouseSeat, run_match
from ladder.ratings.elo import RatingParams, SeatRating, initial, rate_match

GAMES = ("expedition-v1", "voyages-v1", "mp2-v1", "dragonda-v1")
EPSILONS = (1.0, 0.6, 0.3, 0.0)  # weakest first: the true order, bot 0 < 1 < 2 < 3
PLAYERS = 3
POOL_FILE = RESULTS / "luck-pool.json"


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
class SetPlan:
    """One seed of the pool: its table (bots in lineup order, the weakest bot first; rotation k seats
    lineup[(i + k) % 3] in seat i)."""

    game_id: str
    seed: int
    lineup: tuple[int, ...]


@dataclass(frozen=True)
class PlayedSet:
    """A set's results: per rotation k, per bot of the lineup (not per seat), its rank and score."""

    seed: int
    lineup: tuple[int, ...]
    ranks: tuple[tuple[int, ...], ...]
    scores: tuple[tuple[float, ...], ...]


def plan_pool(game_id: str, sets: int) -> list[SetPlan]:
    """The pool's seeds and tables; the same for a given game and size (a larger pool extends a smaller)."""
    rng = random.Random(f"luck/{game_id}")
    plans = []
    for _ in range(sets):
        bots = rng.sample(range(len(EPSILONS)), PLAYERS)
        start = bots.index(min(bots))  # a rotation of the drawn order: the cyclic order stays random
        plans.append(SetPlan(game_id, rng.randrange(2**48), tuple(bots[start:] + bots[:start])))
    return plans


def rotation_seats(lineup: Sequence[int], k: int) -> list[int]:
    return [lineup[(i + k) % len(lineup)] for i in range(len(lineup))]


def play_set(plan: SetPlan) -> PlayedSet:
    ranks, scores = [], []
    for k in range(PLAYERS):
        bots = rotation_seats(plan.lineup, k)
        seats = [
            HouseSeat(EpsilonGreedy(EPSILONS[b], seed=(plan.seed + 1_000_003 * b) % 2**32)) for b in bots
        ]
        record = run_match(plan.game_id, PLAYERS, plan.seed, seats)
        assert record.result is not None
        by_seat = {b: i for i, b in enumerate(bots)}
        seat_scores = record.result["game"]["scores"]
        ranks.append(tuple(int(record.result["ranks"][by_seat[b]]) for b in plan.lineup))
        scores.append(tuple(float(seat_scores[by_seat[b]]) for b in plan.lineup))
    return PlayedSet(plan.seed, plan.lineup, tuple(ranks), tuple(scores))


def play_pool(games: Sequence[str], sets: int, jobs: int) -> dict[str, list[PlayedSet]]:
    """Play (or extend) the pool, saving it after each game so a stopped run keeps what it played."""
    pool: dict[str, list[PlayedSet]] = {}
    with ProcessPoolExecutor(max_workers=jobs) as executor:
        for game_id in games:
            started = time.perf_counter()
            pool[game_id] = list(executor.map(play_set, plan_pool(game_id, sets), chunksize=2))
            print(f"{game_id}: {sets} sets played in {time.perf_counter() - started:.0f}s", flush=True)
            save_pool(pool)
    return pool


def save_pool(pool: Mapping[str, Sequence[PlayedSet]]) -> None:
    """Write the games played to the pool file, keeping the other games a run before left there."""
    data = json.loads(POOL_FILE.read_text())["games"] if POOL_FILE.exists() else {}
    for game_id, sets in pool.items():
        data[game_id] = [
            {"seed": s.seed, "lineup": s.lineup, "ranks": s.ranks, "scores": s.scores} for s in sets
        ]
    POOL_FILE.write_text(json.dumps({"epsilons": EPSILONS, "games": data}) + "\n")


def load_pool(path: str) -> dict[str, list[PlayedSet]]:
    data = json.loads(Path(path).read_text())
    return {
        game_id: [
            PlayedSet(
                s["seed"],
                tuple(s["lineup"]),
                tuple(tuple(r) for r in s["ranks"]),
                tuple(tuple(x) for x in s["scores"]),
            )
            for s in sets
        ]
        for game_id, sets in data["games"].items()
    }


# --- the statistics: pure functions of the pool ---------------------------------------------------------

PAIRS = tuple((a, b) for a in range(len(EPSILONS)) for b in range(a + 1, len(EPSILONS)))  # b the stronger
POSITIONS = ((0, 1), (0, 2), (1, 2))  # the pairs of a lineup, by position


@dataclass(frozen=True)
class PoolArrays:
    """One game's pool as arrays over sets s, lineup pairs p and rotations k: d = merit(stronger) -
    merit(weaker) by rank (minus the rank) and by score; each pair's id in PAIRS; its paired cell (pair,
    cyclic orientation); its independent cell (pair, the two seats) per rotation; the set's table group
    (the lineup: bots and cyclic order)."""

    d_rank: np.ndarray  # (S, 3, 3) float
    d_score: np.ndarray  # (S, 3, 3) float
    pair: np.ndarray  # (S, 3) int
    paired_cell: np.ndarray  # (S, 3) int
    seat_cell: np.ndarray  # (S, 3, 3) int
    group: np.ndarray  # (S,) int

    @property
    def sets(self) -> int:
        return int(self.pair.shape[0])


def pool_arrays(sets: Sequence[PlayedSet]) -> PoolArrays:
    n = len(sets)
    d_rank, d_score = np.zeros((n, 3, PLAYERS)), np.zeros((n, 3, PLAYERS))
    pair, paired_cell = np.zeros((n, 3), int), np.zeros((n, 3), int)
    seat_cell, groups = np.zeros((n, 3, PLAYERS), int), np.zeros(n, int)
    lineups: dict[tuple[int, ...], int] = {}
    for s, played in enumerate(sets):
        groups[s] = lineups.setdefault(played.lineup, len(lineups))
        for p, (i, j) in enumerate(POSITIONS):
            weak, strong = (i, j) if played.lineup[i] < played.lineup[j] else (j, i)
            pair[s, p] = PAIRS.index((played.lineup[weak], played.lineup[strong]))
            paired_cell[s, p] = pair[s, p] * 3 + (strong - weak) % 3
            for k in range(PLAYERS):
                d_rank[s, p, k] = played.ranks[k][weak] - played.ranks[k][strong]
                d_score[s, p, k] = played.scores[k][strong] - played.scores[k][weak]
                seats = ((strong - k) % PLAYERS, (weak - k) % PLAYERS)
                seat_cell[s, p, k] = (pair[s, p] * PLAYERS + seats[0]) * PLAYERS + seats[1]
    return PoolArrays(d_rank, d_score, pair, paired_cell, seat_cell, groups)


def bootstrap_weights(sets: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(resamples + 1, sets) counts: the pool itself first, then resamples of its sets with replacement."""
    draws = rng.multinomial(sets, np.full(sets, 1.0 / sets), size=resamples)
    return np.vstack([np.ones((1, sets)), draws])


def cell_variance(x: np.ndarray, cells: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The pooled within-cell variance of x (one row per set, any shape after it, `cells` alike) for each
    row of set weights: sum of squares about each cell's mean over (count - cells in use)."""
    flat_x, flat_c = x.reshape(len(x), -1), cells.reshape(len(x), -1)
    size = int(flat_c.max()) + 1
    counts, sums, squares = (np.zeros((len(x), size)) for _ in range(3))
    for column in range(flat_x.shape[1]):
        rows, cell, value = np.arange(len(x)), flat_c[:, column], flat_x[:, column]
        np.add.at(counts, (rows, cell), 1.0)
        np.add.at(sums, (rows, cell), value)
        np.add.at(squares, (rows, cell), value * value)
    n, s1, s2 = weights @ counts, weights @ sums, weights @ squares
    within = np.where(n > 0, s2 - s1 * s1 / np.maximum(n, 1e-12), 0.0).sum(axis=1)
    freedom = n.sum(axis=1) - (n > 0).sum(axis=1)
    return np.asarray(within / np.maximum(freedom, 1.0))


def variances(arrays: PoolArrays, merit: str, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Per weight row: the variance of a duplicate set's mean d (paired), of the mean of three independent
    matches seated as the set's rotations (independent), and of three with seats at random."""
    d = arrays.d_rank if merit == "rank" else arrays.d_score
    paired = cell_variance(d.mean(axis=2), arrays.paired_cell, weights)
    per_match = cell_variance(d, arrays.seat_cell, weights)
    random_seats = cell_variance(d, np.repeat(arrays.pair[:, :, None], PLAYERS, axis=2), weights)
    return {"paired": paired, "independent": per_match / PLAYERS, "random_seats": random_seats / PLAYERS}


def interval(values: np.ndarray) -> dict[str, float]:
    """A bootstrap row's point (row 0) and its 95% percentile interval (the other rows)."""
    low, high = np.quantile(values[1:], [0.025, 0.975], method="inverted_cdf")  # no interpolation: inf stays
    return {"value": float(values[0]), "low": float(low), "high": float(high)}


MODES = ("duplicate", "independent")
ORDERED_SHARE = 0.9  # "ordered": this share of drawn ladders has the four bots in the true order


def draw_units(
    arrays: PoolArrays, ladders: int, units: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Drawn ladders, (ladders, units, 3) set indices per rotation: "duplicate" units are sets (one seed,
    three rotations); "independent" units are pseudo-sets from the same tables (rotation k from the k-th of
    three different seeds of the duplicate unit's group), so the two differ only in the shared seed."""
    sizes = np.bincount(arrays.group)
    eligible = np.flatnonzero(sizes[arrays.group] >= PLAYERS)  # a table of a small pool may have fewer seeds
    chosen = eligible[rng.integers(0, len(eligible), size=(ladders, units))]
    independent = np.empty((ladders, units, PLAYERS), int)
    for g in np.unique(arrays.group):
        members = np.flatnonzero(arrays.group == g)
        where = arrays.group[chosen] == g
        if where.any():
            independent[where] = members[_distinct_triples(len(members), int(where.sum()), rng)]
    return {"duplicate": np.repeat(chosen[:, :, None], PLAYERS, axis=2), "independent": independent}


def _distinct_triples(n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` rows of three different indices below n (n >= 3), uniformly."""
    if n < PLAYERS:
        raise ValueError(f"a pseudo-set needs {PLAYERS} seeds of one table, the pool has {n}")
    first = rng.integers(0, n, count)
    second = rng.integers(0, n - 1, count)
    second += second >= first
    low, high = np.minimum(first, second), np.maximum(first, second)
    third = rng.integers(0, n - 2, count)
    third += third >= low
    third += third >= high
    return np.stack([first, second, third], axis=1)


def ordered_share(arrays: PoolArrays, drawn: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Per number of units u, the share of drawn ladders whose paired estimate orders the field right after
    u units: each bot scored by the sum over the others of its mean rank difference against them."""
    ladders, units, _ = drawn.shape
    pair = arrays.pair[drawn[:, :, 0]]  # (L, U, 3): the group, so the pairs, is the same for the three seeds
    value = sum(arrays.d_rank[drawn[:, :, k], :, k] for k in range(PLAYERS))  # (L, U, 3)
    sums, counts = np.zeros((ladders, units, len(PAIRS))), np.zeros((ladders, units, len(PAIRS)))
    for slot in range(3):
        for p in range(len(PAIRS)):
            hit = pair[:, :, slot] == p
            sums[:, :, p] += np.where(hit, value[:, :, slot], 0.0)
            counts[:, :, p] += hit
    mean = np.cumsum(sums, axis=1) / np.maximum(np.cumsum(counts, axis=1), 1.0)
    score = np.zeros((ladders, units, len(EPSILONS)))
    for p, (weak, strong) in enumerate(PAIRS):
        score[:, :, strong] += mean[:, :, p]
        score[:, :, weak] -= mean[:, :, p]
    right = np.all(np.diff(score, axis=2) > 0, axis=2)
    return np.asarray(right.mean(axis=0))


def needed(share: np.ndarray, level: float = ORDERED_SHARE) -> int | None:
    """The fewest steps (units or matches) after which the share stays at `level` or above (None: not
    within the draw)."""
    below = np.flatnonzero(share < level)
    if len(below) == 0:
        return 1
    return None if below[-1] + 1 >= len(share) else int(below[-1] + 2)


def rating_right(sets: Sequence[PlayedSet], drawn: np.ndarray) -> np.ndarray:
    """(ladders, matches) whether the ladder's own rating (each match rated in turn, default parameters,
    ranked by mu - 3 sigma) orders the field right after each match of the drawn ladders."""
    params = RatingParams()
    ladders, units, _ = drawn.shape
    right = np.zeros((ladders, units * PLAYERS), bool)
    truth = list(range(len(EPSILONS) - 1, -1, -1))
    for ladder in range(ladders):
        ratings: dict[int, SeatRating] = {b: initial(params) for b in range(len(EPSILONS))}
        for n, (u, k) in enumerate((u, k) for u in range(units) for k in range(PLAYERS)):
            played = sets[int(drawn[ladder, u, k])]
            bots = rotation_seats(played.lineup, k)
            ranks = [played.ranks[k][(i + k) % PLAYERS] for i in range(PLAYERS)]
            for bot, rating in zip(bots, rate_match([ratings[b] for b in bots], ranks, params), strict=True):
                ratings[bot] = rating
            right[ladder, n] = sorted(ratings, key=lambda b: ratings[b].conservative, reverse=True) == truth
    return right


def _rating_task(task: tuple[list[PlayedSet], np.ndarray]) -> np.ndarray:
    return rating_right(*task)


def resample(arrays: PoolArrays, index: np.ndarray) -> PoolArrays:
    return PoolArrays(*(getattr(arrays, f)[index] for f in PoolArrays.__dataclass_fields__))


def paired_needed(arrays: PoolArrays, ladders: int, units: int, resamples: int, seed: int) -> dict[str, Any]:
    """Matches to order the field by the paired estimate, per mode: the pool's figure and a 95% interval
    over resamples of its sets (inf: not within `units` units)."""
    rng = np.random.default_rng(seed)
    found: dict[str, list[float]] = {mode: [] for mode in MODES}
    for b in range(resamples + 1):
        pool = arrays if b == 0 else resample(arrays, _within_groups(arrays.group, rng))
        drawn = draw_units(pool, ladders, units, rng)
        for mode in MODES:
            u = needed(ordered_share(pool, drawn[mode]))
            found[mode].append(math.inf if u is None else u * PLAYERS)
    return {mode: interval(np.array(values)) for mode, values in found.items()}


def _within_groups(group: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A resample of the sets that keeps each table's count (each pseudo-set needs three of its table)."""
    return np.concatenate(
        [rng.choice(np.flatnonzero(group == g), int((group == g).sum())) for g in np.unique(group)]
    )


def rating_needed(right: np.ndarray, resamples: int, seed: int) -> dict[str, float]:
    """Matches to order the field by the ladder's rating, with a 95% interval over resamples of the drawn
    ladders."""
    rng = np.random.default_rng(seed)
    found = []
    for b in range(resamples + 1):
        rows = right if b == 0 else right[rng.integers(0, len(right), len(right))]
        n = needed(rows.mean(axis=0))
        found.append(math.inf if n is None else n)
    return interval(np.array(found))


@dataclass(frozen=True)
class Sizes:
    sets: int
    bootstrap: int
    ladders: int
    order_resamples: int
    jobs: int

    @classmethod
    def from_env(cls) -> Sizes:
        def get(name: str, default: int) -> int:
            return int(os.environ.get(f"CARAVANSERAI_BENCH_LUCK_{name}", str(default)))

        return cls(get("SETS", 400), get("BOOTSTRAP", 1000), get("LADDERS", 100), get("ORDER_RESAMPLES", 100),
                   get("JOBS", 2))  # fmt: skip


def variance_figures(arrays: PoolArrays, resamples: int, seed: int) -> dict[str, Any]:
    weights = bootstrap_weights(arrays.sets, resamples, np.random.default_rng(seed))
    figures: dict[str, Any] = {}
    for merit in ("rank", "score"):
        v = variances(arrays, merit, weights)
        figures[merit] = {
            **{name: float(values[0]) for name, values in v.items()},
            "ratio": interval(v["paired"] / v["independent"]),
            "ratio_vs_random_seats": interval(v["paired"] / v["random_seats"]),
        }
    return figures


def mean_ranks(sets: Sequence[PlayedSet]) -> list[float]:
    totals, games = [0.0] * len(EPSILONS), [0] * len(EPSILONS)
    for played in sets:
        for ranks in played.ranks:
            for bot, rank in zip(played.lineup, ranks, strict=True):
                totals[bot] += rank
                games[bot] += 1
    return [t / g if g else math.nan for t, g in zip(totals, games, strict=True)]


def analyse(pool: Mapping[str, list[PlayedSet]], sizes: Sizes) -> dict[str, Any]:
    """Every game's figures; the ladder-rating replays run on `sizes.jobs` processes."""
    report: dict[str, Any] = {}
    tasks, keys = [], []
    for game_id, sets in pool.items():
        g = zlib.crc32(game_id.encode())  # a game's figures do not depend on which others run with it
        arrays = pool_arrays(sets)
        units = len(sets)  # up to as many matches as the pool has, in each mode
        report[game_id] = {
            "sets": len(sets),
            "mean_rank_by_level": mean_ranks(sets),
            "variance": variance_figures(arrays, sizes.bootstrap, seed=g),
            "order_paired": paired_needed(arrays, 200, units, sizes.order_resamples, seed=g),
        }
        drawn = draw_units(arrays, sizes.ladders, units, np.random.default_rng(1000 + g))
        for mode in MODES:
            tasks.append((list(sets), drawn[mode]))
            keys.append((game_id, mode))
        print(f"{game_id}: variances and paired ordering done", flush=True)
    with ProcessPoolExecutor(max_workers=sizes.jobs) as executor:
        for (game_id, mode), right in zip(keys, executor.map(_rating_task, tasks), strict=True):
            report[game_id].setdefault("order_rating", {})[mode] = rating_needed(right, 1000, seed=7)
    return report


def duplicate_pays(figures: Mapping[str, Any]) -> bool:
    """Duplicate sets pay in a game when the paired variance of rank differences (what ratings use) is
    clearly lower: its ratio's 95% interval lies below 1."""
    return bool(figures["variance"]["rank"]["ratio"]["high"] < 1.0)


HEADERS = ["game", "sets", "var ratio rank [95%]", "var ratio score [95%]", "order, paired: dup", "ind",
           "order, rating: dup", "ind", "duplicate pays"]  # fmt: skip


def _ratio(i: Mapping[str, float]) -> str:
    return f"{i['value']:.2f} [{i['low']:.2f}, {i['high']:.2f}]"


def _matches(i: Mapping[str, float], most: int) -> str:
    def one(x: float) -> str:
        return f">{most}" if math.isinf(x) else f"{x:.0f}"

    return f"{one(i['value'])} [{one(i['low'])}-{one(i['high'])}]"


def rows(report: Mapping[str, Any]) -> list[list[Any]]:
    table = []
    for game_id, f in report.items():
        most = f["sets"] * PLAYERS
        table.append([
            game_id, f["sets"], _ratio(f["variance"]["rank"]["ratio"]), _ratio(f["variance"]["score"]["ratio"]),
            *(_matches(f[method][mode], most) for method in ("order_paired", "order_rating") for mode in MODES),
            "yes" if duplicate_pays(f) else "no",
        ])  # fmt: skip
    return table


def _finite(value: Any) -> Any:
    """JSON has no infinity: a figure beyond the draw is written as null."""
    if isinstance(value, float) and math.isinf(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _game_order(game_id: str) -> tuple[int, str]:
    return (GAMES.index(game_id) if game_id in GAMES else len(GAMES), game_id)


def main() -> int:
    sizes = Sizes.from_env()
    games = [g for g in os.environ.get("CARAVANSERAI_BENCH_LUCK_GAMES", ",".join(GAMES)).split(",") if g]
    load_before, started = [round(v, 2) for v in os.getloadavg()], time.perf_counter()
    source = os.environ.get("CARAVANSERAI_BENCH_LUCK_POOL", "")
    print(
        f"{len(EPSILONS)} bots (epsilon {', '.join(f'{e:g}' for e in EPSILONS)}), {PLAYERS} players, {sizes}"
    )
    if not source:
        play_pool(games, sizes.sets, sizes.jobs)
    pool = load_pool(source or str(POOL_FILE))  # every game in the pool, those played before included
    report = analyse({g: pool[g] for g in sorted(pool, key=_game_order)}, sizes)
    load_after = [round(v, 2) for v in os.getloadavg()]
    print()
    print_table(HEADERS, rows(report))
    print(f"matches to order the field: fewest after which {ORDERED_SHARE:.0%} of drawn ladders rank the four bots "
          f"right; load average {load_before} before, {load_after} after")  # fmt: skip
    write_results("luck", _finite({
        "epsilons": EPSILONS, "players": PLAYERS, "sizes": sizes.__dict__, "pool": source or str(POOL_FILE),
        "ordered_share": ORDERED_SHARE, "load_average_before": load_before, "load_average_after": load_after,
        "seconds": round(time.perf_counter() - started, 1), "games": report,
        "duplicate_pays": {g: duplicate_pays(f) for g, f in report.items()},
    }))  # fmt: skip
    return 0
