"""The ladder of house strengths, measured: random < greedy < search < search-strong in every game.

For each game (Marco Polo II with and without The Caravans), neighbouring levels play seat-rotated seeded
two-player series (every seed once with each level in each seat, so both meet the same dice and cards from
both seats): greedy against random, search against greedy, search-strong against search, and search-strong
against greedy for the bar the strongest must clear (at least 65% of the games the two could win, that is
games not tied for first). Per series and level: the win share (rank 1; a shared first counts a half) with
its 95% Wilson interval and the mean rank with its 95% normal interval. A neighbouring pair is ordered when
both the stronger level's intervals lie wholly on its side of the weaker's (no overlap). Also per series: the
mean milliseconds per decision of each level (process CPU time, decisions with a choice only).

Run: `python -m bench strengths` (CARAVANSERAI_BENCH_STRENGTHS_SEEDS, default 40, seeds per series, so twice
as many games; CARAVANSERAI_BENCH_STRENGTHS_GAMES, comma-separated variant keys such as `mp2-v1+caravans`,
and CARAVANSERAI_BENCH_STRENGTHS_SERIES, comma-separated pairs such as `search/greedy`, run some of them
only and keep the other figures in the results; games are played on two processes). Results:
bench/results/strengths.json: per game its series, which neighbouring pairs are ordered (null: not
measured), the levels shown in order from the weakest, and each search level's share against greedy.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.common import RESULTS, mean_interval, print_table, rotations, wilson, write_results
from engine_service.games import make
from engine_service.policies import LEVELS, make_policy
from engine_service.policies.levels import SEARCH_LEVELS, level_settings

VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "expedition-v1": ("expedition-v1", {}),
    "voyages-v1": ("voyages-v1", {}),
    "mp2-v1": ("mp2-v1", {}),
    "mp2-v1+caravans": ("mp2-v1", {"caravans": True}),
    "dragonda-v1": ("dragonda-v1", {}),
}
PAIRS = (("greedy", "random"), ("search", "greedy"), ("search-strong", "search"), ("search-strong", "greedy"))
BAR = 0.65  # the strongest level's share of the games it or greedy won, in every game
SEED_BASE = 41_000
WORKERS = 2

Task = tuple[str, int, tuple[str, ...]]  # variant key, seed, level per seat


def play(task: Task) -> dict[str, Any]:
    """One game: the lineup, the ranks, and per seat its decisions with a choice and their CPU seconds."""
    variant, seed, lineup = task
    game_id, options = VARIANTS[variant]
    state = make(game_id, len(lineup), seed, options)
    bots = [make_policy(level, seed=seed * 10 + i) for i, level in enumerate(lineup)]
    for i, bot in enumerate(bots):
        bot.reset(game_id, i)
    decisions = [0] * len(lineup)
    seconds = [0.0] * len(lineup)
    while not state.is_over():
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        started = time.process_time()
        action_id = bots[seat].choose(state.observation(seat), legal)
        if len(legal) > 1:
            decisions[seat] += 1
            seconds[seat] += time.process_time() - started
        state.apply(seat, action_id)
    ranks = [int(r) for r in state.result().ranks]
    return {"seed": seed, "lineup": list(lineup), "ranks": ranks, "decisions": decisions, "seconds": seconds}


def series_tasks(variant: str, pair: tuple[str, str], seeds: int) -> list[Task]:
    return [(variant, SEED_BASE + i, lineup) for i in range(seeds) for lineup in rotations(pair)]


def level_figures(games: Sequence[Mapping[str, Any]], level: str) -> dict[str, Any]:
    """A level's win share (a shared first counts a half) and mean rank, with their 95% intervals."""
    wins = 0.0
    ranks: list[float] = []
    seconds = decisions = 0.0
    for game in games:
        firsts = game["ranks"].count(1)
        for seat, name in enumerate(game["lineup"]):
            if name == level:
                rank = game["ranks"][seat]
                wins += 1 / firsts if rank == 1 else 0.0
                ranks.append(rank)
                seconds += game["seconds"][seat]
                decisions += game["decisions"][seat]
    return {
        "games": len(games),
        "wins": wins,
        "win_share": wins / len(games),
        "win_ci95": list(wilson(wins, len(games))),
        "mean_rank": statistics.fmean(ranks),
        "rank_ci95": list(mean_interval(ranks)),
        "ms_per_decision": 1000 * seconds / max(1, decisions),
    }


def series_figures(games: Sequence[Mapping[str, Any]], pair: tuple[str, str]) -> dict[str, Any]:
    """Both levels' figures, whether the stronger is ahead with no overlap, and its share of the decided
    games (those with a single winner)."""
    strong, weak = (level_figures(games, level) for level in pair)
    decided = [g for g in games if g["ranks"].count(1) == 1]
    strong_wins = sum(1 for g in decided if g["ranks"][g["lineup"].index(pair[0])] == 1)
    ahead_in_wins = strong["win_ci95"][0] > weak["win_ci95"][1]
    ahead_in_rank = strong["rank_ci95"][1] < weak["rank_ci95"][0]
    return {
        "levels": list(pair),
        pair[0]: strong,
        pair[1]: weak,
        "ordered": ahead_in_wins and ahead_in_rank,
        "decided_games": len(decided),
        "decided_share": strong_wins / max(1, len(decided)),
        "decided_ci95": list(wilson(strong_wins, len(decided))),
    }


def run_series(pool: ProcessPoolExecutor, variant: str, pair: tuple[str, str], seeds: int) -> dict[str, Any]:
    started = time.perf_counter()
    figures = series_figures(list(pool.map(play, series_tasks(variant, pair, seeds))), pair)
    strong, weak = figures[pair[0]], figures[pair[1]]
    print(f"  {variant} {pair[0]} vs {pair[1]}: {strong['games']} games, {time.perf_counter() - started:.0f}s; "
          f"win share {strong['win_share']:.2f} {interval(strong['win_ci95'])} / {weak['win_share']:.2f}, "
          f"ordered: {figures['ordered']}", flush=True)  # fmt: skip
    game_id = VARIANTS[variant][0]
    settings = {level: dict(level_settings(level, game_id)) for level in pair if level in SEARCH_LEVELS}
    return {"seeds": seeds, "settings": settings, **figures}


def summary(series: Mapping[str, Any]) -> dict[str, Any]:
    """Which neighbouring pairs are ordered (None: not measured), the levels shown in order from the
    weakest, and for each search level against greedy: ordered or not, and its share of the games it or
    greedy won, against the bar."""
    neighbours = {f"{LEVELS[i + 1]} vs {LEVELS[i]}": None for i in range(len(LEVELS) - 1)}
    ordered = {key: series[key]["ordered"] if key in series else None for key in neighbours}
    shown = [LEVELS[0]]
    for key, ok in ordered.items():
        if not ok:
            break
        shown.append(key.split(" vs ")[0])
    against_greedy = {}
    for level in LEVELS[2:]:
        if f"{level} vs greedy" in series:
            figures = series[f"{level} vs greedy"]
            share = figures["decided_share"]
            against_greedy[level] = {
                "ordered": figures["ordered"],
                "decided_share": share,
                "bar_met": share >= BAR,
            }
    return {"ordered": ordered, "shown_in_order": shown, "against_greedy": against_greedy}


def interval(low_high: Sequence[float], digits: int = 2) -> str:
    return f"[{low_high[0]:.{digits}f}, {low_high[1]:.{digits}f}]"


def table_rows(results: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for variant, report in results.items():
        for key, series in report["series"].items():
            strong, weak = series["levels"]
            a, b = series[strong], series[weak]
            rows.append([
                variant, key, str(a["games"]),
                f"{a['win_share']:.2f} {interval(a['win_ci95'])} / {b['win_share']:.2f} {interval(b['win_ci95'])}",
                f"{a['mean_rank']:.2f} {interval(a['rank_ci95'])} / {b['mean_rank']:.2f} {interval(b['rank_ci95'])}",
                "yes" if series["ordered"] else "NO",
                f"{series['decided_share']:.2f} of {series['decided_games']}",
                f"{a['ms_per_decision']:.1f} / {b['ms_per_decision']:.1f}",
            ])  # fmt: skip
    return rows


HEADERS = ["game", "series (stronger vs weaker)", "games", "win share [95%] stronger / weaker",
           "mean rank [95%] stronger / weaker", "no overlap", "stronger's share of decided games",
           "ms/decision"]  # fmt: skip


def main() -> int:
    seeds = int(os.environ.get("CARAVANSERAI_BENCH_STRENGTHS_SEEDS", "40"))
    variants = _chosen("CARAVANSERAI_BENCH_STRENGTHS_GAMES", list(VARIANTS))
    chosen = _chosen("CARAVANSERAI_BENCH_STRENGTHS_SERIES", [f"{a}/{b}" for a, b in PAIRS])
    pairs = [(p.partition("/")[0], p.partition("/")[2]) for p in chosen]
    print(f"{seeds} seeds x 2 seat orders per series, 2 players; levels {' < '.join(LEVELS)}")
    path = RESULTS / "strengths.json"
    results: dict[str, Any] = json.loads(path.read_text())["variants"] if path.exists() else {}
    with ProcessPoolExecutor(max_workers=WORKERS) as pool:
        for variant in variants:  # written after each series, so a long run keeps what it measured
            for strong, weak in pairs:
                series = results.setdefault(variant, {}).setdefault("series", {})
                series[f"{strong} vs {weak}"] = run_series(pool, variant, (strong, weak), seeds)
                results[variant].update(summary(series))
                results = {v: results[v] for v in VARIANTS if v in results}
                write_results(
                    "strengths", {"players": 2, "levels": list(LEVELS), "bar": BAR, "variants": results}
                )
    print()
    print_table(HEADERS, table_rows(results))
    for variant, report in results.items():
        shares = ", ".join(
            f"{level} {g['decided_share']:.0%}" for level, g in report["against_greedy"].items()
        )
        print(f"{variant}: shown in order: {' < '.join(report['shown_in_order'])}; share of the games won "
              f"against greedy (bar {BAR:.0%}): {shares or 'not measured'}")  # fmt: skip
    return 0


def _chosen(variable: str, known: list[str]) -> list[str]:
    """The comma-separated choice in `variable` (all of `known` when unset); unknown names are refused."""
    chosen = [v.strip() for v in os.environ.get(variable, "").split(",") if v.strip()] or known
    unknown = [v for v in chosen if v not in known]
    if unknown:
        raise SystemExit(f"{variable}: unknown {', '.join(unknown)}; known: {', '.join(known)}")
    return chosen


if __name__ == "__main__":
    raise SystemExit(main())
