"""Marco Polo: Dragonda played by the house `greedy` bot: does a game of greedy against greedy look like a
real one (regular trading, passes, the tour, bonuses), and does the current evaluation beat the previous one?

Measured side by side in this one run, on fixed seeds, with the previous evaluation kept frozen below (the
`engine_service/games/dragonda/heuristic.py` of commit 3133e5a, names unchanged but `old_heuristic`):
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
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from typing import Any

from bench.common import print_table, wilson, write_results
from engine_service.games import Action, GameSpec, GameState, get_game
from engine_service.games.dragonda.board import BOARD, GOODS, HOME, MEANS_TABLE, PASSES, REQUIRED
from engine_service.games.dragonda.rules import WIN_XP, DragondaState, cargo_total
from engine_service.policies import make_policy
from engine_service.policies.base import Policy
from engine_service.policies.greedy import GreedyPolicy

GAME_ID = "dragonda-v1"
PLAYERS = 3
SEED_BASE = 18_000
WORKERS = 2
TIMED_GAMES = 4  # new-against-old games whose positions both evaluations are timed on
TIMING_PASSES = 3  # timed passes of each evaluation over those positions, alternating; the fastest counts


class FrozenGreedy(GreedyPolicy):
    """The house greedy bot (same sampling and tie-breaking) judging by the previous evaluation."""

    name = "greedy-old"

    def evaluate(self, spec: GameSpec, state: GameState, seat: int) -> float:
        assert isinstance(state, DragondaState)
        return old_heuristic(state, seat)


def make_bot(kind: str, seed: int) -> Policy:
    """`new` (the house greedy), `old` (greedy over the frozen evaluation) or `random`."""
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


# --- the previous evaluation, frozen (engine_service/games/dragonda/heuristic.py at 3133e5a) ---------------

DECK_SIZE = 76
BASE_RATE = 0.7  # XP per turn a traveller in the far zones can expect (spec 6.1)
MIX = 0.7  # share of the smaller of the two turn estimates that still counts
ZONE_WEIGHT = 1.0  # one draw's expected XP in the zone the token ends on
MIN_RATE = 0.2
XP_MARGIN = 5.0  # XP still needed below which the next draw's XP counts for less
OVER_XP = 0.1  # worth of an XP beyond the 51 needed (a tie-break only)
ZECCHINI_PER_XP = 15.0
MONEY_SOFT_CAP = 160.0
STEP_COST = 0.06  # zecchini a piece loses per step carried to its best market
CARGO_DISCOUNT = 0.95
PASS_VALUE = {"PL": 2.2, "CT": 2.6}
DEFENCE_VALUE = 0.9
ATTACK_VALUE = 0.5
STILL_COST = 1.2
FALSE_GUIDE_COST = 0.5
RIVAL_WEIGHT = 0.35
WIN_VALUE = 100.0
DEFENCE_ODDS = 0.3  # chance an attacked seat holding cards cancels an attack
SHIP_LAND_SPEED = 7.0
HORSE_LATER_SPEED = 8.0  # on foot with the price of a horse: nearly a horse's pace  # a ship reaches inland cities only by changing means in a port


def _expected_band(event: dict[str, object], key: str) -> float:
    bands = event["bands"]
    assert isinstance(bands, list)
    if not event["roll"]:
        return float(bands[0][key])
    total = 0.0
    for band in bands:
        for a in range(1, 7):
            for b in range(1, 7):
                if band["lo"] <= a + b <= band["hi"]:
                    total += band[key] / 36.0
    return total


@cache
def zone_rate(zone: str, has_pl: bool, has_ct: bool) -> float:
    """Expected XP-equivalent gained per turn spent in `zone` (one draw), using passes when they pay."""
    held = {"PL": has_pl, "CT": has_ct}
    total = 0.0
    for event in BOARD.events.values():
        if zone not in event["zones"]:
            continue
        base = _expected_band(event, "xp") + _expected_band(event, "money") / ZECCHINI_PER_XP
        option = event["pass"]
        if option and option["kind"] == "replace" and any(held[p] for p in option["passes"]):
            base = max(base, float(option["xp"]) - min(PASS_VALUE[p] for p in option["passes"] if held[p]))
        total += base
    return total / DECK_SIZE


@cache
def best_sale(space: str, good: str, sea: bool) -> float:
    """The best sell price of `good` reachable from `space`, less STEP_COST per step to get there."""
    dist = (BOARD.comb_dist if sea else BOARD.land_dist).get(space) or BOARD.comb_dist[space]
    best = 0.0
    for place, prices in BOARD.sell.items():
        steps = dist.get(place)
        if steps is not None:
            best = max(best, prices[good] - STEP_COST * steps)
    return best


def _dist_table(state: DragondaState, seat: int, pos: str) -> tuple[dict[str, int], bool]:
    """The distances the seat's means travels by from `pos` (land, or land+sea for a Ship or at sea)."""
    land = state.means[seat] != "ship" and pos in BOARD.land_dist
    return (BOARD.land_dist if land else BOARD.comb_dist)[pos], land


def _tour_steps(dist: dict[str, int], land: bool, mask: int) -> int:
    """Steps from here through every required city in `mask` (bits over REQUIRED) and back to VEN."""
    if mask == 0:
        return dist[HOME]
    tours = BOARD.tour_land if land else BOARD.tour_comb
    best = None
    for i, city in enumerate(REQUIRED):
        if mask >> i & 1:
            cost = dist[city] + tours[(mask & ~(1 << i), city)]
            best = cost if best is None else min(best, cost)
    assert best is not None
    return best


def _camps() -> dict[str, str]:
    """For each land zone, its land space nearest to VEN: where a traveller may gather the last XP."""
    camps: dict[str, str] = {}
    for space, _steps in sorted(BOARD.land_dist[HOME].items(), key=lambda item: (item[1], item[0])):
        camps.setdefault(BOARD.zone[space], space)
    return camps


CAMPS = _camps()


def _money_value(zecchini: float) -> float:
    capped = min(zecchini, MONEY_SOFT_CAP)
    return capped / ZECCHINI_PER_XP + max(0.0, zecchini - MONEY_SOFT_CAP) / (4 * ZECCHINI_PER_XP)


def _mask(state: DragondaState, seat: int) -> int:
    mask = 0
    for i, city in enumerate(REQUIRED):
        if city not in state.visited[seat]:
            mask |= 1 << i
    return mask


def _position_value(state: DragondaState, seat: int, pos: str, mask: int, xp: int) -> float:
    """The part of a seat's prospects that depends on where its token ends the turn (goods included: they
    are worth the best sale reachable from there; money and goods share one scale of diminishing worth)."""
    means = state.means[seat]
    speed = SHIP_LAND_SPEED if means == "ship" else float(MEANS_TABLE[means].movement)
    if means == "foot" and state.money[seat] >= MEANS_TABLE["horse"].price and BOARD.is_land(pos):
        speed = HORSE_LATER_SPEED  # a horse can be bought at the end of any turn on land
    passes = state.passes[seat]
    has = (passes["PL"] > 0, passes["CT"] > 0)
    need = max(0, WIN_XP - xp)
    dist, land = _dist_table(state, seat, pos)
    here = zone_rate(BOARD.zone[pos], *has)
    if mask:
        travel = _tour_steps(dist, land, mask) / speed
        xp_turns = need / zone_rate("3", *has)
        turns = max(travel, xp_turns) + MIX * min(travel, xp_turns)
    else:
        # Every city seen: gather the XP still needed where it comes fastest near home, then go home.
        home = dist[HOME] / speed
        turns = home + (need / max(here, MIN_RATE) if need else 0.0)
        for zone, camp in CAMPS.items():
            if need and camp in dist:
                turns = min(
                    turns, (dist[camp] + BOARD.land_dist[camp][HOME]) / speed + need / zone_rate(zone, *has)
                )
    # The next draw's XP is worth its full value only while XP is still needed.
    worth = 1.0 if need >= XP_MARGIN else OVER_XP + (1.0 - OVER_XP) * need / XP_MARGIN
    value = -BASE_RATE * turns + ZONE_WEIGHT * worth * here
    cargo = state.cargo[seat]
    goods = 0.0
    if cargo_total(cargo):
        sea = means == "ship"
        pieces = sorted((best_sale(pos, g, sea) for g in GOODS for _ in range(cargo[g])), reverse=True)
        goods = CARGO_DISCOUNT * sum(pieces[: MEANS_TABLE[means].capacity])
    return value + _money_value(state.money[seat] + goods)


def prospects(state: DragondaState, seat: int, *, own_hand: bool) -> float:
    """One seat's standing in XP; `own_hand` says whether the hand may be read (only the judging seat's)."""
    xp = state.xp[seat]
    value = _position_value(state, seat, state.pos[seat], _mask(state, seat), xp)
    value += OVER_XP * max(0, xp - WIN_XP)
    passes = state.passes[seat]
    value += sum(PASS_VALUE[p] * passes[p] for p in PASSES)
    hand = state.hands[seat]
    if own_hand:
        for card in hand:
            value += DEFENCE_VALUE if card.startswith("D") else ATTACK_VALUE
    else:
        value += 0.7 * len(hand)
    if state.still_pending[seat]:
        value -= STILL_COST
    if state.false_guide[seat]:
        value -= FALSE_GUIDE_COST
    return value


def _table_value(state: DragondaState, seat: int) -> float:
    if state.is_over():
        ranks = state.result().ranks
        return WIN_VALUE * (1.0 - (ranks[seat] - 1) / max(1, state.num_players - 1))
    own = prospects(state, seat, own_hand=True)
    rivals = [prospects(state, s, own_hand=False) for s in range(state.num_players) if s != seat]
    return own - RIVAL_WEIGHT * max(rivals)


def _settled(state: DragondaState) -> DragondaState:
    """A copy where pending goods returns are made by giving back the least valuable pieces first."""
    if not any(f["kind"] == "drop" for f in state.stack):
        return state
    other = state.clone()
    for frame in other.stack:
        if frame["kind"] != "drop":
            continue
        seat = int(frame["seat"])
        sea = other.means[seat] == "ship"
        for _ in range(int(frame["count"])):
            held = [g for g in GOODS if other.cargo[seat][g] > 0]
            if not held:
                break
            other.cargo[seat][min(held, key=lambda g: best_sale(other.pos[seat], g, sea))] -= 1
    other.stack = [f for f in other.stack if f["kind"] != "drop"]
    return other


def old_heuristic(state: DragondaState, seat: int) -> float:
    """`seat`'s prospects in XP; an attack awaiting its defence is valued by the odds of its landing."""
    if state.stack and state.stack[-1]["kind"] == "defence" and not state.is_over():
        frame = state.stack[-1]
        target = int(frame["seat"])
        hit = state.clone()
        hit._resolve_attack(frame, ACCEPT)  # pops the frame and applies the effect
        miss = state.clone()
        miss.stack.pop()
        if target == seat:
            odds = 1.0 if len(state._defence_actions(frame)) > 1 else 0.0
        else:
            odds = DEFENCE_ODDS if state.hands[target] else 0.0
        return (1 - odds) * _table_value(_settled(hit), seat) + odds * _table_value(_settled(miss), seat)
    return _table_value(_settled(state), seat)


ACCEPT = Action("accept:attack", "defence", {})
