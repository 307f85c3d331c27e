"""Marco Polo: Dragonda played by the house `greedy` bot: does a game of greedy against greedy look like a
real one (regular trading, passes, the tour, bonuses), and does the current evaluation beat the previous one?

Measured side by side in this one run, on fixed seeds, with the previous evaluation loaded from git: the
`engine_service/games/dragonda/heuristic.py` of commit 3133e5a (`BASELINE_REVISION`; a shallow clone must
fetch it):
- self-play: N three-player games with greedy in every seat, once with each evaluation; per game the sales
  and purchases, the zecchini sales brought in and what trade earned net, the passes bought, the Ships
  bought and first-arrival bonuses taken, the required cities each seat saw, the rounds played and whether
  the game ended by a victory or at the round cap;
- against `random`: one greedy seat and two random seats, the greedy seat rotated over the three seats of
  each seed: greedy's win share (rank 1) with a 95% Wilson interval, for each evaluation;
- new against old: one seat of the current greedy and two of the previous, rotated (a third of the wins is
  parity), and two-player games with both seat orders (a half is parity);
- time per greedy decision: both evaluations choosing on the same positions (those of the new-against-old
  games with more than one legal action), after a warm-up, in alternating passes; the fastest pass of each
  counts (the machine is shared).

Run: `python -m bench dragonda_play` (CARAVANSERAI_BENCH_DRAGONDA_GAMES, default 40, sets N; games are played
on two processes). Results: bench/results/dragonda_play.json.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.common import module_at_revision, print_table, wilson, write_results
from engine_service.games import GameSpec, GameState, get_game
from engine_service.games.dragonda.rules import DragondaState
from engine_service.policies import make_policy
from engine_service.policies.base import Policy
from engine_service.policies.greedy import GreedyPolicy

GAME_ID = "dragonda-v1"
PLAYERS = 3
SEED_BASE = 18_000
WORKERS = 2
TIMED_GAMES = 4  # new-against-old games whose positions both evaluations are timed on
TIMING_PASSES = 3  # timed passes of each evaluation over those positions, alternating; the fastest counts
HEURISTIC = "engine_service/games/dragonda/heuristic.py"
# 3133e5a: the last heuristic before 6f89ce8's trade routes, the previous evaluation this bench measures
BASELINE_REVISION = "3133e5aa5f89daffef43b1fdaeb1cb61f88287c8"


class FrozenGreedy(GreedyPolicy):
    """The house greedy bot (same sampling and tie-breaking) judging by the previous evaluation."""

    name = "greedy-old"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        baseline = module_at_revision(HEURISTIC, BASELINE_REVISION, "baseline_dragonda_heuristic")
        self.judge: Callable[[DragondaState, int], float] = baseline.heuristic

    def evaluate(self, spec: GameSpec, state: GameState, seat: int) -> float:
        assert isinstance(state, DragondaState)
        return self.judge(state, seat)


def make_bot(kind: str, seed: int) -> Policy:
    """`new` (the house greedy), `old` (greedy over the baseline evaluation) or `random`."""
    if kind == "old":
        return FrozenGreedy(seed)
    return make_policy("greedy" if kind == "new" else "random", seed=seed)


def play(task: tuple[int, tuple[str, ...]]) -> dict[str, Any]:
    """One game: per seat its bot kind, rank and behaviour counts, and the game's rounds and end reason."""
    seed, kinds = task
    spec = get_game(GAME_ID)
    state = spec.new_state(len(kinds), seed)
    assert isinstance(state, DragondaState)
    bots = [make_bot(kind, seed * 10 + i) for i, kind in enumerate(kinds)]
    for i, bot in enumerate(bots):
        bot.reset(GAME_ID, i)
    counts: list[Counter[str]] = [Counter() for _ in kinds]
    while not state.is_over():
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        action_id = bots[seat].choose(state.observation(seat), legal)
        action = next(a for a in legal if a.id == action_id)
        tally = counts[seat]
        if action.kind == "sell":
            tally["sales"] += 1
            tally["sold_z"] += int(action.details["total"])
        elif action.kind == "buy" and state.phase != "setup_shop":
            tally["purchases"] += 1
            tally["bought_z"] += int(action.details["total"])
        elif action.kind == "buy":
            tally["opening_z"] += int(action.details["total"])
        elif action.kind == "buy_pass":
            tally["passes"] += 1
        elif action.kind in ("buy_means", "means") and action.details["means"] == "ship":
            tally["ships"] += 1
        state.apply(seat, action_id)
    ranks = state.result().ranks
    for s, tally in enumerate(counts):
        tally["cities"] = len(state.visited[s])
        tally["bonuses"] = sum(1 for holder in state.bonus.values() if holder == s)
        tally["money_end"] = state.money[s]
    return {
        "seed": seed,
        "kinds": list(kinds),
        "ranks": list(ranks),
        "rounds": state.round,
        "reason": state.end_reason,
        "seats": [dict(c) for c in counts],
    }


def rotations(kind: str, other: str, players: int) -> list[tuple[str, ...]]:
    """`kind` in each seat once, `other` in the rest."""
    return [tuple(kind if s == i else other for s in range(players)) for i in range(players)]


def share(games: Sequence[Mapping[str, Any]], kind: str) -> dict[str, Any]:
    """The share of games a seat of `kind` won (rank 1), over the games where `kind` sits once."""
    wins = sum(1 for g in games for k, r in zip(g["kinds"], g["ranks"], strict=True) if k == kind and r == 1)
    low, high = wilson(wins, len(games))
    mean_rank = statistics.mean(
        r for g in games for k, r in zip(g["kinds"], g["ranks"], strict=True) if k == kind
    )
    return {
        "games": len(games),
        "wins": wins,
        "share": wins / len(games),
        "ci95": [low, high],
        "mean_rank": mean_rank,
    }


BEHAVIOUR = ("sales", "purchases", "sold_z", "trade_net_z", "passes", "ships", "bonuses", "cities")


def behaviour(games: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per game means (summed over its seats, cities per seat), and how the games ended."""
    per_game: dict[str, list[float]] = {key: [] for key in BEHAVIOUR}
    for game in games:
        seats = game["seats"]
        totals = {key: float(sum(s.get(key, 0) for s in seats)) for key in BEHAVIOUR}
        totals["trade_net_z"] = float(
            sum(s.get("sold_z", 0) - s.get("bought_z", 0) - s.get("opening_z", 0) for s in seats)
        )
        totals["cities"] = statistics.mean(s["cities"] for s in seats)
        for key in BEHAVIOUR:
            per_game[key].append(totals[key])
    return {
        "games": len(games),
        "per_game_mean": {key: statistics.mean(v) for key, v in per_game.items()},
        "sales_min_max": [min(per_game["sales"]), max(per_game["sales"])],
        "sales_per_game": [int(v) for v in per_game["sales"]],
        "games_with_fewer_than_5_sales": sum(1 for v in per_game["sales"] if v < 5),
        "completed": sum(1 for g in games if g["reason"] == "completed"),
        "round_cap": sum(1 for g in games if g["reason"] == "turn_cap"),
        "rounds_mean": statistics.mean(g["rounds"] for g in games),
        "rounds_min_max": [min(g["rounds"] for g in games), max(g["rounds"] for g in games)],
    }


def decision_times(seeds: Sequence[int]) -> dict[str, Any]:
    """Mean ms per decision of each evaluation on the same positions (more than one legal action)."""
    spec = get_game(GAME_ID)
    positions = []
    for seed in seeds:
        state = spec.new_state(PLAYERS, seed)
        kinds = rotations("new", "old", PLAYERS)[seed % PLAYERS]
        bots = [make_bot(kind, seed * 10 + i) for i, kind in enumerate(kinds)]
        while not state.is_over():
            seat = state.current_seats()[0]
            legal = state.legal_actions(seat)
            observation = state.observation(seat)
            if len(legal) > 1:
                positions.append((observation, legal))
            state.apply(seat, bots[seat].choose(observation, legal))
    times: dict[str, list[float]] = {"old": [], "new": []}
    for kind in ("old", "new") + ("old", "new") * TIMING_PASSES:  # the first pass of each warms its caches
        bot = make_bot(kind, 7)
        started = time.process_time()  # CPU time: less disturbed by the other processes on the machine
        for observation, legal in positions:
            bot.choose(observation, legal)
        times[kind].append(1000 * (time.process_time() - started) / len(positions))
    old, new = min(times["old"][1:]), min(times["new"][1:])  # the least disturbed pass of each
    return {"positions": len(positions), "old_ms": old, "new_ms": new, "ratio": new / old,
            "passes_ms": times}  # fmt: skip


def main() -> int:
    n = int(os.environ.get("CARAVANSERAI_BENCH_DRAGONDA_GAMES", "40"))
    seeds = [SEED_BASE + i for i in range(n)]
    series: dict[str, list[tuple[int, tuple[str, ...]]]] = {
        "self_old": [(s, ("old",) * PLAYERS) for s in seeds],
        "self_new": [(s, ("new",) * PLAYERS) for s in seeds],
        "old_vs_random": [(s, k) for s in seeds for k in rotations("old", "random", PLAYERS)],
        "new_vs_random": [(s, k) for s in seeds for k in rotations("new", "random", PLAYERS)],
        "new_vs_old": [(s, k) for s in seeds for k in rotations("new", "old", PLAYERS)],
        "new_vs_old_2p": [(s, k) for s in seeds for k in rotations("new", "old", 2)],
    }
    print(
        f"{n} seeds, {PLAYERS} players; series: "
        + ", ".join(f"{k} {len(v)} games" for k, v in series.items())
    )
    played: dict[str, list[dict[str, Any]]] = {}
    with ProcessPoolExecutor(max_workers=WORKERS) as pool:
        for name, tasks in series.items():
            started = time.perf_counter()
            played[name] = list(pool.map(play, tasks, chunksize=2))
            print(f"  {name}: {time.perf_counter() - started:.0f}s", flush=True)
    before, after = behaviour(played["self_old"]), behaviour(played["self_new"])
    rows = [
        [key, f"{before['per_game_mean'][key]:.1f}", f"{after['per_game_mean'][key]:.1f}"]
        for key in BEHAVIOUR
    ]
    for key in ("completed", "round_cap", "rounds_mean", "games_with_fewer_than_5_sales"):
        rows.append([key, f"{before[key]:g}", f"{after[key]:g}"])
    print("\ngreedy self-play, per game (3 seats summed; cities per seat)")
    print_table(["measure", "previous", "current"], rows)
    shares = {
        "old_vs_random": share(played["old_vs_random"], "old"),
        "new_vs_random": share(played["new_vs_random"], "new"),
        "new_vs_old": share(played["new_vs_old"], "new"),
        "new_vs_old_2p": share(played["new_vs_old_2p"], "new"),
    }
    parity = {"old_vs_random": 1 / 3, "new_vs_random": 1 / 3, "new_vs_old": 1 / 3, "new_vs_old_2p": 1 / 2}
    print("\nwin shares (rank 1) with 95% intervals")
    print_table(
        ["series", "games", "wins", "share", "95% interval", "parity", "mean rank"],
        [
            [k, v["games"], v["wins"], f"{v['share']:.2f}", f"{v['ci95'][0]:.2f}-{v['ci95'][1]:.2f}",
             f"{parity[k]:.2f}", f"{v['mean_rank']:.2f}"]
            for k, v in shares.items()
        ],
    )  # fmt: skip
    timing = decision_times(seeds[:TIMED_GAMES])
    print(f"\ntime per greedy decision on {timing['positions']} shared positions: previous {timing['old_ms']:.2f} ms, "
          f"current {timing['new_ms']:.2f} ms (x{timing['ratio']:.2f})")  # fmt: skip
    write_results(
        "dragonda_play",
        {
            "seeds": [seeds[0], seeds[-1]],
            "players": PLAYERS,
            "behaviour": {"previous": before, "current": after},
            "win_shares": {k: {**v, "parity": parity[k]} for k, v in shares.items()},
            "decision_ms": timing,
        },
    )
    ok = shares["new_vs_old"]["ci95"][0] > parity["new_vs_old"] and timing["ratio"] <= 1.25
    return 0 if ok else 1
