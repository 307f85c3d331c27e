"""Marco Polo II's house greedy, measured: how its games look and how it does against random and against the
previous evaluation, with and without The Caravans.

For each mode (base game, `caravans`), N seeded three-player games with the house `greedy` in every seat are
played twice: once with the current evaluation (`engine_service/games/mp2/heuristic.py`) and once with the
previous one, frozen below (`_old_*`, this file only). Counted per player and game: travels (movements
made), trading posts placed, goals achieved (goal-card shields held at the end, goal-card seals improved),
contracts completed, caravans claimed and completed; per game the final VP of every seat and the spread
(best minus worst). Then, per mode, seat-rotated head-to-head series on the same seeds: the current greedy
against the previous one (2N games) and against `random` (N games), in tables of (A, B, B) and (A, A, B) in every seat rotation,
so that two equal bots would each win half the games; the share of wins (ties split) comes with a 95%
Wilson interval. The mean time per greedy decision (decisions with more than one legal action) is reported
from the self-play games, and, for the comparison, paired: both evaluations decide the same positions
(taken from self-play games), timed alternately so that the machine's load weighs on both alike.

Run: `python -m bench mp2_play` (CARAVANSERAI_BENCH_MP2_GAMES, default N = 30 games per series and mode;
CARAVANSERAI_BENCH_WORKERS, default 2 processes). Results: `bench/results/mp2_play.json`.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from bench.common import print_table, wilson, write_results
from engine_service.games import Action, GameSpec, GameState, make
from engine_service.games.mp2.rules import Mp2State
from engine_service.games.mp2.scoring import (
    CHARACTER_SHIELDS,
    MOST_CONTRACTS_VP,
    SECOND_CONTRACTS_VP,
    contract_counts,
    goal_seal_points,
)
from engine_service.games.mp2.tables import (
    CARAVAN_SELL_VP,
    CONTRACT_CITIES,
    CONTRACTS,
    GOALS,
    GOODS,
    MARKER_CITIES,
    POST_CITIES,
    SHIELD,
    SPECIAL_CITIES,
    shield_vp,
)
from engine_service.policies import make_policy
from engine_service.policies.base import Policy
from engine_service.policies.greedy import GreedyPolicy

GAME = "mp2-v1"
PLAYERS = 3
SEED_BASE = 18_000
MODES: dict[str, dict[str, Any]] = {"base": {}, "caravans": {"caravans": True}}
COUNTED = ("travels", "posts", "goal_shields", "goal_seals", "contracts", "claimed", "completed")


# --- the previous evaluation, frozen (heuristic.py before the caravan and reach terms) ---------------------
_OLD_CHAIN_DEPTH = 8
_OLD_RESOURCE_VALUE = {
    "coins": (0.1, 0.2),
    "camels": (0.02, 0.45),
    "pepper": (0.5, 0.5),
    "silk": (0.5, 0.9),
    "gold": (0.5, 1.4),
    "jade": (0.5, 0.8),
}


def _old_evaluate(state: Mp2State, seat: int) -> float:
    if state.is_over():
        return state.res[seat]["vp"] + 0.01 * state.res[seat]["camels"]
    return _old_static_value(_old_resolved(state), seat)


def _old_resolved(state: Mp2State) -> Mp2State:
    cached = state.__dict__.get("_old_resolved")
    if cached is not None and cached[0] == state.step and cached[1] is state.pending:
        found: Mp2State = cached[2]
        return found
    current = state
    for _ in range(_OLD_CHAIN_DEPTH):
        if not current.pending or current.is_over():
            break
        decider = int(current.pending[0]["seat"])
        best_value = float("-inf")
        best_state = current
        for action in current.legal_actions(decider):
            trial = current.clone()
            trial.apply(decider, action.id)
            value = _old_static_value(trial, decider)
            if value > best_value:
                best_value, best_state = value, trial
        current = best_state
    state.__dict__["_old_resolved"] = (state.step, state.pending, current)
    return current


def _old_static_value(state: Mp2State, seat: int) -> float:
    if state.is_over():
        return state.res[seat]["vp"] + 0.01 * state.res[seat]["camels"]
    res = state.res[seat]
    rounds_left = max(0, 5 - state.round)
    late = min(1.0, max(0.0, (5 - state.round + 0.5) / 5.0))
    value = float(res["vp"])
    for name, (final, trade) in _OLD_RESOURCE_VALUE.items():
        value += res[name] * (final + trade * late)
    for cid in state.active[seat]:
        contract = CONTRACTS[cid]
        cost = contract["cost"]
        need = sum(cost.values())
        have = 0
        for k, v in cost.items():
            if k in ("any", "diff2"):
                have += min(v * (1 if k == "any" else 2), sum(res[g] for g in GOODS))
            else:
                have += min(res.get(k, 0), v)
        worth = (0.0 if state.chars[seat] == "vidal" else contract["vp"]) + 2.0
        value += worth * (have / max(1, need)) * (0.55 + 0.3 * late)
    counts = contract_counts(state)
    mine = counts[seat]
    others = sorted((counts[s] for s in range(state.num_players) if s != seat), reverse=True)
    best_other = others[0] if others else 0
    if mine > best_other:
        value += MOST_CONTRACTS_VP * 0.8
    elif mine == best_other and mine > 0:
        value += MOST_CONTRACTS_VP * 0.55
    elif state.num_players > 2 and mine > 0:
        value += SECOND_CONTRACTS_VP * 0.5
    value += 0.5 * mine * late
    posts = list(state.posts[seat])
    for effect in state.pending:
        if effect["t"] == "move" and int(effect["seat"]) == seat:
            for fig in effect["moved"]:
                node = state.figures[seat][int(fig)]
                if node in POST_CITIES and node not in posts:
                    posts.append(node)
    held_shields = {SHIELD[c] for c in posts}
    shields = len(held_shields) + state.extra_shields[seat] + CHARACTER_SHIELDS.get(state.chars[seat], 0)
    goal = state.goals[seat]
    if goal:
        shields += sum(1 for s in GOALS[goal]["shields"] if s in held_shields)
    value += shield_vp(shields)
    value += goal_seal_points(state, seat)
    if goal:
        for seal, vp in GOALS[goal]["seals"].items():
            if state.seals[seat].get(seal) == 1:
                value += 0.45 * vp * late
    for level in state.seals[seat].values():
        value += 1.0 * late
        if level == 2:
            value += 1.2 * rounds_left
    for city in posts:
        value += 0.4 * late
        if city in MARKER_CITIES and city in state.markers:
            value += 1.4 * rounds_left
        if city in SPECIAL_CITIES:
            value += 1.2 * rounds_left + 0.8 * late
        if city in CONTRACT_CITIES:
            value += 1.5 * late
    for tok in state.dice[seat]:
        pip = 6 if tok[0] == "F" else int(tok[1:])
        value += 1.2 + 0.12 * pip
    value += len(state.spare_figs[seat]) * (1.2 + 0.12 * 6) * 0.6
    for caravan in state.caravans[seat]:
        for good in caravan["goods"]:
            value += 0.75 * CARAVAN_SELL_VP[good]
    return value


class FrozenGreedy(GreedyPolicy):
    """The house greedy bot (same sampling and tie-breaking) judging by the previous evaluation."""

    name = "greedy-old"

    def evaluate(self, spec: GameSpec, state: GameState, seat: int) -> float:
        assert isinstance(state, Mp2State)
        return _old_evaluate(state, seat)


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
