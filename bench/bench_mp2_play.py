"""Marco Polo II's house greedy, measured: how its games look and how it does against random and against the
previous evaluation, with and without The Caravans.

For each mode (base game, `caravans`), N seeded three-player games with the house `greedy` in every seat are
played twice: once with the current evaluation (`engine_service/games/mp2/heuristic.py`) and once with the
previous one, that file loaded from git at commit 76d3a65 (`BASELINE_REVISION`; a shallow clone must fetch
it). Counted per player and game: travels (movements made), trading posts placed, goals achieved (goal-card
shields held at the end, goal-card seals improved), contracts completed, caravans claimed and completed; per
game the final VP of every seat and the spread (best minus worst). Then, per mode, seat-rotated head-to-head
series on the same seeds: the current greedy against the previous one (2N games) and against `random` (N
games), in tables of (A, B, B) and (A, A, B) in every seat rotation, so that two equal bots would each win
half the games; the share of wins (ties split) comes with a 95% Wilson interval. The mean time per greedy
decision (decisions with more than one legal action) is reported from the self-play games, and, for the
comparison, paired: both evaluations decide the same positions (taken from self-play games), timed alternately
so that the machine's load weighs on both alike.

Run: `python -m bench mp2_play` (CARAVANSERAI_BENCH_MP2_GAMES, default N = 30 games per series and mode;
CARAVANSERAI_BENCH_WORKERS, default 2 processes). Results: `bench/results/mp2_play.json`.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from bench.common import module_at_revision, print_table, wilson, write_results
from engine_service.games import Action, GameSpec, GameState, make
from engine_service.games.mp2.rules import Mp2State
from engine_service.games.mp2.tables import GOALS, SHIELD
from engine_service.policies import make_policy
from engine_service.policies.base import Policy
from engine_service.policies.greedy import GreedyPolicy

GAME = "mp2-v1"
PLAYERS = 3
SEED_BASE = 18_000
MODES: dict[str, dict[str, Any]] = {"base": {}, "caravans": {"caravans": True}}
COUNTED = ("travels", "posts", "goal_shields", "goal_seals", "contracts", "claimed", "completed")
HEURISTIC = "engine_service/games/mp2/heuristic.py"
# 76d3a65: the last heuristic before ea4343c's caravan and reach terms, the previous evaluation measured here
BASELINE_REVISION = "76d3a655ff92c58b413e7e8616b1bc114ce608ba"


class FrozenGreedy(GreedyPolicy):
    """The house greedy bot (same sampling and tie-breaking) judging by the previous evaluation."""

    name = "greedy-old"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        baseline = module_at_revision(HEURISTIC, BASELINE_REVISION, "baseline_mp2_heuristic")
        self.judge: Callable[[Mp2State, int], float] = baseline.evaluate

    def evaluate(self, spec: GameSpec, state: GameState, seat: int) -> float:
        assert isinstance(state, Mp2State)
        return self.judge(state, seat)


# --- one game -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Table:
    mode: str
    seed: int
    bots: tuple[str, ...]  # "new", "old" or "random" per seat


def _policy(bot: str, seed: int) -> Policy:
    if bot == "old":
        return FrozenGreedy(seed)
    return make_policy("greedy" if bot == "new" else "random", seed=seed)


def play(table: Table) -> dict[str, Any]:
    """Play one game; per seat: final VP, rank share of the win, behaviour counts, decision time."""
    state = make(GAME, PLAYERS, table.seed, MODES[table.mode])
    assert isinstance(state, Mp2State)
    policies = [_policy(bot, table.seed * 7 + seat) for seat, bot in enumerate(table.bots)]
    for seat, policy in enumerate(policies):
        policy.reset(GAME, seat)
    counts = [Counter[str]() for _ in range(PLAYERS)]
    seconds = [0.0] * PLAYERS
    decisions = [0] * PLAYERS
    last = state.events[-1] if state.events else None
    while not state.is_over():
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        observation = state.observation(seat)
        started = time.perf_counter()
        choice = policies[seat].choose(observation, legal)
        if len(legal) > 1:
            seconds[seat] += time.perf_counter() - started
            decisions[seat] += 1
        state.apply(seat, choice)
        events = state.events  # the newest events are kept: the new ones follow the last one seen
        start = next((i + 1 for i in range(len(events) - 1, -1, -1) if events[i] is last), 0)
        for event in events[start:]:
            kind = {"moved": "travels", "post": "posts", "caravan_claim": "claimed"}.get(event["event"])
            kind = kind or {"caravan_complete": "completed", "complete": "contracts"}.get(event["event"])
            if kind:
                counts[int(event["seat"])][kind] += 1
        last = events[-1] if events else None
    scores = [int(r["vp"]) for r in state.res]
    result = state.result()
    out = []
    for seat in range(PLAYERS):
        goal = state.goals[seat]
        held = {SHIELD[c] for c in state.posts[seat]}
        counts[seat]["goal_shields"] = sum(1 for s in GOALS[goal]["shields"] if s in held) if goal else 0
        counts[seat]["goal_seals"] = (
            sum(1 for name in GOALS[goal]["seals"] if state.seals[seat].get(name) == 2) if goal else 0
        )
        counts[seat]["posts_held"] = len(state.posts[seat])
        out.append(
            {
                "bot": table.bots[seat],
                "vp": scores[seat],
                "win": _win_share(result.ranks, seat),
                "counts": dict(counts[seat]),
                "seconds": seconds[seat],
                "decisions": decisions[seat],
            }
        )
    return {"mode": table.mode, "seed": table.seed, "seats": out, "reason": state.end_reason}


def _win_share(ranks: Sequence[int], seat: int) -> float:
    if ranks[seat] != 1:
        return 0.0
    return 1.0 / sum(1 for r in ranks if r == 1)


# --- series -------------------------------------------------------------------------------------------------
def self_play_tables(mode: str, bot: str, games: int) -> list[Table]:
    return [Table(mode, SEED_BASE + i, (bot,) * PLAYERS) for i in range(games)]


def head_to_head_tables(mode: str, opponent: str, games: int) -> list[Table]:
    """(new, opp, opp) and (new, new, opp) in each seat rotation, cycling over the seeds."""
    patterns = []
    for layout in (("new", opponent, opponent), ("new", "new", opponent)):
        for shift in range(PLAYERS):
            patterns.append(tuple(layout[(i + shift) % PLAYERS] for i in range(PLAYERS)))
    return [Table(mode, SEED_BASE + i, patterns[i % len(patterns)]) for i in range(games)]


def behaviour(games: Sequence[dict[str, Any]]) -> dict[str, Any]:
    seats = [s for g in games for s in g["seats"]]
    per_player = {k: statistics.fmean(s["counts"].get(k, 0) for s in seats) for k in COUNTED}
    claimed = sum(s["counts"].get("claimed", 0) for s in seats)
    completed = sum(s["counts"].get("completed", 0) for s in seats)
    spreads = [max(s["vp"] for s in g["seats"]) - min(s["vp"] for s in g["seats"]) for g in games]
    decisions = sum(s["decisions"] for s in seats)
    return {
        "games": len(games),
        "per_player": per_player,
        "caravans_claimed": claimed,
        "caravans_completed": completed,
        "mean_vp": statistics.fmean(s["vp"] for s in seats),
        "mean_winner_vp": statistics.fmean(max(s["vp"] for s in g["seats"]) for g in games),
        "mean_vp_spread": statistics.fmean(spreads),
        "final_vp": [[s["vp"] for s in g["seats"]] for g in games],
        "ms_per_decision": 1000 * sum(s["seconds"] for s in seats) / max(1, decisions),
        "step_cap_games": sum(1 for g in games if g["reason"] == "step_cap"),
    }


def share(games: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The new greedy's share of the wins (ties split); its mean VP and its opponents'."""
    wins = sum(s["win"] for g in games for s in g["seats"] if s["bot"] == "new")
    low, high = wilson(wins, len(games))
    return {
        "games": len(games),
        "new_wins": wins,
        "share": wins / max(1, len(games)),
        "ci95": [low, high],
        "new_mean_vp": statistics.fmean(s["vp"] for g in games for s in g["seats"] if s["bot"] == "new"),
        "opponent_mean_vp": statistics.fmean(s["vp"] for g in games for s in g["seats"] if s["bot"] != "new"),
    }


def paired_timing(mode: str, games: int = 2, every: int = 3, repeats: int = 2) -> dict[str, float]:
    """Mean ms per decision of both evaluations on the same positions, timed alternately (so that the
    machine's load weighs on both alike): every `every`-th decision with a choice from self-play games of
    the current greedy and of the previous one."""
    positions: list[tuple[dict[str, Any], list[Action]]] = []
    for i in range(games):
        bot = "new" if i % 2 == 0 else "old"
        state = make(GAME, PLAYERS, SEED_BASE + i, MODES[mode])
        policies = [_policy(bot, SEED_BASE + i + seat) for seat in range(PLAYERS)]
        count = 0
        while not state.is_over():
            seat = state.current_seats()[0]
            legal = state.legal_actions(seat)
            observation = state.observation(seat)
            if len(legal) > 1:
                count += 1
                if count % every == 0:
                    positions.append((observation, list(legal)))
            state.apply(seat, policies[seat].choose(observation, legal))
    seconds = {"new": 0.0, "old": 0.0}
    for _ in range(repeats):
        for index, (observation, legal) in enumerate(positions):
            for bot in ("new", "old") if index % 2 == 0 else ("old", "new"):
                policy = _policy(bot, index)
                started = time.perf_counter()
                policy.choose(observation, legal)
                seconds[bot] += time.perf_counter() - started
    decisions = repeats * len(positions)
    return {
        "positions": len(positions),
        "old_ms": 1000 * seconds["old"] / decisions,
        "new_ms": 1000 * seconds["new"] / decisions,
        "ratio_new_over_old": seconds["new"] / seconds["old"],
    }


def main() -> int:
    games = int(os.environ.get("CARAVANSERAI_BENCH_MP2_GAMES", "30"))
    workers = int(os.environ.get("CARAVANSERAI_BENCH_WORKERS", "2"))
    series: dict[tuple[str, str], list[Table]] = {}
    for mode in MODES:
        series[(mode, "self-old")] = self_play_tables(mode, "old", games)
        series[(mode, "self-new")] = self_play_tables(mode, "new", games)
        series[(mode, "vs-old")] = head_to_head_tables(mode, "old", 2 * games)
        series[(mode, "vs-random")] = head_to_head_tables(mode, "random", games)
    flat = [t for tables in series.values() for t in tables]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        played = list(pool.map(play, flat, chunksize=1))
    print(f"{len(flat)} games in {time.perf_counter() - started:.0f}s on {workers} processes")
    results: dict[str, Any] = {}
    index = 0
    for (mode, name), tables in series.items():
        chunk, index = played[index : index + len(tables)], index + len(tables)
        results.setdefault(mode, {})[name] = behaviour(chunk) if name.startswith("self") else share(chunk)
    for mode in MODES:
        results[mode]["timing"] = paired_timing(mode)

    for mode, data in results.items():
        old, new, timing = data["self-old"], data["self-new"], data["timing"]
        print(f"\n{mode}: greedy in every seat, {games} games (per player and game)")
        rows = [[k, f"{old['per_player'][k]:.2f}", f"{new['per_player'][k]:.2f}"] for k in COUNTED]
        rows += [
            [
                "caravans claimed/completed",
                f"{old['caravans_claimed']}/{old['caravans_completed']}",
                f"{new['caravans_claimed']}/{new['caravans_completed']}",
            ],
            ["mean VP", f"{old['mean_vp']:.1f}", f"{new['mean_vp']:.1f}"],
            ["winner's VP", f"{old['mean_winner_vp']:.1f}", f"{new['mean_winner_vp']:.1f}"],
            ["VP spread (best - worst)", f"{old['mean_vp_spread']:.1f}", f"{new['mean_vp_spread']:.1f}"],
            ["ms per decision (series)", f"{old['ms_per_decision']:.2f}", f"{new['ms_per_decision']:.2f}"],
            ["ms per decision (paired)", f"{timing['old_ms']:.2f}", f"{timing['new_ms']:.2f}"],
        ]
        print_table(["", "before", "after"], rows)
        rows = []
        for name in ("vs-old", "vs-random"):
            s = data[name]
            rows.append(
                [
                    name,
                    s["games"],
                    f"{s['share']:.2f}",
                    f"[{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}]",
                    f"{s['new_mean_vp']:.1f}",
                    f"{s['opponent_mean_vp']:.1f}",
                ]
            )
        print_table(["new greedy", "games", "win share", "95% interval", "its VP", "opponents' VP"], rows)
    slower = [data["timing"]["ratio_new_over_old"] for data in results.values()]
    write_results(
        "mp2_play",
        {
            "game": GAME,
            "players": PLAYERS,
            "games_per_series": games,
            "seed_base": SEED_BASE,
            "modes": results,
            "time_ratio_new_over_old": slower,
        },
    )
    beats = all(d["vs-old"]["ci95"][0] > 0.5 for d in results.values())
    fast = all(r <= 1.25 for r in slower)
    print(f"\nnew greedy beats the previous one in every mode: {beats}; at most 25% slower: {fast}")
    return 0 if beats and fast else 1
