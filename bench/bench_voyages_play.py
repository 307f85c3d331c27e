"""Voyages play, measured: does the greedy house bot play The Voyages of Marco Polo the way people do?

N seeded three-player games (first-game characters, default options) with the house `greedy` in every seat,
counted per seat from the re-simulated record: travels (Travel placements) and all moves, trading posts
placed, goal cards achieved and goal cities held, Beijing reached, contracts completed, dice rerolled and
adjusted (and money bags, black dice), the final VP and the spread between first and last. The same seeds are
played by the previous greedy (its evaluation is the `heuristic.py` of commit 93233da, loaded from git:
`BASELINE_REVISION`; a shallow clone must fetch it), so the counts stand side by side. Then strength,
seat-rotated on fixed seeds:
- new vs old: every seed in the six seatings of one-against-two and two-against-one; the share of new-old
  pairs of seats in which the new seat finished ahead (ties count a half; 0.5 = equal strength), with a 95%
  interval over games, and each side's win share (fair: 1/3 alone against two, 2/3 as a pair);
- each greedy against two `random` seats (its win share, fair 1/3).
And the mean time per greedy decision (decisions with at least two legal actions), old and new, measured in
the same games.

Run: `python -m bench voyages_play` (CARAVANSERAI_BENCH_VOYAGES_GAMES, default 30, sets N and the number of
strength seeds; CARAVANSERAI_BENCH_WORKERS, default 2, the processes). Results: bench/results/voyages_play.json.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.common import module_at_revision, print_table, rotations, write_results
from engine_service.games import Action, GameSpec, GameState, make
from engine_service.games.voyages.rules import VoyagesState
from engine_service.games.voyages.tables import BEIJING, GOALS
from engine_service.policies import make_policy
from engine_service.policies.base import Policy
from engine_service.policies.greedy import GreedyPolicy
from engine_service.referee import HouseSeat, run_match

GAME = "voyages-v1"
PLAYERS = 3
SEED_BASE = 18_000
HEURISTIC = "engine_service/games/voyages/heuristic.py"
# 93233da: the last heuristic before 7c804d9 (posts, goal cities, the road ahead), the previous evaluation
BASELINE_REVISION = "93233da49e3068cc52fddd2882e5275de83707b9"


class OldGreedy(GreedyPolicy):
    """The house greedy bot (same sampling and tie-breaking) judging by the previous evaluation."""

    name = "greedy-old"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        baseline = module_at_revision(HEURISTIC, BASELINE_REVISION, "baseline_voyages_heuristic")
        self.judge: Callable[[VoyagesState, int], float] = baseline.evaluate

    def evaluate(self, spec: GameSpec, state: GameState, seat: int) -> float:
        assert isinstance(state, VoyagesState)
        return self.judge(state, seat)


class Timed(Policy):
    """A policy whose decisions with two or more legal actions are timed."""

    def __init__(self, inner: Policy) -> None:
        super().__init__(inner.seed)
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0
        self.decisions = 0

    def reset(self, game_id: str, seat: int) -> None:
        self.inner.reset(game_id, seat)

    def choose(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> str:
        if len(legal_actions) < 2:
            return self.inner.choose(observation, legal_actions)
        started = time.perf_counter()
        chosen = self.inner.choose(observation, legal_actions)
        self.seconds += time.perf_counter() - started
        self.decisions += 1
        return chosen


def bot(name: str, seed: int) -> Policy:
    if name == "old":
        return OldGreedy(seed)
    return make_policy("greedy" if name == "new" else name, seed=seed)


def play(job: tuple[int, tuple[str, ...]]) -> dict[str, Any]:
    """One game: its seat lineup, ranks, scores, per-seat counts and decision timings."""
    seed, lineup = job
    policies = [Timed(bot(name, seed * 10 + i)) for i, name in enumerate(lineup)]
    record = run_match(GAME, PLAYERS, seed, [HouseSeat(p) for p in policies])
    assert record.result is not None
    counts = count(seed, record.actions)
    return {
        "seed": seed,
        "lineup": list(lineup),
        "ranks": [int(r) for r in record.result["ranks"]],
        "seats": counts,
        "seconds": [p.seconds for p in policies],
        "decisions": [p.decisions for p in policies],
    }


def count(seed: int, actions: Sequence[tuple[int, str]]) -> list[dict[str, int]]:
    """Per seat, what it did: re-simulates the record and reads each action's kind and details."""
    state = make(GAME, PLAYERS, seed)
    assert isinstance(state, VoyagesState)
    seats = [dict.fromkeys(("travels", "moves", "rerolls", "adjusts", "bags", "black_dice"), 0)
             for _ in range(PLAYERS)]  # fmt: skip
    for seat, action_id in actions:
        action = next(a for a in state.legal_actions(seat) if a.id == action_id)
        mine = seats[seat]
        if action_id.startswith("dice:") and action.details.get("space") == "travel":
            mine["travels"] += 1
        elif action.kind == "move" and action_id.startswith("route"):
            mine["moves"] += 1
        bonus = action.details.get("bonus")
        if bonus in ("reroll", "adjust", "bag"):
            mine[f"{bonus}s"] += 1
        elif bonus == "black_die":
            mine["black_dice"] += 1
        state.apply(seat, action_id)
    assert state.is_over()
    for seat, mine in enumerate(seats):
        held = set(state.posts[seat])
        mine["posts"] = state.posts_placed[seat]
        mine["goals"] = sum(1 for g in state.goals[seat] if all(c in held for c in GOALS[g]["cities"]))
        mine["goal_cities"] = len({c for g in state.goals[seat] for c in GOALS[g]["cities"]} & held)
        mine["beijing"] = int(BEIJING in held)
        mine["contracts"] = len(state.done[seat])
        mine["vp"] = state.res[seat]["vp"]
    return seats


COUNTED = ("travels", "moves", "posts", "goals", "goal_cities", "beijing", "contracts", "rerolls", "adjusts",
           "bags", "black_dice", "vp")  # fmt: skip


def behaviour(games: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means per seat and game of every count, the mean spread (first minus last VP) and the share of seats
    reaching 8 posts (the first milestone)."""
    seats = [s for g in games for s in g["seats"]]
    out: dict[str, Any] = {k: statistics.mean(s[k] for s in seats) for k in COUNTED}
    out["min_max"] = {k: [min(s[k] for s in seats), max(s[k] for s in seats)] for k in COUNTED}
    out["spread"] = statistics.mean(max(s["vp"] for s in g["seats"]) - min(s["vp"] for s in g["seats"])
                                    for g in games)  # fmt: skip
    out["winner_vp"] = statistics.mean(max(s["vp"] for s in g["seats"]) for g in games)
    out["share_8_posts"] = sum(1 for s in seats if s["posts"] >= 8) / len(seats)
    return out


def versus(games: Sequence[dict[str, Any]], side: str, other: str) -> dict[str, Any]:
    """`side` against `other`: per game the share of (side, other) seat pairs `side` won (ties a half), its
    mean with a 95% interval over games; and `side`'s share of the wins by lineup."""
    shares = []
    wins: dict[int, list[float]] = {}
    for g in games:
        mine = [i for i, n in enumerate(g["lineup"]) if n == side]
        theirs = [i for i, n in enumerate(g["lineup"]) if n == other]
        ranks = g["ranks"]
        pairs = [1.0 if ranks[a] < ranks[b] else 0.5 if ranks[a] == ranks[b] else 0.0
                 for a in mine for b in theirs]  # fmt: skip
        shares.append(statistics.mean(pairs))
        best = min(ranks)
        winners = [i for i, r in enumerate(ranks) if r == best]
        wins.setdefault(len(mine), []).append(sum(1 for i in winners if i in mine) / len(winners))
    mean = statistics.mean(shares)
    half = 1.96 * statistics.stdev(shares) / math.sqrt(len(shares)) if len(shares) > 1 else 0.0
    return {
        "games": len(games),
        "pair_share": mean,
        "pair_share_ci95": [max(0.0, mean - half), min(1.0, mean + half)],
        "win_share_by_seats": {f"{k} of {PLAYERS}": statistics.mean(v) for k, v in sorted(wins.items())},
    }


def timing(games: Sequence[dict[str, Any]], name: str) -> dict[str, float]:
    seconds = sum(s for g in games for s, n in zip(g["seconds"], g["lineup"], strict=True) if n == name)
    decisions = sum(d for g in games for d, n in zip(g["decisions"], g["lineup"], strict=True) if n == name)
    return {"decisions": decisions, "ms_per_decision": 1000 * seconds / max(1, decisions)}


def main() -> int:
    n = int(os.environ.get("CARAVANSERAI_BENCH_VOYAGES_GAMES", "30"))
    workers = int(os.environ.get("CARAVANSERAI_BENCH_WORKERS", "2"))
    seeds = [SEED_BASE + i for i in range(n)]
    self_play = [(s, (name,) * PLAYERS) for s in seeds for name in ("old", "new")]
    head_to_head = [(s, lineup) for s in seeds
                    for lineup in rotations(("new", "old", "old")) + rotations(("old", "new", "new"))]  # fmt: skip
    against_random = [(s, lineup) for s in seeds[: max(1, n // 3)] for name in ("old", "new")
                      for lineup in rotations((name, "random", "random"))]  # fmt: skip
    jobs = self_play + head_to_head + against_random
    print(f"{GAME}, {PLAYERS} players, {n} seeds: {len(jobs)} games on {workers} processes", flush=True)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        games = list(pool.map(play, jobs, chunksize=1))
    by_job = dict(zip(range(len(jobs)), games, strict=True))
    selfs = [by_job[i] for i in range(len(self_play))]
    h2h = [by_job[len(self_play) + i] for i in range(len(head_to_head))]
    rnd = [by_job[len(self_play) + len(head_to_head) + i] for i in range(len(against_random))]

    plays = {name: behaviour([g for g in selfs if g["lineup"][0] == name]) for name in ("old", "new")}
    rows = [[k, f"{plays['old'][k]:.2f}", f"{plays['new'][k]:.2f}"]
            for k in (*COUNTED, "spread", "winner_vp", "share_8_posts")]  # fmt: skip
    print("\ngreedy self-play, per seat and game (spread and winner VP per game)")
    print_table(["count", "old greedy", "new greedy"], rows)

    strength = {
        "new_vs_old": versus(h2h, "new", "old"),
        "old_vs_random": versus([g for g in rnd if "old" in g["lineup"]], "old", "random"),
        "new_vs_random": versus([g for g in rnd if "new" in g["lineup"]], "new", "random"),
    }
    print()
    for key, v in strength.items():
        low, high = v["pair_share_ci95"]
        print(f"{key}: pairs won {v['pair_share']:.3f} [{low:.3f}, {high:.3f}] over {v['games']} games; "
              f"win share {v['win_share_by_seats']}")  # fmt: skip
    timed = [*selfs, *h2h]
    times = {name: timing(timed, name) for name in ("old", "new")}
    ratio = times["new"]["ms_per_decision"] / max(1e-9, times["old"]["ms_per_decision"])
    print(f"\nms per decision: old {times['old']['ms_per_decision']:.2f}, new {times['new']['ms_per_decision']:.2f}"
          f" (new/old {ratio:.2f})")  # fmt: skip
    write_results(
        "voyages_play",
        {
            "game": GAME,
            "players": PLAYERS,
            "seeds": [seeds[0], seeds[-1]],
            "self_play": plays,
            "strength": strength,
            "timing": {**times, "new_over_old": ratio},
            "games": games if n <= 6 else None,
        },
    )
    return 0
