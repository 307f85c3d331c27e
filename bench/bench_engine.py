"""Engine speed per registered game: random playouts per second, decisions per second, legal-list sizes, and
the house bots' decision times, all measured in this one run on the same machine.

The playout loop is the bare engine (legal_actions + apply with a seeded RNG choice); decision times are
measured through the bots' `choose` on the observations of one recorded game, so every bot answers the same
positions. The bots are the house levels (`engine_service.policies.levels`); the default search level,
`search`, must stay at 50 ms or less on average in every game (SEARCH_BUDGET_MS; the run says so and fails
otherwise). Decision times are process CPU time, so other jobs on a shared machine weigh on them less.
"""

from __future__ import annotations

import statistics
import time

from bench.common import percentile, print_table, write_results
from engine_service.games import list_games, make
from engine_service.games.rng import ChanceRng
from engine_service.policies import LEVELS, make_policy

PLAYOUT_SECONDS = 3.0
DECISIONS_PER_BOT = 60
BOTS = LEVELS
DEFAULT_SEARCH = "search"
SEARCH_BUDGET_MS = 50.0


def playouts(game_id: str, players: int) -> dict[str, float]:
    rng = ChanceRng(1)
    games = decisions = 0
    sizes: list[int] = []
    started = time.perf_counter()
    while time.perf_counter() - started < PLAYOUT_SECONDS:
        state = make(game_id, players, games)
        while not state.is_over():
            seat = state.current_seats()[0]
            legal = state.legal_actions(seat)
            sizes.append(len(legal))
            state.apply(seat, rng.choice(legal).id)
            decisions += 1
        games += 1
    elapsed = time.perf_counter() - started
    return {
        "playouts_per_second": games / elapsed,
        "decisions_per_second": decisions / elapsed,
        "decisions_per_game": decisions / games,
        "legal_list_max": max(sizes),
        "legal_list_median": statistics.median(sizes),
    }


def decision_times(game_id: str, players: int) -> dict[str, dict[str, float]]:
    """Milliseconds per decision for each house bot, on the same positions of one random game."""
    state = make(game_id, players, 99)
    rng = ChanceRng(2)
    positions = []
    while not state.is_over():
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        if len(legal) > 1:
            positions.append((state.observation(seat), legal))
        state.apply(seat, rng.choice(legal).id)
    step = max(1, len(positions) // DECISIONS_PER_BOT)
    sample = positions[::step][:DECISIONS_PER_BOT]
    times: dict[str, dict[str, float]] = {}
    for name in BOTS:
        policy = make_policy(name, seed=3)
        spent = []
        for observation, legal in sample:
            started = time.process_time()
            policy.choose(observation, legal)
            spent.append((time.process_time() - started) * 1000)
        times[name] = {
            "mean_ms": statistics.fmean(spent),
            "p50_ms": percentile(spent, 50),
            "p95_ms": percentile(spent, 95),
            "decisions": len(spent),
        }
    return times


def main() -> int:
    results = []
    for spec in list_games():
        players = min(4, spec.max_players)
        row = {"game_id": spec.game_id, "players": players, **playouts(spec.game_id, players)}
        row["bots"] = decision_times(spec.game_id, players)
        results.append(row)
    print_table(
        ["game", "players", "playouts/s", "decisions/s", "decisions/game", "legal max", "legal median"],
        [
            [
                r["game_id"],
                r["players"],
                f"{r['playouts_per_second']:.1f}",
                f"{r['decisions_per_second']:.0f}",
                f"{r['decisions_per_game']:.0f}",
                r["legal_list_max"],
                r["legal_list_median"],
            ]
            for r in results
        ],
    )
    print()
    print_table(
        ["game", "bot", "mean ms/decision", "p50 ms", "p95 ms", "vs random (mean)"],
        [
            [
                r["game_id"],
                bot,
                f"{t['mean_ms']:.2f}",
                f"{t['p50_ms']:.2f}",
                f"{t['p95_ms']:.2f}",
                f"{t['mean_ms'] / r['bots']['random']['mean_ms']:.0f}x",
            ]
            for r in results
            for bot, t in r["bots"].items()
        ],
    )
    slow = [r["game_id"] for r in results if r["bots"][DEFAULT_SEARCH]["mean_ms"] > SEARCH_BUDGET_MS]
    print(f"\n{DEFAULT_SEARCH}: mean decision within {SEARCH_BUDGET_MS:g} ms in every game: "
          + ("yes" if not slow else f"NO ({', '.join(slow)})"))  # fmt: skip
    write_results(
        "engine",
        {"playout_seconds_per_game": PLAYOUT_SECONDS, "search_budget_ms": SEARCH_BUDGET_MS, "games": results},
    )
    return 1 if slow else 0


if __name__ == "__main__":
    raise SystemExit(main())
