"""The Voyages of Marco Polo's position evaluation for the house bots (greedy, mcts), in victory points.

Pure: reads a state, changes nothing it was given, no RNG. It judges a seat only from what that seat may
know: its own goal cards and public facts (it is called on states sampled from the seat's observation, so
other seats' goals there are random guesses and are never used).

The value is the seat's points plus what its holdings are worth in points: coins, camels and goods fade
toward their final-scoring rate as the game advances; contracts in hand count by how much of their cost is
already held; posts count for goal cards, small-city income still to come and city-card access; dice not
yet placed this round count as actions still to take. A pending choice of the seat itself (a bazaar column,
a route, contracts to take, ...) is resolved greedily first, so a placement is judged by its best outcome.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine_service.games.common.dice import value_of
from engine_service.games.voyages.scoring import MOST_CONTRACTS_VP, beijing_vp, goal_points
from engine_service.games.voyages.tables import (
    BAZAAR,
    BEIJING,
    CITY_BONUSES,
    CONTRACTS,
    GOALS,
    GOODS,
    LARGE_CITIES,
    SMALL_CITIES,
)

if TYPE_CHECKING:
    from engine_service.games.voyages.rules import VoyagesState

CHAIN_DEPTH = 6
BONUS_VALUE = {"A": 1.6, "B": 1.3, "C": 1.8, "D": 1.8, "E": 1.5, "F": 3.0}
POST_VALUE = 1.0
# An unplaced die is worth about what a good placement gains at that stage of the game (measured from
# greedy self-play: 2.9 per die in round 1 falling to 1.5 in round 5), so placing dice is roughly neutral
# for a seat that plays well and a search does not mistake "let the others act" for an advantage.
DIE_BASE = (2.2, 1.4, 1.2, 1.0, 0.9)
DIE_PIP = 0.2


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


def static_value(state: VoyagesState, seat: int, goals: bool = True) -> float:
    if state.is_over():
        return state.res[seat]["vp"] + 0.01 * state.res[seat]["camels"]
    res = state.res[seat]
    rounds_left = max(0, 5 - state.round)  # full rounds after this one
    progress = min(1.0, max(0.0, (state.round - 1) / 5.0))
    late = 1.0 - progress
    value = float(res["vp"])
    posts = state.posts[seat]
    in_beijing = BEIJING in posts

    value += res["coins"] * (0.1 + 0.22 * late)
    value += res["camels"] * (0.05 + 0.4 * late)
    goods = sum(res[g] for g in GOODS)
    value += goods * ((0.5 if in_beijing else 0.0) + 0.75 * late)

    # contracts in hand, by the share of their cost already held
    for cid in state.active[seat]:
        contract = CONTRACTS[cid]
        cost = contract["cost"]
        need = sum(cost.values())
        have = sum(min(res.get(k, 0), v) for k, v in cost.items())
        reward_vp = contract["reward"]["vp"] + 1.5
        value += reward_vp * (have / need) * (0.35 + 0.4 * late)
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

    # posts: goal cards, small-city income still to come, card access, Beijing
    own_goals = state.goals[seat] if goals else []
    cards, cities = goal_points(posts, own_goals)
    value += cards + cities
    held = set(posts)
    for g in own_goals:
        got = sum(1 for c in GOALS[g]["cities"] if c in held)
        if got == 1:
            value += 0.35 * GOALS[g]["vp"] * late
    for node in posts:
        if node in SMALL_CITIES:
            value += BONUS_VALUE[state.city_bonus[str(node)]] * rounds_left
        elif node in LARGE_CITIES:
            value += 1.5 * late
        value += POST_VALUE * late
    value += beijing_vp(state, seat)
    if in_beijing:
        value += 1.0
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


def bundle_value(bundle: dict[str, int], late: float, in_beijing: bool) -> float:
    """What a reward bundle is worth now, with the holding weights of `static_value`."""
    good = (0.5 if in_beijing else 0.0) + 0.75 * late
    value = bundle.get("vp", 0) + bundle.get("coins", 0) * (0.1 + 0.22 * late)
    value += bundle.get("camels", 0) * (0.05 + 0.4 * late)
    value += sum(bundle.get(g, 0) for g in GOODS) * good
    value += bundle.get("move", 0) * 1.0 * late
    return value


def pending_value(state: VoyagesState, seat: int, effect: dict[str, object], late: float) -> float:
    """A rough value of a pending choice of the seat (its best option where that is cheap to see)."""
    kind = effect["t"]
    in_beijing = BEIJING in state.posts[seat]
    good = (0.5 if in_beijing else 0.0) + 0.75 * late
    if kind == "column":
        columns = BAZAAR[str(effect["space"])]["columns"]
        top = min(6, int(str(effect["max"])))
        return max(bundle_value(columns[k], late, in_beijing) for k in range(top))
    if kind == "good":
        return good
    if kind == "goods2":
        return 2 * good
    if kind == "travel":
        return 1.2 * min(4, int(str(effect["max"]))) * (0.3 + late)
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
