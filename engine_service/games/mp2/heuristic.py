"""Marco Polo II's position evaluation for the house bots (greedy, mcts), in victory points.

Pure: reads a state, changes nothing it was given, no RNG. It judges a seat only from what that seat may
know: its own goal card and public facts (it is called on states sampled from the seat's observation, so
other seats' goal cards there are random guesses and are never used).

The value is the seat's points plus what a strong player would count its position worth in points:
- Resources: coins, camels, goods and jade fade from their trading value toward their final-scoring rate
  (1 VP per 2 goods, 1 per 10 coins) as the game advances: early they buy travel, contracts and actions.
- Contracts in hand count by the share of their cost already held (worth: VP plus a reward), each unit of
  the seat's resources for one contract only (the one nearest completion first; jade standing in for missing
  camels and coins, as it does in payment), and the majority of completed contracts (8 / 4 VP) by where the
  seat stands now; a completed contract also counts its tempo while rounds remain (its place in hand takes
  the next one, its reward is used while it pays), so a contract whose cost is held is completed, not kept
  while its camels buy a black die. Contracts in reach (on display in cities where the seat has a post, which
  the Contracts action takes) count too, judged by what the contracts in hand leave, the best ones for the
  free places in hand, at a lower weight: a post in a contract city is worth its contracts, and the
  Contracts action is worth taking when they fit the goods held.
- Posts: shields are scored on the shield track with the goal card's shields counted twice, at the step
  where the track will stand at the end (about one new shield per round still to play): the track is convex
  (0, 1, 2, 4, 6, 9, ...), so a shield gained now is worth the late steps, not the first ones, and a player
  who counts only the present step undervalues travel. Posts in bonus-marker and special cities count for
  the income still to come, in contract cities as above.
- Guild seals: a seal counts for the sea routes and jade it opens, an improved one for its "!" bonus in each
  round still to come, and the goal card's seals for their points (scored when improved, in part when only
  taken).
- Dice not yet placed count as actions still to take.
- Caravans (The Caravans): a caravan's goods count at the final half price plus the rest of a completed
  route's worth (the full sale, Tartarino's 3 VP and jade) times the chance of completing it, which falls
  with the caravan's distance in steps to the nearest of the seat's figures (over the routes its seals open)
  and with the time left. So a caravan is claimed in the city of the tile's other shield nearest the figure,
  every caravan move closes the distance, a journey may end on the caravan, a route is completed when the
  two meet, and a claim late in the game or far away is worth only the goods' half price: what it is.

A pending choice (an offer, a movement, contracts to take, a caravan's steps, ...) is resolved greedily
first, by the deciding seat's own value, so a placement is judged by its best outcome (a caravan's steps
are chosen from the distances alone, which is what that value would choose, without trying each step).
"""

from __future__ import annotations

from functools import cache
from math import exp
from typing import TYPE_CHECKING

from engine_service.games.mp2.scoring import (
    CHARACTER_SHIELDS,
    MOST_CONTRACTS_VP,
    SECOND_CONTRACTS_VP,
    contract_counts,
    goal_seal_points,
)
from engine_service.games.mp2.tables import (
    CARAVAN_FINAL_VP,
    CARAVAN_SELL_VP,
    CONTRACT_CITIES,
    CONTRACTS,
    GOALS,
    GOODS,
    MARKER_CITIES,
    NEIGHBOURS,
    NODE_IDS,
    OASES,
    POST_CITIES,
    ROUTE_SEAL,
    SHIELD,
    SPECIAL_CITIES,
    WILD_COVERS,
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
CONTRACT_REWARD_VALUE = 2.0
HAND_SIZE = 2
REACH_WEIGHT = 0.35
# a completed contract's tempo, on top of its VP, times `late`: completed early, its place in hand takes the
# next contract and its reward is used while it still pays. With too little (it was 0.5) a contract held in
# full, counted at most of its worth on top of the resources it would spend, looked better kept than
# completed: the bot spent those camels on a black die and discarded the contract later.
DONE_TEMPO = 3.0
MARKER_ROUND_VALUE = 1.4
SPECIAL_ROUND_VALUE = 1.2
CONTRACT_CITY_VALUE = 1.5
POST_VALUE = 0.4
DIE_VALUE = 1.2
DIE_PIP = 0.12
SEAL_VALUE = 1.0
IMPROVED_ROUND_VALUE = 1.2
# distinct shields a seat still gains per round of play, so a shield is worth its step where the track
# will stand at the end (the track is convex)
FUTURE_SHIELDS_PER_ROUND = 1.0
# caravans: locations a caravan and the figures close per round of play (books move 1-3, Tebaldo +2),
# the chance of completing a route that is completable now, and a distance that never closes
CARAVAN_SPEED = 1.5
TEBALDO_EXTRA_SPEED = 1.0
COMPLETE_NOW = 0.95
UNREACHABLE = 99
TARTARINO_ROUTE_VP = 3.5


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
        if current.pending[0]["t"] == "caravan_move":  # its only effect is the distance: no trials needed
            stepped = current.clone()
            stepped.apply(decider, caravan_step_choice(current, decider))
            current = stepped
            continue
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


def caravan_step_choice(state: Mp2State, seat: int) -> str:
    """The caravan step `static_value` likes best, found from the distances alone: the step that brings a
    caravan nearest to one of the seat's figures, or `stop` when no step brings one nearer."""
    caravans = state.caravans[seat]
    best, gain = "stop", 0
    for action in state.legal_actions(seat):
        if action.id == "stop":
            continue
        before = caravan_distance(state, seat, str(caravans[int(action.details["caravan"])]["at"]))
        after = caravan_distance(state, seat, str(action.details["to"]))
        if before - after > gain:
            best, gain = action.id, before - after
    return best


def static_value(state: Mp2State, seat: int) -> float:
    if state.is_over():
        return state.res[seat]["vp"] + 0.01 * state.res[seat]["camels"]
    res = state.res[seat]
    rounds_left = max(0, 5 - state.round)  # full rounds after this one
    late = min(1.0, max(0.0, (5 - state.round + 0.5) / 5.0))  # 1 early, near 0 in the last round
    value = float(res["vp"])
    for name, (final, trade) in RESOURCE_VALUE.items():
        value += res[name] * (final + trade * late)
    # Each part adds its terms to the running value in turn (not a sum of its own), so the total is the
    # very float a single pass would give: greedy play stays the same for a seed.
    value = _with_contracts(state, seat, value, late)
    value = _with_posts_and_shields(state, seat, value, late, rounds_left)
    # dice and Donata's figures still to place this round
    for tok in state.dice[seat]:
        pip = 6 if tok[0] == "F" else int(tok[1:])
        value += DIE_VALUE + DIE_PIP * pip
    value += len(state.spare_figs[seat]) * (DIE_VALUE + DIE_PIP * 6) * 0.6
    value += caravan_value(state, seat)
    return value


def _with_contracts(state: Mp2State, seat: int, value: float, late: float) -> float:
    """Contracts in hand, by the share of their cost set aside for them, and the race for most contracts."""
    weight = CONTRACT_WEIGHT + 0.3 * late
    pool = dict(state.res[seat])  # what is not yet set aside for a contract: each unit counts for one only
    for cid in sorted(state.active[seat], key=lambda c: _allocation_order(pool, c)):
        value += contract_prospect(state, seat, cid, pool) * weight
    value += contracts_in_reach(state, seat, pool) * weight
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
    return value + DONE_TEMPO * mine * late


def _posts_with_moves(state: Mp2State, seat: int) -> list[str]:
    """The seat's posts, with those a movement in progress will place where its moved figures stand."""
    posts = list(state.posts[seat])
    for effect in state.pending:
        if effect["t"] == "move" and int(effect["seat"]) == seat:
            for fig in effect["moved"]:
                node = state.figures[seat][int(fig)]
                if node in POST_CITIES and node not in posts:
                    posts.append(node)
    return posts


def _with_posts_and_shields(state: Mp2State, seat: int, value: float, late: float, rounds_left: int) -> float:
    """Shields, goal seals, posts and their income still to come."""
    posts = _posts_with_moves(state, seat)
    held_shields = {SHIELD[c] for c in posts}
    shields = len(held_shields) + state.extra_shields[seat] + CHARACTER_SHIELDS.get(state.chars[seat], 0)
    goal = state.goals[seat]
    if goal:
        shields += sum(1 for s in GOALS[goal]["shields"] if s in held_shields)
    time_left = rounds_left + len(state.dice[seat]) / 5.0
    future = FUTURE_SHIELDS_PER_ROUND * time_left
    value += projected_shield_vp(shields + future) - projected_shield_vp(future)
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
    return value


def contract_prospect(state: Mp2State, seat: int, cid: str, pool: dict[str, int]) -> float:
    """A contract's worth (its VP, 0 for Vidal, plus its reward) times the share of its cost held, the units
    counted taken out of `pool`: a resource counts for one contract only, or spending it on one contract
    would look like a loss on every other that asks for it (and getting it back a gain on each)."""
    need, items = _CONTRACT_COSTS[cid]
    have = _set_aside(pool, items)
    worth = (0.0 if state.chars[seat] == "vidal" else CONTRACTS[cid]["vp"]) + CONTRACT_REWARD_VALUE
    return float(worth * have / need)


def _set_aside(pool: dict[str, int], items: list[tuple[str, int]]) -> int:
    """Take a contract's cost from `pool` as far as it goes, and say how many units were taken: fixed
    resources first, then jade for missing camels and coins (it stands in for them), then goods for its
    "any" and "2 different" units, cheapest first."""
    have = 0
    short = 0
    for kind, units in items:
        if kind in ("any", "diff2"):
            continue
        taken = min(pool.get(kind, 0), units)
        pool[kind] -= taken
        have += taken
        if kind in WILD_COVERS:
            short += units - taken
    if short:
        taken = min(pool["jade"], short)
        pool["jade"] -= taken
        have += taken
    for kind, units in items:
        if kind not in ("any", "diff2"):
            continue
        for good in GOODS:
            taken = min(pool[good], units)
            pool[good] -= taken
            units -= taken
            have += taken
    return have


def _allocation_order(pool: dict[str, int], cid: str) -> tuple[int, int, str]:
    """Contracts in hand take the resources in this order: the nearest to completion first (what it still
    lacks, on its own), then the one worth more VP."""
    need, items = _CONTRACT_COSTS[cid]
    return need - _set_aside(dict(pool), items), -int(CONTRACTS[cid]["vp"]), cid


# per contract: the units its cost asks for, and (kind, units counted) ("diff2": two goods per unit)
_CONTRACT_COSTS: dict[str, tuple[int, list[tuple[str, int]]]] = {
    cid: (
        max(1, sum(v * 2 if k == "diff2" else v for k, v in c["cost"].items())),
        [(k, v * 2 if k == "diff2" else v) for k, v in c["cost"].items()],
    )
    for cid, c in CONTRACTS.items()
}


def contracts_in_reach(state: Mp2State, seat: int, pool: dict[str, int]) -> float:
    """Contracts on display in cities where the seat has a post (the Contracts action takes up to two of
    them): the best ones, as many as the seat has free places for (at least one, since an old contract may
    be discarded), weighted below contracts in hand, each judged by what the contracts in hand left in
    `pool`."""
    cities = [c for c in CONTRACT_CITIES if c in state.posts[seat]]
    if not cities:
        return 0.0
    shown = [cid for c in cities for cid in state.contract_spaces.get(c, ()) if cid]
    if not shown:
        return 0.0
    room = max(1, HAND_SIZE - len(state.active[seat]))
    prospects = [contract_prospect(state, seat, cid, dict(pool)) for cid in shown]
    if room == 1 or len(prospects) <= room:
        return REACH_WEIGHT * (max(prospects) if room == 1 else sum(prospects))
    prospects.sort(reverse=True)
    return REACH_WEIGHT * sum(prospects[:room])


def projected_shield_vp(shields: float) -> float:
    """The shield track's points for a fractional count (linear between its steps)."""
    low = int(shields)
    return shield_vp(low) + (shield_vp(low + 1) - shield_vp(low)) * (shields - low)


def caravan_value(state: Mp2State, seat: int) -> float:
    """The seat's caravans on the board: their goods at the final half price, plus the rest of a completed
    route's worth (full sale; Tartarino's 3 VP and jade) times the chance of completing it, which falls
    with the caravan's distance to the nearest of the seat's figures and with the time left."""
    if not state.caravans[seat]:
        return 0.0
    time_left = max(0, 5 - state.round) + len(state.dice[seat]) / 5.0
    speed = CARAVAN_SPEED + (TEBALDO_EXTRA_SPEED if state.chars[seat] == "tebaldo" else 0.0)
    scale = 0.3 + speed * time_left
    value = 0.0
    for caravan in state.caravans[seat]:
        goods = caravan["goods"]
        parked = float(sum(CARAVAN_FINAL_VP[g] for g in goods))
        full = float(sum(CARAVAN_SELL_VP[g] for g in goods))
        if state.chars[seat] == "tartarino":
            full += TARTARINO_ROUTE_VP
        distance = caravan_distance(state, seat, str(caravan["at"]))
        chance = COMPLETE_NOW if distance == 0 else COMPLETE_NOW * exp(-distance / scale)
        value += parked + (full - parked) * chance
    return value


def caravan_distance(state: Mp2State, seat: int, at: str) -> int:
    """Caravan steps from `at` to the nearest of the seat's figures (1 on an oasis where a route may not be
    completed)."""
    steps = caravan_steps(frozenset(state.seals[seat]))[at]
    distance = min(steps.get(str(f), UNREACHABLE) for f in state.figures[seat])
    if distance == 0 and at in OASES and not state.options["caravan_oasis_completion"]:
        return 1
    return distance


@cache
def caravan_steps(seals: frozenset[str]) -> dict[str, dict[str, int]]:
    """Fewest caravan steps between every two locations, over the routes a caravan may take with these
    guild seals (a sea route needs its seal)."""
    out: dict[str, dict[str, int]] = {}
    for source in NODE_IDS:
        dist = {source: 0}
        frontier = [source]
        while frontier:
            nxt = []
            for node in frontier:
                for other, _cost in NEIGHBOURS[node]:
                    seal = ROUTE_SEAL[(node, other)]
                    if other in dist or (seal and seal not in seals):
                        continue
                    dist[other] = dist[node] + 1
                    nxt.append(other)
            frontier = nxt
        out[source] = dist
    return out
