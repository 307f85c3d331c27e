"""Marco Polo: Dragonda's planning heuristic for the house bots (`greedy`, `mcts`).

Layer: pure evaluation over a state. It reads only what the judged seat may know: the public table and that
seat's own hand (never another hand or the deck order), so it is safe on a sampled state. No RNG, no I/O.

The race is won by the first seat back in Venice with 51 XP and the five cities seen. XP comes from the
Events drawn in the zone the token stands in (about 0.7 a turn in the best zones), so the experience, not the
tour, is what takes longest; zecchini buy what speeds it up. A seat's prospects, in XP, are:

- progress to victory: an estimated number of turns T to win, converted to XP at the average event rate. T
  weighs the XP still needed (at the Caucasus rate while cities remain, else where it comes fastest near
  home) against the shortest tour through the unvisited required cities back to Venice at the means' speed
  (the larger of the two, plus a share of the smaller, since both are needed; the same once every city is
  seen, with the way to a camp and home as the travel, so seeing the last city never looks like a loss).
  On foot the pace is the walker's, so a horse is bought when the tour needs it. A land means on a sea-only
  port is reckoned from the port its passage leads to, a turn later (two while the seat is too rich for the
  passage and must buy a Ship).
- the next draw's expected XP in the zone the token ends on (passes held raise it), full only while XP is
  still needed: this is what makes the bot gather XP in a high-XP zone.
- the first-arrival bonuses (5 XP at Nagasaki, 5 at Manila or Palembang, the first seat only). Both are
  sea-only ports a Ship reaches from the China coast in two turns, and 10 XP are some 14 turns of drawing:
  a strong player funds a Ship for them. While a bonus is open the seat counts its XP less the cost of the
  trip: the turns at sea, the Ship's price and upkeep (at the money's worth below) and the land detour to
  the port it would buy the Ship in. A plan not yet started counts at PLAN_ODDS (a rival may be first, an
  event may take the money; CONTESTED_ODDS once a rival sails a Ship), so buying the Ship, sailing and
  entering the port each show as a gain.
- money, at full worth (1 XP per ZECCHINI_PER_XP) up to what the seat still needs (MONEY_NEED: upkeep, the
  demands of Events and attacks, which cost 1 XP each when they cannot be paid, and passes) and at a quarter
  beyond: zecchini are a means, not a victory condition. Cash below CASH_RESERVE counts RESERVE_WORTH more,
  since goods cannot pay a demand: the bot does not spend its last zecchini on cargo or a Ship. A horse or
  caravan owes UPKEEP_TURNS turns of upkeep, so a camping seat that no longer needs speed gives it up.
- goods aboard, each worth its best sale price along the seat's remaining route (the tour through the
  cities left, or home): a market off the route costs DETOUR_COST per piece and step out of the way, and
  every step to it STEP_COST (thieves, corsairs, a means lost keeps only 3 goods). So a good bought where
  it is cheap is worth what it fetches where it is dear on the way (Venetian manufactures in the East, silk
  and porcelain of China in Venice), and it is sold when the token reaches that market: holding a piece
  counts for at most CARGO_DISCOUNT of its sale. Only the most valuable pieces the means can carry count.
- passes (each raises the XP of the events it replaces or cancels), Adventure cards in hand (a defence is
  worth more than an attack: it cancels a whole attack), less a pending stop or false guide; an attack
  awaiting its defence counts by its odds of landing (the judging seat knows its own defences, a rival's
  hand counts as DEFENCE_ODDS);
- then minus a share of the best rival's prospects, because the game is a race: an attack that slows the
  leader is worth playing.
"""

from __future__ import annotations

import math
from functools import cache
from itertools import permutations

from engine_service.games.base import Action
from engine_service.games.dragonda.board import (
    BOARD,
    BONUS_PLACES,
    GOODS,
    HOME,
    MEANS_TABLE,
    PASSES,
    REQUIRED,
)
from engine_service.games.dragonda.rules import BONUS_XP, PASSAGE_MONEY, WIN_XP, DragondaState, cargo_total

DECK_SIZE = 76
BASE_RATE = 0.7  # XP per turn a traveller in the far zones can expect (spec 6.1)
MIX = 0.7  # share of the smaller of the two turn estimates that still counts
ZONE_WEIGHT = 1.0  # one draw's expected XP in the zone the token ends on
MIN_RATE = 0.2
XP_MARGIN = 5.0  # XP still needed below which the next draw's XP counts for less
OVER_XP = 0.1  # worth of an XP beyond the 51 needed (a tie-break only)
ZECCHINI_PER_XP = 15.0
MONEY_NEED = 160.0  # zecchini a seat wants, cash or goods: upkeep, demands, passes, a means
SURPLUS_WORTH = 0.25  # share of full worth a zecchino beyond the need keeps
CASH_RESERVE = 60.0  # cash below this is worth more: a demand not paid in full costs 1 XP
RESERVE_WORTH = 1.5  # extra worth of a zecchino of that reserve, on top of its full worth
UPKEEP_TURNS = 4.0  # turns of a land means' upkeep counted as owed while the seat keeps it
STEP_COST = 0.15  # zecchini a piece loses per step carried to its market (theft, loss)
DETOUR_COST = 0.6  # zecchini a piece must earn per step its market lies off the remaining route
CARGO_DISCOUNT = 0.95
PASS_VALUE = {"PL": 2.2, "CT": 2.6}
DEFENCE_VALUE = 0.9
ATTACK_VALUE = 0.5
STILL_COST = 1.2
FALSE_GUIDE_COST = 0.5
RIVAL_WEIGHT = 0.35
WIN_VALUE = 100.0
DEFENCE_ODDS = 0.3  # chance an attacked seat holding cards cancels an attack
SHIP_LAND_SPEED = 7.0  # a ship reaches inland cities only by changing means in a port
PLAN_ODDS = 0.8  # share of a bonus trip's XP counted before its Ship is bought
CONTESTED_ODDS = 0.3  # the same while a rival already sails a Ship
TRIP_TURN_XP = 0.6  # XP a turn spent on the bonus trip (at sea, or off the route) costs
STRANDED_TURNS = 1.0  # turns a land means loses on a sea-only port (the passage back)
SHIP = MEANS_TABLE["ship"]
BONUS_TARGETS = {
    key: tuple(p for p, k in BONUS_PLACES.items() if k == key) for key in dict.fromkeys(BONUS_PLACES.values())
}
LAUNCH_PORTS = tuple(p for p in BOARD.ports if p not in BOARD.sea_only)


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


def _graph(land: bool) -> dict[str, dict[str, int]]:
    return BOARD.land_dist if land else BOARD.comb_dist


@cache
def route_steps(space: str, mask: int, land: bool) -> int:
    """The remaining route's length from `space`: through the cities of `mask`, then home."""
    return _tour_steps(_graph(land)[space], land, mask)


@cache
def market_worth(space: str, mask: int, land: bool) -> tuple[float, ...]:
    """Per good (in GOODS order), the best sale price reachable from `space`, less STEP_COST per step to the
    market and DETOUR_COST per step the market lies off the remaining route (`mask`, then home)."""
    dist = _graph(land)[space]
    here = route_steps(space, mask, land)
    worth = []
    for good in GOODS:
        best = 0.0
        for place, prices in BOARD.sell.items():
            steps = dist.get(place)
            if steps is None:
                continue
            detour = steps + route_steps(place, mask, land) - here
            best = max(best, prices[good] - STEP_COST * steps - DETOUR_COST * detour)
        worth.append(best)
    return tuple(worth)


def best_sale(space: str, good: str, sea: bool) -> float:
    """The best sell price of `good` reachable from `space` on the way home (goods returns give back the
    pieces that fetch least)."""
    land = not sea and space in BOARD.land_dist
    return market_worth(space, 0, land)[GOODS.index(good)]


@cache
def sea_trip(start: str, keys: tuple[str, ...]) -> int | None:
    """Fewest sea steps from `start` entering a target port of every bonus in `keys`, ending in a port
    with land (where a land means can be bought again); None if the sea does not reach."""
    dist = BOARD.sea_dist
    if start not in dist:
        return None
    best: int | None = None
    for order in permutations(keys):
        legs: dict[str, int] = {start: 0}  # last port entered -> steps so far
        for key in order:
            legs = {
                target: min(
                    steps + dist[here][target] for here, steps in legs.items() if target in dist[here]
                )
                for target in BONUS_TARGETS[key]
            }
        for here, steps in legs.items():
            back = min((dist[here][p] for p in LAUNCH_PORTS if p in dist[here]), default=None)
            if back is not None and (best is None or steps + back < best):
                best = steps + back
    return best


def _turns_at_sea(steps: int) -> int:
    return max(1, math.ceil(steps / SHIP.movement))


def _money_value(zecchini: float) -> float:
    capped = min(zecchini, MONEY_NEED)
    return capped / ZECCHINI_PER_XP + max(0.0, zecchini - MONEY_NEED) * SURPLUS_WORTH / ZECCHINI_PER_XP


def _mask(state: DragondaState, seat: int) -> int:
    mask = 0
    for i, city in enumerate(REQUIRED):
        if city not in state.visited[seat]:
            mask |= 1 << i
    return mask


def _bonus_value(state: DragondaState, seat: int, pos: str, mask: int, need: int, wealth: float) -> float:
    """The open first-arrival bonuses less the cost of the Ship trip to them (spec: NAG, then MAN or PAL)."""
    keys = tuple(sorted(k for k, holder in state.bonus.items() if holder is None))
    if not keys or need <= 0:
        return 0.0
    gain = min(BONUS_XP * len(keys), need)
    means = state.means[seat]
    if means == "ship":
        steps = sea_trip(pos, keys)
        if steps is None:
            return 0.0
        turns = _turns_at_sea(steps)
        upkeep = SHIP.upkeep * turns
        cost = TRIP_TURN_XP * turns + _money_value(wealth) - _money_value(wealth - upkeep)
        return max(0.0, gain - cost)
    if not BOARD.is_land(pos) or pos not in BOARD.land_dist:
        return 0.0
    launch = _launch(pos, mask, keys, float(MEANS_TABLE[means].movement))
    if launch is None:
        return 0.0
    rival_ship = any(state.means[s] == "ship" for s in range(state.num_players) if s != seat)
    odds = CONTESTED_ODDS if rival_ship else PLAN_ODDS
    time_cost, turns = launch
    price = SHIP.price + SHIP.upkeep * turns
    if wealth < price:
        return 0.0
    return max(0.0, odds * gain - time_cost - _money_value(wealth) + _money_value(wealth - price))


@cache
def _launch(pos: str, mask: int, keys: tuple[str, ...], speed: float) -> tuple[float, int] | None:
    """The cheapest port to start the bonus trip from, for a land means on `pos`: the XP its time costs (the
    detour off the route to the port, the turns at sea) and the turns at sea; None if none reaches."""
    dist = BOARD.land_dist[pos]
    here = route_steps(pos, mask, True)
    best: tuple[float, int] | None = None
    for port in LAUNCH_PORTS:
        if port not in dist:
            continue
        steps = sea_trip(port, keys)
        if steps is None:
            continue
        turns = _turns_at_sea(steps)
        detour = dist[port] + route_steps(port, mask, True) - here
        cost = TRIP_TURN_XP * (turns + detour / speed)
        if best is None or cost < best[0]:
            best = (cost, turns)
    return best


def _position_value(state: DragondaState, seat: int, pos: str, mask: int, xp: int) -> float:
    """The part of a seat's prospects that depends on where its token ends the turn (goods included: they
    are worth their best sale along the route from there; money and goods share one scale of worth)."""
    means = state.means[seat]
    speed = SHIP_LAND_SPEED if means == "ship" else float(MEANS_TABLE[means].movement)
    passes = state.passes[seat]
    has = (passes["PL"] > 0, passes["CT"] > 0)
    need = max(0, WIN_XP - xp)
    here = zone_rate(BOARD.zone[pos], *has)
    land = means != "ship"
    stranded = 0.0
    if land and pos not in BOARD.land_dist:
        # A land means on a sea-only port: the passage (under 100z) or a Ship is the way back to land.
        stranded = STRANDED_TURNS if state.money[seat] < PASSAGE_MONEY else 2 * STRANDED_TURNS
        pos = BOARD.passage[pos]
    dist = _graph(land)[pos]
    if mask:
        travel = route_steps(pos, mask, land) / speed
        xp_turns = need / zone_rate("3", *has)
        turns = max(travel, xp_turns) + MIX * min(travel, xp_turns)
    else:
        # Every city seen: gather the XP still needed where it comes fastest near home, then go home.
        home = dist[HOME] / speed
        turns = home + (need / max(here, MIN_RATE) if need else 0.0)
        for zone, camp in CAMPS.items():
            if need and camp in dist:
                travel = (dist[camp] + BOARD.land_dist[camp][HOME]) / speed
                xp_turns = need / zone_rate(zone, *has)
                turns = min(turns, max(travel, xp_turns) + MIX * min(travel, xp_turns))
    # The next draw's XP is worth its full value only while XP is still needed.
    worth = 1.0 if need >= XP_MARGIN else OVER_XP + (1.0 - OVER_XP) * need / XP_MARGIN
    value = -BASE_RATE * (turns + stranded) + ZONE_WEIGHT * worth * here
    cargo = state.cargo[seat]
    goods = 0.0
    if cargo_total(cargo):
        room = MEANS_TABLE[means].capacity
        for price, good in sorted(zip(market_worth(pos, mask, land), GOODS, strict=True), reverse=True):
            pieces = min(room, cargo[good])
            goods += pieces * price
            room -= pieces
        goods *= CARGO_DISCOUNT
    wealth = state.money[seat] + goods
    cash = RESERVE_WORTH * min(float(state.money[seat]), CASH_RESERVE) / ZECCHINI_PER_XP
    if means in ("horse", "caravan"):
        cash -= UPKEEP_TURNS * MEANS_TABLE[means].upkeep / ZECCHINI_PER_XP
    return value + cash + _money_value(wealth) + _bonus_value(state, seat, pos, mask, need, wealth)


def _camps() -> dict[str, str]:
    """For each land zone, its land space nearest to VEN: where a traveller may gather the last XP."""
    camps: dict[str, str] = {}
    for space, _steps in sorted(BOARD.land_dist[HOME].items(), key=lambda item: (item[1], item[0])):
        camps.setdefault(BOARD.zone[space], space)
    return camps


CAMPS = _camps()


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
