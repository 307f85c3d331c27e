"""The Voyages of Marco Polo's position evaluation for the house bots (greedy, mcts), in victory points.

Pure: reads a state, changes nothing it was given, no RNG. It judges a seat only from what that seat may
know: its own goal cards and public facts (it is called on states sampled from the seat's observation, so
other seats' goals there are random guesses and are never used).

The value is the seat's points so far plus what the rest of its position is worth in points at this stage
of the game. A pending choice of the seat itself (a bazaar column, a route, contracts to take, ...) is
resolved greedily first, so a placement is judged by its best outcome. The terms, and why each is there:

- Points already scored: contracts, small-city VP, post milestones, exchanges.
- Coins and camels: worth what they buy while actions remain, fading toward their final-scoring rate (coins
  1 per 10, camels only break ties). Coins and camels also count through the road ahead (below): a seat
  with somewhere to go needs them for the Travel table and the routes' costs.
- Goods by their scarcity (gold takes three dice, pepper one), in full up to what the contracts in hand
  (and two more) need and at about a third beyond: a bazaar paying in goods nobody needs is no better
  than coins (the bots used to end games with 19 pepper). With a post in Beijing each good is also half a
  point at the end.
- Contracts in hand (most of a strong player's points): what completing one gains (its reward, and a step
  toward the most-contracts bonus) over what its cost is worth, counted at a quarter as an option and up to
  four fifths with the cost held; below the gain of completing it, so a contract is completed when it can
  be. The most-contracts bonus by the seat's standing in completed contracts.
- Trading posts, each for what it brings until the end: the goal cards (both cities: the card's VP) and
  the distinct goal cities (1/3/6/10), with half a card for a card whose first city is held while travels
  remain; a small city's bonus every round still to come; a large city's city card (an extra action space
  for one die each round); Beijing's arrival VP; and the post milestones (8th post 5 VP, 9th 10 VP)
  anticipated as posts accumulate. A post is also simply progress: the reason to travel at all.
- The road ahead (`reach`): a figure near cities worth a post (the seat's goal cities, Beijing while its
  better arrival spaces are free, bonus cities, large cities with an outpost bonus left) is worth part of
  those posts, decaying with the distance (map steps plus the routes' camel and coin costs) and nothing
  beyond what the travels left in the game can cover. Without this a one-step bot never leaves Venice: a
  post two steps away is worth nothing until the figure stands in it, and the first step only costs.
- Dice not yet placed this round: each is an action still to take (about what a good placement gains,
  little in the last round, where a die left is worth nothing soon), plus a little per pip. The pip term is small on purpose: a reroll or an adjustment pays only when the
  resulting placement is better, which the placement itself shows; valuing pips for their own sake had the
  bots spend camels on dice 7-20 times a game.
- Pending choices of the seat (what an action in progress is still worth), used when the greedy chain
  stops before the choice is made.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from engine_service.games.common.dice import value_of
from engine_service.games.voyages.scoring import MOST_CONTRACTS_VP, beijing_vp
from engine_service.games.voyages.tables import (
    BAZAAR,
    BEIJING,
    BEIJING_VP,
    CARD_SLOTS,
    CITY_BONUSES,
    CONTRACTS,
    DISTINCT_CITY_VP,
    GOALS,
    GOODS,
    LARGE_CITIES,
    NODES,
    OASES,
    OUTPOST_BONUSES,
    ROUTES,
    SMALL_CITIES,
    TRAVEL_COST,
)

if TYPE_CHECKING:
    from engine_service.games.voyages.rules import VoyagesState

CHAIN_DEPTH = 6
# Goods while actions remain (scarcer goods worth more), in full up to the needs of the contracts in hand plus
# GOODS_SPARE, at GOODS_EXCESS beyond.
GOOD_VALUE = {"pepper": 0.55, "silk": 0.75, "gold": 0.95}
GOODS_SPARE = 2
GOODS_EXCESS = 0.35
# A completed contract is also a step toward the most-contracts bonus (7 VP); a contract in hand counts up to
# CONTRACT_BASE + CONTRACT_HELD of what completing it gains (a contract is an option on the goods to come).
CONTRACT_STEP = 1.0
CONTRACT_BASE = 0.25
CONTRACT_HELD = 0.55
# A small city's bonus, in points per round it is still received.
BONUS_VALUE = {"A": 1.6, "B": 1.3, "C": 1.8, "D": 1.8, "E": 1.5, "F": 3.0}
# A city card slot: an action space of the seat's own for one die each round (better than the 5-coin space).
CARD_USE_VALUE = 1.2
# Every post: progress, and a share of the game's post-driven income (city cards counting posts, ...).
POST_VALUE = 3.0
# Post milestones (the 8th, 9th and, for Wilhelm, 11th post; the rules' table) and how likely each further
# post is.
MILESTONES = ((8, 5), (9, 10), (11, 10))
MILESTONE_ODDS = 0.65
# Half a goal card for a card with one of its cities held, while there are travels left to get the other.
HALF_GOAL = 0.45
# The road ahead: a target `d` steps away counts REACH_NEAR * REACH_DECAY ** (d - 1) of its worth (half of
# it next door, so arriving still pays); the best targets count 1, 1/2, 1/4 (one figure travels to one place
# at a time), the k-th only while k travels are left.
REACH_NEAR = 0.5
REACH_DECAY = 0.8
REACH_WEIGHTS = (1.0, 0.5, 0.25)
# The share of a target's reach that waits on the coins and camels to get there: coins and camels are worth
# more to a seat with somewhere to go.
AFFORD_SHARE = 0.8
# Distance: one step per route, plus route costs in steps (4 camels or 8 coins ~ one more step).
CAMEL_STEP = 0.25
COIN_STEP = 0.125
# Travels a seat may still make: about 1.2 per round to come (the Travel space takes the seat's colour once a
# round), and one more this round with two dice left and the space open to it; one travel covers about
# STEPS_PER_TRAVEL steps.
TRAVELS_PER_ROUND = 1.2
STEPS_PER_TRAVEL = 3.5
# An unplaced die is worth about what a good placement gains at that stage of the game (measured from
# greedy self-play: 2.9 per die in round 1 falling to 1.5 in round 5), so placing dice is roughly neutral
# for a seat that plays well and a search does not mistake "let the others act" for an advantage. In the last
# round less: a die kept back there (a money bag, another bonus) only delays the end.
DIE_BASE = (2.2, 1.4, 1.2, 1.0, 0.5)
DIE_PIP = 0.08

CITY_NODES = (*LARGE_CITIES, *SMALL_CITIES, BEIJING)
CARDS_OF_CITY = {city: [i for i, (_slot, c) in enumerate(CARD_SLOTS) if c == city] for city in LARGE_CITIES}


class Path(NamedTuple):
    """The cheapest way from a node to a city: effective distance, map steps, the routes' extra costs."""

    distance: float
    steps: int
    camels: int
    coins: int


def _paths(oasis_jumps: bool) -> dict[int, dict[int, Path]]:
    """The cheapest path (by effective distance) from every node to every city (Dijkstra; 25 nodes)."""
    out: dict[int, dict[int, Path]] = {}
    for start in (n["id"] for n in NODES):
        best = {start: Path(0.0, 0, 0, 0)}
        queue = [(0.0, start)]
        while queue:
            d, node = heapq.heappop(queue)
            here = best[node]
            if d > here.distance:
                continue
            links = [(o, c[0], c[1]) for o, c in ROUTES.neighbours(node)]
            if oasis_jumps and node in OASES:
                links += [(o, 0, 0) for o in OASES if o != node]
            for other, camels, coins in links:
                step = Path(d + 1.0 + CAMEL_STEP * camels + COIN_STEP * coins, here.steps + 1,
                            here.camels + camels, here.coins + coins)  # fmt: skip
                if other not in best or step.distance < best[other].distance:
                    best[other] = step
                    heapq.heappush(queue, (step.distance, other))
        out[start] = {c: best[c] for c in CITY_NODES if c in best and c != start}
    return out


PATHS = _paths(oasis_jumps=False)
PATHS_JOHANNES = _paths(oasis_jumps=True)


def travel_coins(steps: int) -> int:
    """Coins of the Travel table for `steps` steps, split into as many 6-step travels as needed."""
    full, rest = divmod(steps, len(TRAVEL_COST) - 1)
    return full * TRAVEL_COST[-1] + TRAVEL_COST[rest]


def evaluate(state: VoyagesState, seat: int) -> float:
    """The seat's prospects in points, after the choices pending at this moment (an action in progress,
    whoever's it is) are resolved greedily by the deciding seat's static value."""
    if state.is_over():
        return state.res[seat]["vp"] + 0.01 * state.res[seat]["camels"]
    return static_value(resolved(state, seat), seat)


def resolved(state: VoyagesState, seat: int) -> VoyagesState:
    """`state` with its pending choices (if any) taken greedily. Goal cards are hidden, so a choice is
    judged with goal cards only when it is `seat`'s own; other seats' choices use public facts alone.
    Cached on the state for its step (a search bot evaluates the same state for every seat in turn)."""
    own = bool(state.pending) and int(state.pending[0]["seat"]) == seat
    cache = state.__dict__.get("_resolved")
    if cache is None or cache[0] != state.step or cache[1] is not state.pending:
        cache = (state.step, state.pending, {})
        state.__dict__["_resolved"] = cache
    variants: dict[bool, VoyagesState] = cache[2]
    if own in variants:
        return variants[own]
    current = public_copy(state) if state.pending else state
    depth = 0
    while depth < CHAIN_DEPTH and current.pending and not current.is_over():
        decider = int(current.pending[0]["seat"])
        actions = current.legal_actions(decider)
        best_value = float("-inf")
        best_state = current
        for action in actions:
            trial = current.clone()
            trial.apply(decider, action.id)
            value = static_value(trial, decider, goals=own and decider == seat)
            if value > best_value:
                best_value, best_state = value, trial
        current = best_state
        depth += 1
    variants[own] = current
    return current


def public_copy(state: VoyagesState) -> VoyagesState:
    """A copy whose hidden contracts (round piles, unseen top of the special pile) lie in a canonical order:
    a draw made while resolving then depends only on public facts (which contracts are unseen)."""
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


def travels_left(state: VoyagesState, seat: int) -> float:
    """About how many more Travel actions the seat can take this game."""
    rounds_left = max(0, 5 - state.round)
    dice = state.dice[seat]
    this_round = 0.0
    if len(dice) >= 2:
        # each space takes the seat's own colour once a round (black and white dice excepted)
        colour_free = all(placed[0] != seat for placed in state.spaces["travel"])
        this_round = 1.0 if colour_free or sum(1 for t in dice if t[0] != "c") >= 2 else 0.0
    return TRAVELS_PER_ROUND * rounds_left + this_round


def goal_worth(held: set[int] | frozenset[int], goals: list[int], chances: bool) -> float:
    """Goal cards with both cities held, the distinct goal cities' points, and (with `chances`) half a card
    for each card with one city held."""
    value = 0.0
    cities = 0
    seen: set[int] = set()
    for g in goals:
        card = GOALS[g]
        got = 0
        for c in card["cities"]:
            if c in held:
                got += 1
                if c not in seen:
                    seen.add(c)
                    cities += 1
        if got == 2:
            value += card["vp"]
        elif got == 1 and chances:
            value += HALF_GOAL * card["vp"]
    return value + DISTINCT_CITY_VP[min(cities, len(DISTINCT_CITY_VP) - 1)]


def milestone_worth(placed: int, posts_ahead: float) -> float:
    """The milestones still to come, by how many posts they need and how many the seat may still place."""
    value = 0.0
    for at, vp in MILESTONES:
        need = at - placed
        if 0 < need <= posts_ahead:
            value += vp * MILESTONE_ODDS**need
    return value


def post_worth(city_bonus: Mapping[str, str], node: int, rounds_left: int, late: float) -> float:
    """What a post in `node` brings besides goals, milestones and Beijing's VP: progress, and a small city's
    bonuses or a large city's city cards to come."""
    value = POST_VALUE * (0.5 + 0.5 * late)
    if node in SMALL_CITIES:
        value += BONUS_VALUE[city_bonus[str(node)]] * rounds_left
    elif node in CARDS_OF_CITY:
        value += CARD_USE_VALUE * len(CARDS_OF_CITY[node]) * (rounds_left + 0.5)
    return value


def static_value(state: VoyagesState, seat: int, goals: bool = True) -> float:
    if state.is_over():
        return state.res[seat]["vp"] + 0.01 * state.res[seat]["camels"]
    res = state.res[seat]
    rounds_left = max(0, 5 - state.round)  # full rounds after this one
    progress = min(1.0, max(0.0, (state.round - 1) / 5.0))
    late = 1.0 - progress
    value = float(res["vp"])
    posts = state.posts[seat]
    held = set(posts)
    in_beijing = BEIJING in held

    # holdings, fading toward their final rates
    value += res["coins"] * (0.1 + 0.22 * late)
    value += res["camels"] * (0.05 + 0.4 * late)
    value += goods_value(state, seat, res, late, in_beijing)

    # contracts in hand: what completing one gains over the goods it takes, by the share of its cost held
    for cid in state.active[seat]:
        value += contract_worth(cid, res, late, in_beijing)
    # the most-contracts bonus
    mine = len(state.done[seat])
    best_other = max((len(state.done[s]) for s in range(state.num_players) if s != seat), default=0)
    if mine > best_other:
        value += MOST_CONTRACTS_VP * 0.8
    elif mine == best_other:
        value += MOST_CONTRACTS_VP * 0.5
    else:
        value += MOST_CONTRACTS_VP * 0.2 / (1 + best_other - mine)
    value += 0.6 * mine * late

    # posts: goals, milestones, bonuses to come, Beijing
    travels = travels_left(state, seat)
    own_goals = state.goals[seat] if goals else []
    chances = travels >= 1.0
    goal_now = goal_worth(held, own_goals, chances)
    value += goal_now
    placed = state.posts_placed[seat]
    posts_ahead = min(float(state.posts_left[seat]), travels)
    value += milestone_worth(placed, posts_ahead)
    for node in posts:
        value += post_worth(state.city_bonus, node, rounds_left, late)
    value += beijing_vp(state, seat)

    # the road ahead: cities worth a post within reach of a figure
    if travels > 0 and state.posts_left[seat] > 0:
        value += reach_value(state, seat, held, own_goals, travels)

    # dice still to place this round
    base = DIE_BASE[min(max(state.round, 1), 5) - 1]
    for tok in state.dice[seat]:
        pip = value_of(tok) or 5
        value += base + DIE_PIP * pip
    # choices of this seat still pending (what the action in progress is still worth)
    for effect in state.pending:
        if int(effect["seat"]) == seat:
            value += pending_value(state, seat, effect, late)
    return value


def reach_value(
    state: VoyagesState, seat: int, held: set[int], own_goals: list[int], travels: float
) -> float:
    """Part of what the best few posts not yet held are worth, by their distance from the nearest figure
    and by how much of the coins and camels the way there needs the seat already holds."""
    res = state.res[seat]
    targets = _targets(
        state.chars[seat] == "johannes",
        tuple(state.figures[seat]),
        frozenset(held),
        tuple(own_goals),
        state.posts_placed[seat],
        state.posts_left[seat],
        travels,
        state.round,
        state.beijing.index(None) if None in state.beijing else None,
        tuple(sorted(state.outposts.items())),
        tuple(sorted(state.city_bonus.items())),
    )
    coins, camels = res["coins"], res["camels"]
    goods = 0.5 * sum(res[g] for g in GOODS)
    worths = []
    for worth, near, need_coins, need_camels, beijing in targets:
        afford = min(1.0, coins / need_coins)
        if need_camels:
            afford *= min(1.0, camels / need_camels)
        if beijing:
            worth += goods * near
        worths.append(worth * (1.0 - AFFORD_SHARE + AFFORD_SHARE * afford))
    worths.sort(reverse=True)
    # the k-th target needs a k-th travel: late in the game only the travels left count
    return sum(
        w * k * min(1.0, travels - i)
        for i, (w, k) in enumerate(zip(worths, REACH_WEIGHTS, strict=False))
        if travels > i
    )


@lru_cache(maxsize=8192)
def _targets(
    johannes: bool,
    figures: tuple[int, ...],
    held: frozenset[int],
    own_goals: tuple[int, ...],
    placed: int,
    posts_left: int,
    travels: float,
    round_no: int,
    beijing_slot: int | None,
    outposts: tuple[tuple[str, int], ...],
    city_bonus: tuple[tuple[str, str], ...],
) -> tuple[tuple[float, float, int, int, bool], ...]:
    """The cities within reach of a figure and not held: (worth times nearness, nearness, coins and camels
    the way needs, is Beijing). A pure function of its arguments, cached: the trial states of one decision
    mostly share them."""
    table = PATHS_JOHANNES if johannes else PATHS
    rounds_left = max(0, 5 - round_no)
    late = 1.0 - min(1.0, max(0.0, (round_no - 1) / 5.0))
    bonuses = dict(city_bonus)
    outpost_of = dict(outposts)
    horizon = travels * STEPS_PER_TRAVEL
    posts_ahead = min(float(posts_left), travels)
    milestone_step = (
        milestone_worth(placed + 1, posts_ahead - 1)
        + _milestone_now(placed + 1)
        - milestone_worth(placed, posts_ahead)
    )
    goals = list(own_goals)
    goal_cities = {c for g in goals for c in GOALS[g]["cities"]}
    goal_now = goal_worth(held, goals, True)
    out = []
    for city in CITY_NODES:
        if city in held:
            continue
        path = min((table[f][city] for f in figures if city in table[f]), default=None)
        if path is None or path.distance > horizon:
            continue
        worth = milestone_step + post_worth(bonuses, city, max(0, rounds_left - 1), late)
        if city in goal_cities:
            worth += goal_worth(held | {city}, goals, True) - goal_now
        if city == BEIJING:
            worth += BEIJING_VP[beijing_slot] if beijing_slot is not None else 0.0
        elif city in LARGE_CITIES:
            bonus = outpost_of.get(str(city))
            if bonus is not None:
                worth += bundle_value(OUTPOST_BONUSES[bonus], late, False)
        near = REACH_NEAR * REACH_DECAY ** (path.distance - 1.0)
        need = travel_coins(path.steps) + path.coins
        out.append((worth * near, near, need, path.camels, city == BEIJING))
    return tuple(out)


def goods_value(state: VoyagesState, seat: int, res: dict[str, int], late: float, in_beijing: bool) -> float:
    """Goods by their scarcity (gold takes three dice, pepper one), in full up to what the contracts in hand
    and a few more need and at a fraction beyond (nobody needs 19 pepper), plus half a point each at the end
    with a post in Beijing."""
    value = 0.0
    for g in GOODS:
        have = res[g]
        if not have:
            continue
        need = GOODS_SPARE + sum(CONTRACTS[c]["cost"].get(g, 0) for c in state.active[seat])
        useful = min(have, need)
        value += GOOD_VALUE[g] * late * (useful + GOODS_EXCESS * (have - useful))
        if in_beijing:
            value += 0.5 * have
    return value


def contract_worth(cid: int, res: dict[str, int], late: float, in_beijing: bool) -> float:
    """A contract in hand: its reward (and a step toward the most-contracts bonus) over the value of its cost,
    counted by the share of the cost already held; below the gain of completing it, so a contract is
    completed as soon as it can be, and a share of it fades as the rounds left to finish it do."""
    net, cost, size = _contract_net(cid, late, in_beijing)
    if net <= 0.0:
        return 0.0
    share = sum(min(res[k], v) for k, v in cost) / size
    return net * (CONTRACT_BASE + CONTRACT_HELD * share) * (0.5 + 0.5 * late)


@lru_cache(maxsize=1024)
def _contract_net(cid: int, late: float, in_beijing: bool) -> tuple[float, tuple[tuple[str, int], ...], int]:
    contract = CONTRACTS[cid]
    cost = contract["cost"]
    net = (
        bundle_value(contract["reward"], late, in_beijing)
        + CONTRACT_STEP
        - bundle_value(cost, late, in_beijing)
    )
    return net, tuple(cost.items()), sum(cost.values())


def _milestone_now(placed: int) -> float:
    return float(sum(vp for at, vp in MILESTONES if at == placed))


def bundle_value(bundle: Mapping[str, int], late: float, in_beijing: bool) -> float:
    """What a reward bundle (or a cost) is worth now, with the holding weights of `static_value`."""
    beijing = 0.5 if in_beijing else 0.0
    value = bundle.get("vp", 0) + bundle.get("coins", 0) * (0.1 + 0.22 * late)
    value += bundle.get("camels", 0) * (0.05 + 0.4 * late)
    for g in GOODS:
        if g in bundle:
            value += bundle[g] * (GOOD_VALUE[g] * late + beijing)
    value += bundle.get("good_choice", 0) * (GOOD_VALUE["gold"] * late + beijing)
    value += bundle.get("move", 0) * 1.0 * late
    return value


def pending_value(state: VoyagesState, seat: int, effect: dict[str, object], late: float) -> float:
    """A rough value of a pending choice of the seat (its best option where that is cheap to see)."""
    kind = effect["t"]
    in_beijing = BEIJING in state.posts[seat]
    beijing = 0.5 if in_beijing else 0.0
    if kind == "column":
        columns = BAZAAR[str(effect["space"])]["columns"]
        top = min(6, int(str(effect["max"])))
        return max(bundle_value(columns[k], late, in_beijing) for k in range(top))
    if kind == "good":
        return GOOD_VALUE["gold"] * late + beijing
    if kind == "goods2":
        return (GOOD_VALUE["silk"] + GOOD_VALUE["gold"]) * late + 2 * beijing
    if kind == "travel":
        # the steps the seat can pay for (the chain then picks the route)
        coins = state.res[seat]["coins"]
        steps = max((k for k in range(1, 7) if TRAVEL_COST[k] <= coins), default=0)
        return 1.2 * min(4, steps, int(str(effect["max"]))) * (0.3 + late)
    if kind == "move":
        return 0.8 * late
    if kind == "pick":
        reach = state.board[: int(str(effect["die"]))]
        worth = sorted(float(CONTRACTS[c]["reward"]["vp"] + 1.5) * 0.35 * (0.3 + late) for c in reach)
        return float(sum(worth[-2:]))
    if kind == "space_bonus":
        return int(str(effect["n"])) * (0.1 + 0.4 * late)
    if kind == "comp":
        return int(str(effect["n"])) * (0.1 + 0.4 * late)
    return 0.0


__all__ = ["CITY_BONUSES", "evaluate", "static_value"]
