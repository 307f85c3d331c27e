"""Voyages play, measured: does the greedy house bot play The Voyages of Marco Polo the way people do?

N seeded three-player games (first-game characters, default options) with the house `greedy` in every seat,
counted per seat from the re-simulated record: travels (Travel placements) and all moves, trading posts
placed, goal cards achieved and goal cities held, Beijing reached, contracts completed, dice rerolled and
adjusted (and money bags, black dice), the final VP and the spread between first and last. The same seeds
are played by the previous greedy (its evaluation is frozen below, `old_evaluate`, and is used nowhere
else), so the counts stand side by side. Then strength, seat-rotated on fixed seeds:
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
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.common import print_table, rotations, write_results
from engine_service.games import Action, GameSpec, GameState, make
from engine_service.games.common.dice import value_of
from engine_service.games.voyages.rules import VoyagesState
from engine_service.games.voyages.scoring import MOST_CONTRACTS_VP, beijing_vp, goal_points
from engine_service.games.voyages.tables import (
    BAZAAR,
    BEIJING,
    CONTRACTS,
    GOALS,
    GOODS,
    LARGE_CITIES,
    SMALL_CITIES,
)
from engine_service.policies import make_policy
from engine_service.policies.base import Policy
from engine_service.policies.greedy import GreedyPolicy
from engine_service.referee import HouseSeat, run_match

GAME = "voyages-v1"
PLAYERS = 3
SEED_BASE = 18_000

# --- the previous evaluation, frozen (engine_service/games/voyages/heuristic.py before this bench) --------
OLD_CHAIN_DEPTH = 6
OLD_BONUS_VALUE = {"A": 1.6, "B": 1.3, "C": 1.8, "D": 1.8, "E": 1.5, "F": 3.0}
OLD_DIE_BASE = (2.2, 1.4, 1.2, 1.0, 0.9)


def old_evaluate(state: VoyagesState, seat: int) -> float:
    if state.is_over():
        return state.res[seat]["vp"] + 0.01 * state.res[seat]["camels"]
    return _old_static(_old_resolved(state, seat), seat)


def _old_resolved(state: VoyagesState, seat: int) -> VoyagesState:
    own = bool(state.pending) and int(state.pending[0]["seat"]) == seat
    current = public_copy(state) if state.pending else state
    depth = 0
    while depth < OLD_CHAIN_DEPTH and current.pending and not current.is_over():
        decider = int(current.pending[0]["seat"])
        best_value, best_state = float("-inf"), current
        for action in current.legal_actions(decider):
            trial = current.clone()
            trial.apply(decider, action.id)
            value = _old_static(trial, decider, goals=own and decider == seat)
            if value > best_value:
                best_value, best_state = value, trial
        current = best_state
        depth += 1
    return current


def public_copy(state: VoyagesState) -> VoyagesState:
    copy = state.clone()
    unseen = state.unseen_contracts()
    hidden = state.special_hidden
    copy.special = unseen[:hidden] + list(state.special[hidden:])
    rest = unseen[hidden:]
    piles = []
    for pile in state.round_piles:
        piles.append(rest[: len(pile)])
        rest = rest[len(pile) :]
    copy.round_piles = piles
    return copy


def _old_static(state: VoyagesState, seat: int, goals: bool = True) -> float:
    if state.is_over():
        return state.res[seat]["vp"] + 0.01 * state.res[seat]["camels"]
    res = state.res[seat]
    rounds_left = max(0, 5 - state.round)
    late = 1.0 - min(1.0, max(0.0, (state.round - 1) / 5.0))
    value = float(res["vp"])
    posts = state.posts[seat]
    in_beijing = BEIJING in posts
    value += res["coins"] * (0.1 + 0.22 * late)
    value += res["camels"] * (0.05 + 0.4 * late)
    value += sum(res[g] for g in GOODS) * ((0.5 if in_beijing else 0.0) + 0.75 * late)
    for cid in state.active[seat]:
        cost = CONTRACTS[cid]["cost"]
        have = sum(min(res.get(k, 0), v) for k, v in cost.items())
        value += (CONTRACTS[cid]["reward"]["vp"] + 1.5) * (have / sum(cost.values())) * (0.35 + 0.4 * late)
    mine = len(state.done[seat])
    best_other = max((len(state.done[s]) for s in range(state.num_players) if s != seat), default=0)
    if mine > best_other:
        value += MOST_CONTRACTS_VP * 0.8
    elif mine == best_other:
        value += MOST_CONTRACTS_VP * 0.5
    else:
        value += MOST_CONTRACTS_VP * 0.2 / (1 + best_other - mine)
    value += 0.6 * mine * late
    own_goals = state.goals[seat] if goals else []
    cards, cities = goal_points(posts, own_goals)
    value += cards + cities
    held = set(posts)
    for g in own_goals:
        if sum(1 for c in GOALS[g]["cities"] if c in held) == 1:
            value += 0.35 * GOALS[g]["vp"] * late
    for node in posts:
        if node in SMALL_CITIES:
            value += OLD_BONUS_VALUE[state.city_bonus[str(node)]] * rounds_left
        elif node in LARGE_CITIES:
            value += 1.5 * late
        value += 1.0 * late
    value += beijing_vp(state, seat)
    if in_beijing:
        value += 1.0
    base = OLD_DIE_BASE[min(max(state.round, 1), 5) - 1]
    for tok in state.dice[seat]:
        value += base + 0.2 * (value_of(tok) or 5)
    for effect in state.pending:
        if int(effect["seat"]) == seat:
            value += _old_pending(state, seat, effect, late)
    return value


def _old_bundle(bundle: dict[str, int], late: float, in_beijing: bool) -> float:
    good = (0.5 if in_beijing else 0.0) + 0.75 * late
    value = bundle.get("vp", 0) + bundle.get("coins", 0) * (0.1 + 0.22 * late)
    value += bundle.get("camels", 0) * (0.05 + 0.4 * late)
    value += sum(bundle.get(g, 0) for g in GOODS) * good
    return value + bundle.get("move", 0) * 1.0 * late


def _old_pending(state: VoyagesState, seat: int, effect: dict[str, Any], late: float) -> float:
    kind = effect["t"]
    in_beijing = BEIJING in state.posts[seat]
    good = (0.5 if in_beijing else 0.0) + 0.75 * late
    if kind == "column":
        columns = BAZAAR[str(effect["space"])]["columns"]
        return max(_old_bundle(columns[k], late, in_beijing) for k in range(min(6, int(effect["max"]))))
    if kind == "good":
        return good
    if kind == "goods2":
        return 2 * good
    if kind == "travel":
        return 1.2 * min(4, int(effect["max"])) * (0.3 + late)
    if kind == "move":
        return 0.8 * late
    if kind == "pick":
        reach = state.board[: int(effect["die"])]
        worth = sorted(float(CONTRACTS[c]["reward"]["vp"] + 1.5) * 0.35 * (0.3 + late) for c in reach)
        return float(sum(worth[-2:]))
    if kind in ("space_bonus", "comp"):
        return int(effect["n"]) * (0.1 + 0.4 * late)
    return 0.0


class OldGreedy(GreedyPolicy):
    """The house greedy bot (same sampling and tie-breaking) judging by the frozen previous evaluation."""

    name = "greedy-old"

    def evaluate(self, spec: GameSpec, state: GameState, seat: int) -> float:
        assert isinstance(state, VoyagesState)
        return old_evaluate(state, seat)


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
