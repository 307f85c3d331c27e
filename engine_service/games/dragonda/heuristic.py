"""Marco Polo: Dragonda's planning heuristic for the house bots (`greedy`, `mcts`).

Layer: pure evaluation over a state. It reads only what the judged seat may know: the public table and that
seat's own hand (never another hand or the deck order), so it is safe on a sampled state. No RNG, no I/O.

A seat's prospects, in experience points (XP):
- progress to victory as an estimated number of turns T to win, converted to XP at the average event rate:
  XP still needed / rate, against the shortest tour through the unvisited required cities back to Venice
  divided by the means' speed (the larger of the two, plus a share of the smaller, since both are needed);
- the expected XP of the Events drawn in the zone the token stands in (passes held raise it);
- money, with goods aboard valued at the best sale price reachable from here (less a cost per step);
- passes, Adventure cards, a pending stop or false guide; an attack awaiting its defence counts by its odds;
- then minus a share of the best rival's prospects, because the game is a race.
"""

from __future__ import annotations

from functools import cache

from engine_service.games.base import Action
from engine_service.games.dragonda.board import (
    BOARD,
    GOODS,
    HOME,
    MEANS_TABLE,
    PASSES,
    REQUIRED,
)
from engine_service.games.dragonda.rules import WIN_XP, DragondaState, cargo_total

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


def heuristic(state: DragondaState, seat: int) -> float:
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


ACCEPT = Action("accept:attack", "defence", {})  # what `_defence_actions` offers first
