"""Marco Polo II's position evaluation for the house bots (greedy, mcts), in victory points.

Pure: reads a state, changes nothing it was given, no RNG. It judges a seat only from what that seat may
know: its own goal card and public facts (it is called on states sampled from the seat's observation, so
other seats' goal cards there are random guesses and are never used).

The value is the seat's points plus what its holdings are worth in points: coins, camels, goods and jade
fade from their trading value toward their final-scoring rate as the game advances; contracts in hand count
by how much of their cost is already held; shields are scored on the track now, with the goal card's
shields and seals; posts in bonus cities count for the income still to come; dice not yet placed count as
actions still to take; goods on a caravan as what completing it would bring. A pending choice of the seat
itself (an offer, a step, contracts to take, ...) is resolved greedily first, so a placement is judged by
its best outcome.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from engine_service.games.mp2.rules import Mp2State

CHAIN_DEPTH = 8
# (final-scoring value, extra trading value early in the game) per unit, in points
RESOURCE_VALUE = {
    "coins": (0.1, 0.2),
    "camels": (0.02, 0.45),
    "pepper": (0.5, 0.5),
    "silk": (0.5, 0.9),
    "gold": (0.5, 1.4),
    "jade": (0.5, 0.8),
}
CONTRACT_WEIGHT = 0.55
MARKER_ROUND_VALUE = 1.4
SPECIAL_ROUND_VALUE = 1.2
CONTRACT_CITY_VALUE = 1.5
POST_VALUE = 0.4
DIE_VALUE = 1.2
DIE_PIP = 0.12
SEAL_VALUE = 1.0
IMPROVED_ROUND_VALUE = 1.2


def evaluate(state: Mp2State, seat: int) -> float:
    """The seat's prospects in points, after the choices pending at this moment (an action in progress,
    whoever's it is) are resolved greedily by the deciding seat's own static value."""
    if state.is_over():
        return state.res[seat]["vp"] + 0.01 * state.res[seat]["camels"]
    return static_value(resolved(state), seat)


def resolved(state: Mp2State) -> Mp2State:
    """`state` with its pending choices (if any) taken greedily; cached on the state for its step, since a
    search bot evaluates the same state for every seat in turn."""
    cached = state.__dict__.get("_resolved")
    if cached is not None and cached[0] == state.step and cached[1] is state.pending:
        found: Mp2State = cached[2]
        return found
    current = state
    for _ in range(CHAIN_DEPTH):
        if not current.pending or current.is_over():
            break
        decider = int(current.pending[0]["seat"])
        best_value = float("-inf")
        best_state = current
        for action in current.legal_actions(decider):
            trial = current.clone()
            trial.apply(decider, action.id)
            value = static_value(trial, decider)
            if value > best_value:
                best_value, best_state = value, trial
        current = best_state
    state.__dict__["_resolved"] = (state.step, state.pending, current)
    return current


def static_value(state: Mp2State, seat: int) -> float:
    if state.is_over():
        return state.res[seat]["vp"] + 0.01 * state.res[seat]["camels"]
    res = state.res[seat]
    rounds_left = max(0, 5 - state.round)  # full rounds after this one
    late = min(1.0, max(0.0, (5 - state.round + 0.5) / 5.0))  # 1 early, near 0 in the last round
    value = float(res["vp"])
    for name, (final, trade) in RESOURCE_VALUE.items():
        value += res[name] * (final + trade * late)

    # contracts in hand, by the share of their cost already held
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
        value += worth * (have / max(1, need)) * (CONTRACT_WEIGHT + 0.3 * late)
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

    # shields, goal seals, posts and their income still to come; a movement in progress counts the posts
    # its moved figures will place where they stand
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
        value += SEAL_VALUE * late
        if level == 2:
            value += IMPROVED_ROUND_VALUE * rounds_left
    for city in posts:
        value += POST_VALUE * late
        if city in MARKER_CITIES and city in state.markers:
            value += MARKER_ROUND_VALUE * rounds_left
        if city in SPECIAL_CITIES:
            value += SPECIAL_ROUND_VALUE * rounds_left + 0.8 * late
        if city in CONTRACT_CITIES:
            value += CONTRACT_CITY_VALUE * late
    # dice and Donata's figures still to place this round
    for tok in state.dice[seat]:
        pip = 6 if tok[0] == "F" else int(tok[1:])
        value += DIE_VALUE + DIE_PIP * pip
    value += len(state.spare_figs[seat]) * (DIE_VALUE + DIE_PIP * 6) * 0.6
    # goods on caravans: what completing the route would bring, discounted
    for caravan in state.caravans[seat]:
        for good in caravan["goods"]:
            value += 0.75 * CARAVAN_SELL_VP[good]
    return value
