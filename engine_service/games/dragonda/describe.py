"""Marco Polo: Dragonda in words and pictures for replays: the board a viewer draws, every log event and
every action as an English sentence, the final screen, and the round/turn counters.

Layer: pure game presentation. Imports only the game's own board data and rules constants and the engine
base; no Django, no clock, no I/O. Reads only public facts: a log entry, an action the viewer sees (its id
names what it reveals), a finished state's public money/XP/places.

Seats are "seat N". Places are named by their game name (Venezia, Pechino), cards by their name (Adventure
cards) or id and title (Events), goods in plain words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from engine_service.games.base import GameResult, JsonDict, Progress
from engine_service.games.dragonda.board import (
    BOARD,
    BONUS_PLACES,
    GOODS,
    HOME,
    MEANS_TABLE,
    PASS_SHOP,
    PASSES,
    REQUIRED,
)
from engine_service.games.dragonda.rules import DragondaState

GOOD_WORDS = {
    "TX": ("textile", "textiles"),
    "MG": ("manufactured good", "manufactured goods"),
    "SI": ("silk", "silk"),
    "PO": ("porcelain", "porcelain"),
    "SP": ("spice", "spices"),
    "PS": ("precious stone", "precious stones"),
}
PASS_WORDS = {"PL": "Papal Letter", "CT": "Command Tablet"}
MEANS_WORDS = {"foot": "on foot", "horse": "a Horse", "caravan": "a Caravan", "ship": "a Ship"}
MOVE_VERBS = {"foot": "walked", "horse": "rode", "caravan": "led a Caravan", "ship": "sailed"}
DROP_REASONS = {
    "capacity": "over its means' capacity",
    "keep_three": "keeping at most 3 goods after losing its means",
}


# --- names ----------------------------------------------------------------------------------------------
def space_name(value: Any) -> str:
    """A place by its name, a junction by its sea's name, a dot or sea node by the two ends of its chain
    ("the road between Ragusa and Tessalonica (L3)")."""
    space = str(value)
    if space in BOARD.places:
        return str(BOARD.places[space]["name"])
    if space in BOARD.junctions:
        return f"the {BOARD.junctions[space]} junction"
    if space in BOARD.chain_ends:
        a, b = (space_name(end) for end in BOARD.chain_ends[space])
        where = "the road" if BOARD.kind[space] == "dot" else "the sea"
        return f"{where} between {a} and {b} ({space})"
    return space


def goods(good: Any, quantity: Any) -> str:
    one, many = GOOD_WORDS.get(str(good), (str(good), str(good)))
    return f"{quantity} {one if quantity == 1 else many}"


def good_word(good: Any) -> str:
    return GOOD_WORDS.get(str(good), (str(good), str(good)))[1]


def pass_word(code: Any) -> str:
    return PASS_WORDS.get(str(code), str(code))


def event_card(card: Any) -> str:
    event = BOARD.events.get(str(card))
    return f"{card} '{event['title']}'" if event else str(card)


def reason(value: Any) -> str:
    """What caused a payment or a loss: an Event card, an attack card's name or a rule."""
    why = str(value)
    if why in BOARD.events:
        return f"the Event {event_card(why)}"
    if why in BOARD.attack_def:
        return f"the {why} attack"
    if why in DROP_REASONS:
        return DROP_REASONS[why]
    return why


def band_words(band: Mapping[str, Any]) -> str:
    """An Event band's printed effect in a few words ('+20 zecchini, stay still')."""
    parts = []
    if band["money"] > 0:
        parts.append(f"+{band['money']} zecchini")
    elif band["money"] < 0:
        parts.append(f"pay {-band['money']} zecchini")
    if band["xp"]:
        parts.append(f"{band['xp']:+d} XP")
    if band["still"]:
        parts.append("stay still")
    if band["lose"] == "land":
        parts.append("lose a Horse or Caravan")
    elif band["lose"] == "ship":
        parts.append("lose a Ship")
    if band["goods"] == "two":
        parts.append("return 2 goods")
    elif band["goods"] == "half":
        parts.append("return half the goods")
    return ", ".join(parts) or "no effect"


def _seat(value: Any) -> str:
    return f"seat {value}" if isinstance(value, int) else "a player"


# --- the board ------------------------------------------------------------------------------------------
def board() -> JsonDict:
    """The static board: spaces with drawing coordinates, edges, zones, trade prices, means and cards."""
    return {
        "spaces": [_space(space) for space in BOARD.spaces],
        "land_edges": _edges(BOARD.land_adj),
        "sea_edges": _edges(BOARD.sea_adj),
        "extent": list(BOARD.extent),
        "zones": dict(BOARD.zone_names),
        "required": list(REQUIRED),
        "home": HOME,
        "bonus_places": dict(BONUS_PLACES),
        "pass_shops": dict(PASS_SHOP),
        "passes": {p: PASS_WORDS[p] for p in PASSES},
        "goods": {g: BOARD.goods_names[g] for g in GOODS},
        "prices": {
            place: {"buy": dict(BOARD.buy[place]), "sell": dict(BOARD.sell[place])} for place in BOARD.buy
        },
        "means": {
            m.name: {
                "price": m.price,
                "upkeep": m.upkeep,
                "capacity": m.capacity,
                "movement": m.movement,
                "sea": m.sea,
            }
            for m in MEANS_TABLE.values()
        },
        "events": {cid: _event(e) for cid, e in BOARD.events.items()},
        "adventures": {
            cid: {"name": c["name"], "kind": c["kind"], "text": c["text"]}
            for cid, c in BOARD.adventures.items()
        },
    }


def _space(space: str) -> JsonDict:
    """One space of the board: its kind, zone, drawing point, and its name or its chain's ends."""
    item: JsonDict = {
        "id": space,
        "kind": BOARD.kind[space],
        "zone": BOARD.zone[space],
        "xy": list(BOARD.xy[space]),
    }
    if space in BOARD.places:
        place = BOARD.places[space]
        item.update(
            name=place["name"],
            modern=place["modern"],
            port=bool(place["port"]),
            sea_only=bool(place["sea_only"]),
            required=space in REQUIRED,
        )
    elif space in BOARD.junctions:
        item["name"] = BOARD.junctions[space]
    else:
        item["chain"] = list(BOARD.chain_ends[space])
    return item


def _event(e: Mapping[str, Any]) -> JsonDict:
    return {
        "title": e["title"],
        "zones": list(e["zones"]),
        "all_players": bool(e["all_players"]),
        "roll": bool(e["roll"]),
        "bands": [{"lo": b["lo"], "hi": b["hi"], "text": band_words(b)} for b in e["bands"]],
        "pass": _pass_option(e["pass"]),
    }


def _edges(adj: Mapping[str, Sequence[str]]) -> list[list[str]]:
    return sorted([a, b] for a in adj for b in adj[a] if BOARD.order_key(a) < BOARD.order_key(b))


def _pass_option(option: Mapping[str, Any] | None) -> str | None:
    if not option:
        return None
    names = " or ".join(pass_word(p) for p in option["passes"])
    if option["kind"] == "replace":
        return f"{names} instead: +{option['xp']} XP"
    return f"{names} cancels a {option['lo']}-{option['hi']} result"


# --- events ---------------------------------------------------------------------------------------------
def events_of(view: Mapping[str, Any]) -> list[JsonDict]:
    """The view's log, oldest first, each move, passage and return to shore annotated with where the seat
    came from ("from") and the means it travelled with ("means"), where the log itself shows them: the
    means are walked back from the view's current ones over the means changes, the starting space is the
    seat's previous arrival in the log (or Venice when the log begins with the play order)."""
    log = [dict(e) for e in view.get("log") or [] if isinstance(e, Mapping)]
    players = view.get("players") or []
    means = {int(p["seat"]): str(p["means"]) for p in players if isinstance(p, Mapping) and "seat" in p}
    for entry in reversed(log):
        seat = entry.get("seat")
        kind = entry.get("event")
        if kind in ("move", "passage") and seat in means:
            entry["means"] = means[seat]
        if kind == "buy_means" and seat in means:
            means[seat] = str(entry.get("gave_up") or "foot")
        elif kind in ("give_up", "lose_means") and seat in means:
            means[seat] = str(entry.get("means"))
    here: dict[int, str] = {}
    for entry in log:
        seat = entry.get("seat")
        kind = entry.get("event")
        if kind == "play_order":
            here = {int(s): HOME for s in entry.get("order", [])}
        elif kind in ("move", "washed_ashore") and isinstance(seat, int):
            if seat in here and "from" not in entry:
                entry["from"] = here[seat]
            here[seat] = str(entry.get("to"))
        elif kind == "passage" and isinstance(seat, int):
            here[seat] = str(entry.get("to"))
    return log


def describe_event(event: Mapping[str, Any]) -> str:
    kind = str(event.get("event", ""))
    handler = EVENT_WORDS.get(kind)
    if handler is None:
        return f"{_seat(event.get('seat'))}: {kind.replace('_', ' ')}"
    return handler(event)


def _play_order(e: Mapping[str, Any]) -> str:
    rolls = e.get("rolls") or []
    order = ", ".join(
        f"seat {s}" + (f" ({'/'.join(str(r) for r in rolls[s])})" if s < len(rolls) and rolls[s] else "")
        for s in e.get("order", [])
    )
    return f"play order by 2d6: {order}"


def _move(e: Mapping[str, Any]) -> str:
    verb = MOVE_VERBS.get(str(e.get("means")), "moved")
    start = f" from {space_name(e['from'])}" if e.get("from") else ""
    steps = int(e.get("steps", 0))
    return f"{_seat(e.get('seat'))} {verb}{start} to {space_name(e.get('to'))} ({steps} space{'s' * (steps != 1)})"


def _trade(e: Mapping[str, Any]) -> str:
    verb = "bought" if e.get("event") == "buy" else "sold"
    where = f" in {space_name(e['place'])}" if e.get("place") else ""
    return f"{_seat(e.get('seat'))} {verb} {goods(e.get('good'), e.get('quantity'))} for {e.get('total')} zecchini{where}"


def _event_result(e: Mapping[str, Any]) -> str:
    card = BOARD.events.get(str(e.get("card")))
    who = _seat(e.get("seat"))
    if card is None:
        return f"{who} resolved the Event {e.get('card')}"
    roll = e.get("roll")
    if roll:
        band = next((b for b in card["bands"] if b["lo"] <= int(roll) <= b["hi"]), None)
        effect = band_words(band) if band else "no effect"
        return f"{who} rolled {roll} on {event_card(e.get('card'))}: {effect}"
    return f"{who} resolved {event_card(e.get('card'))}: {band_words(card['bands'][0])}"


def _draw_event(e: Mapping[str, Any]) -> str:
    text = f"{_seat(e.get('seat'))} drew the Event {event_card(e.get('card'))}"
    if e.get("effect"):
        card = BOARD.events.get(str(e.get("card")))
        zones = ", ".join(card["zones"]) if card else "?"
        return f"{text}: no effect outside zones {zones}"
    return text


def _pay(e: Mapping[str, Any]) -> str:
    to = e.get("to")
    dest = f" to seat {to}" if isinstance(to, int) else ""
    why = str(e.get("why"))
    cause = "for its Ship's upkeep at sea" if why == "upkeep at sea" else f"for {reason(why)}"
    return f"{_seat(e.get('seat'))} paid {e.get('amount')} zecchini{dest} {cause}"


def _unpaid(e: Mapping[str, Any]) -> str:
    why = str(e.get("why"))
    cause = "its Ship's upkeep at sea" if why == "upkeep at sea" else reason(why)
    return (
        f"{_seat(e.get('seat'))} could not pay {e.get('amount')} zecchini for {cause} "
        f"and lost {abs(int(e.get('xp', -1)))} XP instead"
    )


def _return_goods(e: Mapping[str, Any]) -> str:
    return f"{_seat(e.get('seat'))} gave back {goods(e.get('good'), e.get('count'))} ({reason(e.get('why'))})"


def _buy_means(e: Mapping[str, Any]) -> str:
    m = str(e.get("means"))
    price = MEANS_TABLE[m].price if m in MEANS_TABLE else "?"
    if m == "foot":
        return f"{_seat(e.get('seat'))} set out on foot"
    gave = e.get("gave_up")
    swap = f", leaving {MEANS_WORDS.get(str(gave), gave)}" if gave and gave != "foot" else ""
    return f"{_seat(e.get('seat'))} bought {MEANS_WORDS.get(m, m)} for {price} zecchini{swap}"


EVENT_WORDS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "play_order": _play_order,
    "move": _move,
    "buy": _trade,
    "sell": _trade,
    "event_result": _event_result,
    "draw_event": _draw_event,
    "pay": _pay,
    "unpaid": _unpaid,
    "return_goods": _return_goods,
    "buy_means": _buy_means,
    "draw_adventure": lambda e: f"{_seat(e.get('seat'))} drew an Adventure card (face down)",
    "discard": lambda e: f"{_seat(e.get('seat'))} put an Adventure card under the deck",
    "attack": lambda e: f"{_seat(e.get('seat'))} played {e.get('card')} against seat {e.get('target')}",
    "attack_hits": lambda e: f"{e.get('card')} from seat {e.get('attacker')} hit {_seat(e.get('seat'))}",
    "defend": lambda e: f"{_seat(e.get('seat'))} cancelled the {e.get('attack')} attack with {e.get('card')}",
    "buy_pass": lambda e: f"{_seat(e.get('seat'))} bought a {pass_word(e.get('pass'))} for 5 zecchini",
    "use_pass": lambda e: (
        f"{_seat(e.get('seat'))} used a {pass_word(e.get('pass'))} on {event_card(e.get('card'))} "
        f"instead of rolling: +{e.get('xp')} XP"
    ),
    "cancel_with_pass": lambda e: (
        f"{_seat(e.get('seat'))} cancelled the roll of {e.get('roll')} on {event_card(e.get('card'))} "
        f"with a {pass_word(e.get('pass'))}"
    ),
    "first_arrival": lambda e: (
        f"{_seat(e.get('seat'))} is the first to reach {space_name(e.get('place'))}: +{e.get('xp')} XP"
    ),
    "lose_means": lambda e: (
        f"{_seat(e.get('seat'))} lost {MEANS_WORDS.get(str(e.get('means')), e.get('means'))} "
        f"to {reason(e.get('why'))}"
    ),
    "washed_ashore": lambda e: f"{_seat(e.get('seat'))} was washed ashore at {space_name(e.get('to'))}",
    "passage": lambda e: (
        f"{_seat(e.get('seat'))} took the passage from {space_name(e.get('from'))} to {space_name(e.get('to'))}"
    ),
    "blocked": lambda e: f"{_seat(e.get('seat'))} stayed still this turn",
    "give_up": lambda e: (
        f"{_seat(e.get('seat'))} gave up {MEANS_WORDS.get(str(e.get('means')), e.get('means'))} and goes on foot"
    ),
    "victory": lambda e: (
        f"{_seat(e.get('seat'))} is back in Venezia with 51 XP and all five cities visited and wins"
    ),
}


# --- actions --------------------------------------------------------------------------------------------
def describe_action(state: DragondaState, seat: int, action_id: str) -> str:
    """The action in words; an older record's id (from before the ids followed one grammar) is told as
    the action it now names."""
    legal = state.legal_actions(seat)
    current = action_id if any(a.id == action_id for a in legal) else state.upgrade_action_id(seat, action_id)
    action = next((a for a in legal if a.id == current), None)
    if action is None:
        return action_id
    words = ACTION_WORDS.get(action.kind)
    if words is None:
        return f"{action.kind.replace('_', ' ')} ({action_id})"
    return words(state, seat, action.details)


ActionWords = Callable[[DragondaState, int, Mapping[str, Any]], str]


def _opening_means(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
    m = str(d["means"])
    return "sets out on foot" if m == "foot" else f"buys {MEANS_WORDS[m]} for {d['price']} zecchini"


def _goods_trade(verb: str) -> ActionWords:
    def words(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
        here = space_name(state.pos[seat])
        return f"{verb} {goods(d['good'], d['quantity'])} for {d['total']} zecchini in {here} ({d['price']} each)"

    return words


def _trade_done(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
    if state.phase == "setup_shop":
        return "ends the opening purchases"
    return f"ends trading in {space_name(state.pos[seat])}"


def _event_pass_words(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
    card = event_card(d["card"])
    if "pass" in d:
        return f"uses a {pass_word(d['pass'])} on {card} instead of rolling (+{d['xp']} XP)"
    return f"rolls for {card} without using a pass"


def _event_cancel_words(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
    card = event_card(d["card"])
    if "pass" in d:
        return f"cancels the roll of {d['roll']} on {card} with a {pass_word(d['pass'])}"
    return f"accepts the roll of {d['roll']} on {card}"


def _attack_words(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
    text = BOARD.attack_def[str(d["card"])]["text"]
    return f"plays {d['card']} against seat {d['target']} ({text})"


def _defence_words(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
    if "card" not in d:
        return f"accepts the {d['attack']} attack from seat {d['attacker']}"
    return f"cancels the {d['attack']} attack with {d['card']}"


def _drop_words(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
    return f"gives back 1 {GOOD_WORDS[str(d['good'])][0]} ({d['left']} to give back, {reason(d['why'])})"


def _stay(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
    pos = state.pos[seat]
    where = "in" if BOARD.kind[pos] == "place" else "at" if pos in BOARD.junctions else "on"
    return f"does not move (stays {where} {space_name(pos)})"


def _walk(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
    verb = {"foot": "walks", "horse": "rides", "caravan": "leads a Caravan", "ship": "sails"}[
        state.means[seat]
    ]
    via = d.get("via") or []
    by = f" by way of {', '.join(space_name(p) for p in via)}" if via else ""
    steps = int(d["steps"])
    here = space_name(state.pos[seat])
    return f"{verb} from {here} to {space_name(d['to'])}{by} ({steps} space{'s' * (steps != 1)})"


def _passage_words(state: DragondaState, seat: int, d: Mapping[str, Any]) -> str:
    return f"takes the passage from {space_name(state.pos[seat])} to {space_name(d['to'])}"


ACTION_WORDS: dict[str, ActionWords] = {
    "means": _opening_means,
    "buy": _goods_trade("buys"),
    "sell": _goods_trade("sells"),
    "buy_pass": lambda state, seat, d: f"buys a {pass_word(d['pass'])} for {d['price']} zecchini",
    "trade_done": _trade_done,
    "event_pass": _event_pass_words,
    "event_cancel": _event_cancel_words,
    "cards_done": lambda state, seat, d: "keeps the Adventure cards in hand",
    "discard": lambda state, seat, d: f"discards {d['card']} under the deck",
    "attack": _attack_words,
    "defence": _defence_words,
    "drop": _drop_words,
    "move_stop": _stay,
    "move": _walk,
    "passage": _passage_words,
    "keep": lambda state, seat, d: (
        f"keeps {MEANS_WORDS[str(d['means'])]} and pays {d['upkeep']} zecchini upkeep"
    ),
    "give_up": lambda state, seat, d: f"gives up {MEANS_WORDS[str(d['means'])]} and goes on foot",
    "buy_means": lambda state, seat, d: f"buys {MEANS_WORDS[str(d['means'])]} for {d['price']} zecchini",
    "transport_done": lambda state, seat, d: "stays on foot",
}


# --- the end --------------------------------------------------------------------------------------------
def describe_result(state: DragondaState, result: GameResult) -> list[str]:
    n = state.num_players
    order = sorted(range(n), key=lambda s: (result.ranks[s], s))
    lines = []
    for s in order:
        cities = ", ".join(space_name(c) for c in state.visited[s]) or "none"
        won = ", +1 for the victory" if state.winner == s else ""
        lines.append(
            f"{_ordinal(result.ranks[s])}: seat {s} with {result.scores[s]} points "
            f"({state.conditions_met(s)} of 6 conditions{won}: {state.xp[s]} XP of the 51 needed, cities visited {cities}; "
            f"{state.money[s]} zecchini, {BOARD.home_distance(state.pos[s])} steps from Venezia)"
        )
    for a, b in pairwise(order):
        if result.scores[a] != result.scores[b]:
            continue
        if result.ranks[a] == result.ranks[b]:
            lines.append(
                f"seats {a} and {b} are equal on points, XP, steps to Venezia and zecchini and share the rank"
            )
            continue
        lines.append(f"seat {a} ranks above seat {b} on the tie-break: {_tie_reason(state, a, b)}")
    if state.end_reason == "turn_cap":
        lines.append(f"the game ended after round {state.round_cap} without a winner")
    return lines


def _tie_reason(state: DragondaState, a: int, b: int) -> str:
    if state.xp[a] != state.xp[b]:
        return f"more XP ({state.xp[a]} against {state.xp[b]})"
    da, db = BOARD.home_distance(state.pos[a]), BOARD.home_distance(state.pos[b])
    if da != db:
        return f"fewer steps to Venezia ({da} against {db})"
    return f"more zecchini ({state.money[a]} against {state.money[b]})"


def _ordinal(rank: int) -> str:
    suffix = "th" if 10 <= rank % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(rank % 10, "th")
    return f"{rank}{suffix}"


def progress(state: DragondaState) -> Progress:
    """The round (0 during the opening purchases) and a turn counter: round x players + the index in play
    order, which grows by one as each player's turn (or opening purchase) begins; a finished game keeps
    the counter of its last turn."""
    n = state.num_players
    if state.is_over() and state.end_reason == "turn_cap":
        return Progress(round=state.round, turn=state.round * n + n - 1)
    return Progress(round=state.round, turn=state.round * n + state.turn_index)
