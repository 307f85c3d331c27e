"""Marco Polo II in words and as a static board, for replays: the board a viewer draws (`board`), every
event of a view's log and every legal action as a plain English sentence, the final screen, and the round
and turn of a state.

Pure: reads the game's own tables and the JSON it is given; no Django, no clock, no RNG. Seats are named
"seat N"; map nodes, characters, seals and spaces by their names; contracts, city cards, outposts and bonus
markers by their id with what they give. Nothing here says more than the view or the action id shows: a
kept goal card is never named.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from engine_service.games.base import Action, GameResult, JsonDict, Progress
from engine_service.games.common.resources import RESOURCE_WORDS, count_words
from engine_service.games.mp2.rules import Mp2State
from engine_service.games.mp2.setup_state import (
    BLUE,
    BOOK_OF,
    CARD_SLOTS,
    KHAN_SLOTS,
    ROUNDS,
    SPECIAL_SPACES,
    TRAVEL1_COINS,
    TRAVEL_CAP,
)
from engine_service.games.mp2.tables import (
    BOOKS,
    CARAVAN_FINAL_VP,
    CARAVAN_SELL_VP,
    CARD_CITIES,
    CHARACTERS,
    CITY_CARDS,
    COLOURS,
    CONTRACT_CITIES,
    CONTRACTS,
    GOALS,
    ISABELLA_FACE,
    ISABELLA_PAIR,
    MARKER_CITIES,
    MARKERS,
    MILESTONES,
    MONGKE_OASIS_VP,
    NODES,
    OFFER_TILES,
    OUTPOST_CITIES,
    OUTPOSTS,
    ROUTE_TILES,
    ROUTES_DATA,
    SEAL_NAMES,
    SEALS,
    SHIELD_TRACK,
    SPECIAL_CITIES,
    UPGRADE,
    tok_value,
)

# --- names ---------------------------------------------------------------------------------------------------
SPACE_NAMES = {
    "book1": "Book I",
    "book2": "Book II",
    "book3a": "Book III (upper space)",
    "book3b": "Book III (lower space)",
    "khan": "Khan's Favor",
    "seals": "the Guild Seals",
    "travel1": "Travel (1 die, 1 step)",
    "travel2": "Travel (2 dice, up to 3 steps)",
    "travel3": "Travel (3 dice, up to 6 steps)",
    "contracts": "the Contracts space",
}
MOVE_MODES = {
    "travel1": "Travel (1 die)",
    "travel2": "Travel (2 dice)",
    "travel3": "Travel (3 dice)",
    "card": "a city card",
    "reward": "a reward",
}
SEAL_TITLES = {seal: f"{seal.capitalize()}'s seal" for seal in SEAL_NAMES}
CARAVAN_USES = {"double": "doubled", "upgrade": "upgraded", "sell": "sold"}


def node_name(node: Any) -> str:
    data = NODES.get(str(node))
    return str(data["name"]) if data else str(node)


def character_name(key: Any) -> str:
    data = CHARACTERS.get(str(key))
    return str(data["name"]) if data else "no character"


def space_name(space: str) -> str:
    """'Book I', 'Khan's Favor', 'Balkh's 1st space', 'the city card in Kashgar', 'action card A1'."""
    if space in SPACE_NAMES:
        return SPACE_NAMES[space]
    if space in SPECIAL_SPACES:
        city, k = space.split("-")
        return f"{node_name(city)}'s {'first' if k == '1' else 'second'} space"
    if space.startswith("card-"):
        slot = space[5:]
        if slot in ("A1", "A2"):
            return f"the action area's city card {slot}"
        return f"the city card in {node_name(slot)}"
    return space


def bundle_words(bundle: Mapping[str, Any]) -> str:
    """'2 pepper + 1 camel + a good of your choice' (resources and reward choices; 'nothing' when empty)."""
    parts = []
    for key, amount in bundle.items():
        n = int(amount)
        if not n:
            continue
        if key in RESOURCE_WORDS:
            parts.append(count_words(n, key))
        elif key == "good_choice":
            parts.append("a good of one's choice" if n == 1 else f"{n} goods of one's choice")
        elif key == "diff2":
            parts.append("2 different goods" if n == 1 else f"{n} x 2 different goods")
        elif key == "any":
            parts.append(f"{n} goods of any kind")
        elif key == "other_marker":
            parts.append("another city's bonus")
        elif key == "black_die":
            parts.append("a black die" if n == 1 else f"{n} black dice")
        elif key == "shield":
            parts.append("a shield" if n == 1 else f"{n} shields")
        elif key == "contract_pile":
            parts.append("a contract from the pile")
        elif key == "contract_city":
            parts.append("a contract from a city with one's post")
        elif key == "move":
            parts.append(f"a move of {n} step{'s' if n != 1 else ''}")
        else:
            parts.append(f"{n} {key.replace('_', ' ')}")
    return " + ".join(parts) if parts else "nothing"


def contract_words(cid: Any) -> str:
    """'C22 (2 silk + 1 camel for 4 VP + 3 coins)'."""
    data = CONTRACTS.get(str(cid))
    if data is None:
        return str(cid)
    return f"{cid} ({bundle_words(data['cost'])} for {data['vp']} VP + {bundle_words(data['reward'])})"


def card_text(card: Any) -> str:
    """What a city card does, in words."""
    data = CITY_CARDS.get(str(card))
    if data is None:
        return "an unknown card"
    kind = data["kind"]
    if kind == "count":
        counted = "completed contract" if data["of"] == "contracts" else "trading post"
        return f"{bundle_words(data['gain'])} per {counted}, at most the die's value"
    if kind == "city_bonus":
        table = data["table"]
        ones = sum(1 for v in table if v == 1)
        return f"the bonus of one's bonus cities: 1 city for a die of 1-{ones}, 2 cities for {ones + 1}-6"
    if kind == "exchange":
        options = " or ".join(
            f"{bundle_words(o['give'])} for {bundle_words(o['get'])}" for o in data["options"]
        )
        return f"exchange up to the die's value times: {options}"
    if kind == "die_coins":
        return f"{data['per_pip']} coins per pip of the die"
    if kind == "die_table":
        return f"{data['good']} by the die (1-6): {'/'.join(str(v) for v in data['table'])}"
    if kind == "seal":
        return f"pay {bundle_words(data['cost'])} for a guild seal of the die's tier"
    if kind == "move":
        return f"move up to the die's value in steps, paying {bundle_words(data['per_step'])} more per step"
    if kind == "repeat":
        return f"up to the die's value times: {bundle_words(data['cost'])} for {bundle_words(data['gain'])}"
    return str(kind)


def card_words(card: Any) -> str:
    return f"city card {card}: {card_text(card)}"


def outpost_words(tile: Any) -> str:
    reward = OUTPOSTS.get(str(tile))
    return f"outpost {tile} ({bundle_words(reward)})" if reward is not None else f"outpost {tile}"


def marker_words(marker: Any) -> str:
    reward = MARKERS.get(str(marker))
    return f"city bonus {marker} ({bundle_words(reward)})" if reward is not None else f"city bonus {marker}"


def tile_words(tile: Any) -> str:
    shields = ROUTE_TILES.get(str(tile))
    return f"route tile {tile} ({shields[0]}-{shields[1]})" if shields else f"route tile {tile}"


def die_words(tok: Any) -> str:
    """'a 4', 'a black 3', 'a neutral 1', "the yellow figure (a 6)"."""
    tok = str(tok)
    if tok.startswith("F"):
        colour = int(tok[1:])
        name = COLOURS[colour] if 0 <= colour < len(COLOURS) else tok
        return f"the {name} figure (a 6)"
    value = tok_value(tok)
    if tok[0] == "b":
        return f"a black {value}"
    if tok[0] == "n":
        return f"a neutral {value}"
    return f"a {value}"


def dice_words(group: Sequence[Any]) -> str:
    if len(group) == 1:
        return die_words(group[0])
    values = "+".join(
        str(tok_value(str(t))) + ("b" if str(t)[0] == "b" else "") if str(t)[0] != "F" else "F6"
        for t in group
    )
    return f"dice {values}"


def _and(items: Sequence[str]) -> str:
    items = list(items)
    if not items:
        return "nothing"
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def _goods(goods: Sequence[Any]) -> str:
    counts: dict[str, int] = {}
    for g in goods:
        counts[str(g)] = counts.get(str(g), 0) + 1
    return bundle_words(counts)


def _cost(cost: Mapping[str, Any]) -> str:
    words = bundle_words({k: v for k, v in cost.items() if int(v)})
    return "free" if words == "nothing" else f"for {words}"


# --- events ------------------------------------------------------------------------------------------------
def _ev_setup(e: Mapping[str, Any]) -> str:
    chars = [f"seat {s} is {character_name(c)}" for s, c in enumerate(e.get("characters", []))]
    return f"the game begins: {_and(chars)}"


def _ev_round(e: Mapping[str, Any]) -> str:
    rolled = [
        f"seat {s} {'-'.join(str(tok_value(str(t))) for t in dice) or 'none'}"
        for s, dice in enumerate(e.get("dice", []))
    ]
    return f"round {e.get('round')} begins with seat {e.get('first_player')} first; dice rolled: {'; '.join(rolled)}"


def _ev_place(e: Mapping[str, Any]) -> str:
    text = f"placed {dice_words(e.get('dice', []))} on {space_name(str(e.get('space')))}"
    paid = []
    fee = int(e.get("fee", 0))
    if fee:
        paid.append(f"{count_words(fee, 'coins')} to join the dice there")
    if e.get("space") == "travel1":
        paid.append(f"{TRAVEL1_COINS} coins for the space")
    if paid:
        text += f", paying {_and(paid)}"
    if e.get("space") == "khan":
        text += " and took 4 coins and 2 camels"
    return text


def _ev_offer(e: Mapping[str, Any]) -> str:
    book = str(e.get("book"))
    choice = str(e.get("choice", "")).split(":")[-1]
    data = BOOKS.get(book)
    if choice.startswith("free") and data is not None:
        which = int(choice[4:]) - 1
        return f"took Book {book}'s {'first' if which == 0 else 'second'} free offer: {bundle_words(data['free'][which])}"
    if choice.startswith("jade"):
        jade = int(choice[4:])
        return f"paid {count_words(jade, 'jade')} for Book {book}'s offer tile ({jade}-jade reward)"
    return f"took an offer of Book {book}"


def _ev_move(e: Mapping[str, Any]) -> str:
    path = [node_name(n) for n in e.get("path", [])]
    who = "its second figure" if int(e.get("figure", 0)) == 1 else "its figure"
    if not path:
        return f"moved {who}"
    steps = len(path)
    via = f" through {_and(path[:-1])}" if steps > 1 else ""
    return f"moved {who}{via} to {path[-1]} {_cost(e.get('cost', {}))}"


def _ev_moved(e: Mapping[str, Any]) -> str:
    ends = [node_name(n) for n in e.get("to", [])]
    mode = MOVE_MODES.get(str(e.get("mode")), "a move")
    where = ends[0] if len(ends) == 1 else f"{_and(ends)} (its two figures)"
    return f"ended the movement of {mode} in {where}"


def _ev_post(e: Mapping[str, Any]) -> str:
    text = f"placed a trading post in {node_name(e.get('city'))}"
    milestone = int(e.get("milestone_vp", 0))
    if milestone:
        text += f" and scored {milestone} VP for its post count"
    return text


def _ev_take(e: Mapping[str, Any]) -> str:
    cards = [contract_words(c) for c in e.get("contracts", [])]
    return f"took contract{'s' if len(cards) != 1 else ''} {_and(cards)}"


def _ev_pile_contract(e: Mapping[str, Any]) -> str:
    card = contract_words(e.get("contract"))
    choice = str(e.get("choice", ""))
    if choice == "decline":
        return f"drew contract {card} from the pile and sent it back under the pile"
    if choice.startswith("discard:"):
        return f"drew contract {card} from the pile and discarded {choice.split(':', 1)[1]} for it"
    return f"drew contract {card} from the pile"


def _ev_caravan_good(e: Mapping[str, Any]) -> str:
    good = str(e.get("good"))
    use = str(e.get("use"))
    if use == "double":
        return f"took its caravan's {good} doubled (2 {good})"
    if use == "upgrade":
        return f"upgraded its caravan's {good} to 1 {UPGRADE.get(good, 'better good')}"
    return f"sold its caravan's {good} for {CARAVAN_SELL_VP.get(good, 0)} VP"


def _ev_game_end(e: Mapping[str, Any]) -> str:
    if e.get("reason") == "step_cap":
        return "the game stops at the step cap; final scoring"
    return f"the game ends after round {ROUNDS}; final scoring"


EVENT_WORDS: dict[str, Any] = {
    "setup": _ev_setup,
    "draft": lambda e: f"chose {character_name(e.get('character'))} as character",
    "goal_kept": lambda e: "kept one of its goal cards (hidden)",
    "figures": lambda e: (
        "took the spare figures of "
        + _and([COLOURS[int(c)] for c in e.get("colours", []) if 0 <= int(c) < len(COLOURS)])
    ),
    "round": _ev_round,
    "round_end": lambda e: f"round {e.get('round')} ends",
    "game_end": _ev_game_end,
    "place": _ev_place,
    "offer": _ev_offer,
    "money_bag": lambda e: (
        f"used {die_words(e.get('die'))} on the money bag for {bundle_words(e.get('gain', {}))}"
    ),
    "black_die": lambda e: f"took a black die and rolled a {tok_value(str(e.get('die')))}",
    "black_die_none_left": lambda e: "was owed a black die but none is left",
    "die": lambda e: f"changed a die from {tok_value(str(e.get('from')))} to {tok_value(str(e.get('to')))}",
    "move": _ev_move,
    "moved": _ev_moved,
    "post": _ev_post,
    "relocate": lambda e: (
        f"moved its trading post from {node_name(e.get('from'))} to {node_name(e.get('to'))} (no posts left)"
    ),
    "outpost": lambda e: f"took {outpost_words(e.get('tile'))} in {node_name(e.get('city'))}",
    "outpost_used": lambda e: f"used its kept {outpost_words(e.get('tile'))}",
    "city_bonus": lambda e: f"received {marker_words(e.get('marker'))}",
    "seal": lambda e: (
        f"took the {SEAL_TITLES.get(str(e.get('seal')), str(e.get('seal')))}"
        + (
            f" and {count_words(int(SEALS[str(e['seal'])]['jade']), 'jade')}"
            if str(e.get("seal")) in SEALS and SEALS[str(e["seal"])]["jade"]
            else ""
        )
    ),
    "improve": lambda e: (
        f"improved its {SEAL_TITLES.get(str(e.get('seal')), str(e.get('seal')))}"
        + (
            f" (round bonus {bundle_words(SEALS[str(e['seal'])]['bonus'])}, taken now too)"
            if str(e.get("seal")) in SEALS
            else ""
        )
    ),
    "card": lambda e: f"used a {e.get('die')} on {card_words(e.get('card'))}",
    "complete": lambda e: f"completed contract {contract_words(e.get('contract'))}",
    "take_contracts": _ev_take,
    "pile_contract": _ev_pile_contract,
    "contract_pile_empty": lambda e: "was owed a contract but the pile is empty",
    "discard_contract": lambda e: f"discarded contract {e.get('contract')}",
    "vidal_set": lambda e: "sold 1 pepper, 1 silk and 1 gold for 5 VP",
    "caravan_claim": lambda e: (
        f"claimed {tile_words(e.get('tile'))} and set out a caravan in {node_name(e.get('city'))}"
    ),
    "caravan_loaded": lambda e: f"loaded its caravan with {_goods(e.get('goods', []))}",
    "caravan_step": lambda e: f"moved caravan {e.get('caravan')} to {node_name(e.get('to'))}",
    "caravan_complete": lambda e: f"completed caravan {e.get('caravan')}'s route in {node_name(e.get('at'))}",
    "caravan_good": _ev_caravan_good,
    "caravan_home": lambda e: f"returned {tile_words(e.get('tile'))} (face down until the next round)",
}


def describe_event(event: Mapping[str, Any]) -> str:
    kind = str(event.get("event", ""))
    words = EVENT_WORDS.get(kind)
    if words is None:
        rest = ", ".join(
            f"{str(k).replace('_', ' ')} {v}" for k, v in event.items() if k not in ("event", "seat", "round")
        )
        text = kind.replace("_", " ") + (f": {rest}" if rest else "")
    else:
        text = str(words(event))
    seat = event.get("seat")
    return f"seat {seat} {text}" if isinstance(seat, int) and seat >= 0 else text


# --- actions -----------------------------------------------------------------------------------------------
def _bonus_words(state: Mp2State, seat: int, action: Action) -> str:
    d = action.details
    bonus = d.get("bonus")
    if bonus == "money_bag":
        if "die" not in d:
            return "uses the money bag" + (" as its action" if d.get("as_action") else "")
        return f"puts {die_words(d['die'])} on the money bag for {bundle_words(d['gain'])}"
    if bonus == "complete":
        goods = {k: v for k, v in dict(d.get("goods") or {}).items() if v}
        paid = f", paying {bundle_words(goods)} for its open goods" if goods else ""
        return f"completes contract {contract_words(d['contract'])}{paid}"
    if bonus == "improve":
        seal = str(d["seal"])
        return f"improves its {SEAL_TITLES[seal]} for {bundle_words(state._improve_cost(seat, seal))}"
    if bonus == "vidal_set":
        return "sells 1 pepper, 1 silk and 1 gold for 5 VP (Vidal)"
    if bonus == "outpost":
        return f"uses its kept {outpost_words(d['tile'])}"
    if bonus == "claim_route":
        return f"claims {tile_words(d['tile'])} and starts a caravan in {node_name(d['city'])}"
    if bonus == "complete_route":
        caravan = (
            state.caravans[seat][int(d["caravan"])] if int(d["caravan"]) < len(state.caravans[seat]) else {}
        )
        where = f" in {node_name(caravan['at'])}" if caravan else ""
        return f"completes caravan {int(d['caravan']) + 1}'s route{where}"
    if bonus == "black_die":
        return f"buys a black die for {d.get('camels', 3)} camels"
    if bonus == "reroll":
        return f"rerolls {die_words(d['die'])} for 1 camel" if "die" in d else "rerolls a die for 1 camel"
    if bonus == "adjust":
        if "die" in d:
            value = tok_value(str(d["die"]))
            return f"turns {die_words(d['die'])} into a {value + int(d['by'])} for 2 camels"
        return "changes a die's value by 1 for 2 camels"
    return str(bonus).replace("_", " ")


def _top(state: Mp2State) -> Mapping[str, Any]:
    return state.pending[0] if state.pending else {}


Words = Callable[[Mp2State, int, Action], "str | None"]  # None: no words of its own (the id is shown)


def _place_words(state: Mp2State, seat: int, action: Action) -> str:
    d = action.details
    space = str(d["space"])
    if "dice" not in d:
        return f"chooses {space_name(space)} for its action"
    text = f"places {dice_words(d['dice'])} on {space_name(space)}"
    paid = []
    fee = int(d.get("fee", 0))
    if fee:
        paid.append(f"{count_words(fee, 'coins')} to join the dice there")
    if space == "travel1":
        paid.append(f"{TRAVEL1_COINS} coins for the space")
    if paid:
        text += f", paying {_and(paid)}"
    if space.startswith("card-") and space[5:] in state.cards:
        text += f" ({card_words(state.cards[space[5:]])})"
    elif space in SPECIAL_SPACES:
        text += f" ({bundle_words(SPECIAL_CITIES[space.split('-')[0]]['action'])})"
    return text


def _isabella_words(state: Mp2State, seat: int, action: Action) -> str:
    pairs = {int(v): int(k) for v, k in dict(action.details["pairs"]).items()}
    if not pairs:
        return "takes every die's face bonus (no pairs converted)"
    words = [
        f"{k} pair{'s' if k > 1 else ''} of {v} for {bundle_words(ISABELLA_PAIR[v])}"
        for v, k in pairs.items()
    ]
    return f"converts {_and(words)}, the other dice paying their face bonus"


def _double_words(state: Mp2State, seat: int, action: Action) -> str:
    city = str(action.details["city"])
    bonus = SPECIAL_CITIES[city]["bonus"] if city in SPECIAL_CITIES else MARKERS[state.markers[city]]
    return f"takes {node_name(city)}'s bonus a second time ({bundle_words(bonus)})"


def _offer_words(state: Mp2State, seat: int, action: Action) -> str:
    d = action.details
    book = str(_top(state).get("book", ""))
    jade = int(d.get("jade", 0))
    if jade:
        return f"pays {count_words(jade, 'jade')} for offer tile {d.get('tile')} of Book {book}: {bundle_words(d['gain'])}"
    return f"takes Book {book}'s free offer: {bundle_words(d['gain'])}"


def _seal_words(state: Mp2State, seat: int, action: Action) -> str:
    jade = int(action.details.get("jade", 0))
    extra = f" and {count_words(jade, 'jade')}" if jade else ""
    return f"takes the {SEAL_TITLES[str(action.details['seal'])]}{extra}"


def _move_words(state: Mp2State, seat: int, action: Action) -> str:
    if action.id == "move:stop":
        return "ends its movement here"
    if action.id == "skip":
        return "does not use the move"
    d = action.details
    path = [node_name(n) for n in d["path"]]
    via = f" through {_and(path[:-1])}" if len(path) > 1 else ""
    fig = " with its second figure" if int(d.get("figure", 0)) == 1 else ""
    steps = int(d["steps"])
    return f"moves{fig}{via} to {node_name(d['to'])} ({steps} step{'s' if steps != 1 else ''}) {_cost(d['cost'])}"


def _post_words(state: Mp2State, seat: int, action: Action) -> str:
    if action.details.get("city") is None:
        return "places no extra trading post"
    return f"places its extra trading post in {node_name(action.details['city'])}"


def _contract_words(state: Mp2State, seat: int, action: Action) -> str:
    d, aid = action.details, action.id
    if aid == "done":
        return "takes no more contracts"
    if aid == "decline":
        if "contract" in d and d.get("keep") is False:
            return f"sends contract {d['contract']} back under the pile"
        return "declines the contract"
    if aid.startswith("discard:"):
        new = f" to keep {d['contract']}" if "contract" in d else ""
        return f"discards contract {d['discard']}{new}"
    return f"takes contract {contract_words(d['contract'])} from {node_name(d['city'])}"


def _card_words(state: Mp2State, seat: int, action: Action) -> str | None:
    d, aid = action.details, action.id
    if aid.startswith("times:"):
        data = CITY_CARDS[str(d["card"])]
        k = int(d["times"])
        return f"pays {bundle_words(data['cost'])} {k} time{'s' if k != 1 else ''} for {bundle_words(data['gain'])} each"
    if aid.startswith("ex:"):
        k = int(d["times"])
        return (
            f"gives {bundle_words(d['give'])} for {bundle_words(d['get'])}, {k} time{'s' if k != 1 else ''}"
        )
    if aid.startswith("city:"):
        return f"takes the bonus of {_and([node_name(c) for c in d['cities']])} again"
    return None


def _caravan_words(state: Mp2State, seat: int, action: Action) -> str | None:
    d, aid = action.details, action.id
    if aid.startswith("load:"):
        return f"loads its caravan with {_goods(d['goods'])}"
    if aid == "stop":
        return "stops its caravans"
    if aid.startswith("cstep:"):
        return f"moves caravan {int(d['caravan']) + 1} to {node_name(d['to'])}"
    if aid.startswith(("double:", "upgrade:", "sell:")):
        good = str(d["good"])
        if d["use"] == "double":
            return f"doubles its caravan's {good}"
        if d["use"] == "upgrade":
            return f"upgrades its caravan's {good} to {UPGRADE[good]}"
        return f"sells its caravan's {good} for {d.get('vp', CARAVAN_SELL_VP[good])} VP"
    if aid.startswith("return:"):
        return f"returns {tile_words(d['tile'])}"
    return None


def _bundle_taken(what: str) -> Words:
    def words(state: Mp2State, seat: int, action: Action) -> str:
        d = action.details
        return what.format(bundle_words({"coins": d["coins"], "camels": d["camels"]}))

    return words


_BY_KIND: dict[str, Words] = {
    "end": lambda state, seat, action: "ends its turn",
    "bonus": _bonus_words,
    "place": _place_words,
    "character": lambda state, seat, action: f"chooses {character_name(action.details['character'])}",
    "goal": lambda state, seat, action: "keeps one of its goal cards",
    "figures": lambda state, seat, action: (
        "takes the spare figures of " + _and([COLOURS[int(c)] for c in action.details["colours"]])
    ),
    "compensation": _bundle_taken("takes its compensation as {}"),
    "isabella": _isabella_words,
    "double": _double_words,
    "city_bonus": lambda state, seat, action: f"copies {marker_words(action.details['marker'])}",
    "good": lambda state, seat, action: f"takes 1 {action.details['good']}",
    "goods": lambda state, seat, action: (
        f"takes 1 {action.details['goods'][0]} and 1 {action.details['goods'][1]}"
    ),
    "offer": _offer_words,
    "seal": _seal_words,
    "move": _move_words,
    "post": _post_words,
    "relocate": lambda state, seat, action: (
        f"moves its trading post from {node_name(action.details['from'])} to {node_name(action.details['to'])}"
    ),
    "oasis": _bundle_taken(f"takes {{}} for its oases (and {MONGKE_OASIS_VP} VP each)"),
    "contracts": _contract_words,
    "contract": _contract_words,
    "card": _card_words,
    "caravan": _caravan_words,
}


def _action_words(state: Mp2State, seat: int, action: Action) -> str:
    """The words for an action, by its kind (the id itself where a kind has none for it)."""
    words = _BY_KIND.get(action.kind)
    text = words(state, seat, action) if words is not None else None
    return text if text is not None else action.id.replace("_", " ").replace(":", " ")


def describe_action(state: Mp2State, seat: int, action_id: str) -> str:
    for action in state.legal_actions(seat):
        if action.id == action_id:
            return _action_words(state, seat, action)
    return action_id.replace("_", " ").replace(":", " ")


# --- result and progress -----------------------------------------------------------------------------------
PART_NAMES = (
    ("goal_seals", "goal seals"),
    ("shields", "shields"),
    ("goods", "goods"),
    ("coins", "coins"),
    ("contracts", "contracts"),
    ("caravans", "caravans"),
)


def _ordinal(rank: int) -> str:
    suffix = "th" if 10 <= rank % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(rank % 10, "th")
    return f"{rank}{suffix}"


def describe_result(state: Mp2State, result: GameResult) -> list[str]:
    n = len(result.scores)
    order = sorted(range(n), key=lambda s: (result.ranks[s], s))
    final = {int(p["seat"]): p for p in (state.final or [])}
    camels = [state.res[s]["camels"] for s in range(n)]
    lines = []
    for s in order:
        line = f"{_ordinal(result.ranks[s])}: seat {s} ({character_name(state.chars[s])}) with {result.scores[s]} points"
        parts = final.get(s)
        if parts is not None:
            during = result.scores[s] - int(parts["total"])
            scored = ", ".join(f"{name} {parts[key]}" for key, name in PART_NAMES if parts.get(key))
            line += f": {during} during play, {int(parts['total'])} at the end" + (
                f" ({scored})" if scored else ""
            )
        lines.append(line)
    if result.reason == "step_cap":
        lines.append("the game stopped at the step cap and was scored as it stood")
    for a, b in pairwise(order):
        if result.scores[a] != result.scores[b]:
            continue
        if result.ranks[a] == result.ranks[b]:
            lines.append(
                f"seats {a} and {b} tie on {result.scores[a]} points and {camels[a]} camels and share the "
                f"{_ordinal(result.ranks[a])} place"
            )
        else:
            lines.append(
                f"seat {a} ranks above seat {b} on the tie-break: more camels ({camels[a]} against {camels[b]})"
            )
    return lines


def progress(state: Mp2State) -> Progress:
    """The round (None during the character draft and goal choice), and the player turn: each turn's end
    counts, so a new value starts each turn (None before round 1)."""
    if state.round <= 0:
        return Progress(round=None, turn=None)
    turn = state.turns if state.phase == "over" else state.turns + 1
    return Progress(round=state.round, turn=turn)


# --- the static board --------------------------------------------------------------------------------------
def board() -> JsonDict:
    """Everything static a replay viewer draws: the map (nodes with their 0-100 positions, routes with
    costs and sea seals), the action spaces, books and offer tiles, seals, special cities, bonus markers,
    outposts, city cards, contracts, goals, characters, route tiles and the shield track, each with its words."""
    return {"game_id": "mp2-v1", "map": _map_board(), **_action_board(), **_card_board(), **_table_board()}


def _map_board() -> JsonDict:
    return {
        "nodes": [
            {
                "id": node_id,
                "name": data["name"],
                "kind": data["kind"],
                "shield": data["shield"],
                "holds": list(data["holds"]),
                "xy": list(data["xy"]),
            }
            for node_id, data in NODES.items()
        ],
        "routes": [
            {
                "id": r["id"],
                "a": r["a"],
                "b": r["b"],
                "cost": dict(r["cost"]),
                "seal": r["sea_seal"],
                "text": (
                    f"{node_name(r['a'])} - {node_name(r['b'])}: {_cost(r['cost'])}"
                    + (f", needs the {SEAL_TITLES[r['sea_seal']]}" if r["sea_seal"] else "")
                ),
            }
            for r in ROUTES_DATA
        ],
    }


def _spaces() -> list[JsonDict]:
    """The blue action spaces in board order, Khan's Favor among them."""
    spaces = []
    for name, space in BLUE.items():
        spaces.append(
            {
                "id": name,
                "name": SPACE_NAMES[name],
                "dice": space.dice,
                "book": BOOK_OF.get(name),
                "steps": TRAVEL_CAP.get(name),
            }
        )
    spaces.insert(
        4,
        {
            "id": "khan",
            "name": SPACE_NAMES["khan"],
            "dice": 1,
            "slots": KHAN_SLOTS,
            "gain": "4 coins + 2 camels",
        },
    )
    return spaces


def _action_board() -> JsonDict:
    """The action spaces, books and offer tiles, seals and special cities."""
    return {
        "spaces": _spaces(),
        "special_spaces": [{"id": s, "city": s.split("-")[0], "name": space_name(s)} for s in SPECIAL_SPACES],
        "card_slots": [
            {"id": f"card-{slot}", "slot": slot, "name": space_name(f"card-{slot}")} for slot in CARD_SLOTS
        ],
        "books": {
            numeral: {
                "min_die": data["min_die"],
                "caravan_steps": data["caravan_steps"],
                "free": [bundle_words(b) for b in data["free"]],
            }
            for numeral, data in BOOKS.items()
        },
        "offer_tiles": {
            tid: {"book": t["book"], "jade1": bundle_words(t["jade1"]), "jade2": bundle_words(t["jade2"])}
            for tid, t in OFFER_TILES.items()
        },
        "seals": [
            {
                "id": seal,
                "name": SEAL_TITLES[seal],
                "min_die": SEALS[seal]["min_die"],
                "jade": SEALS[seal]["jade"],
                "improve": bundle_words(SEALS[seal]["improve"]),
                "bonus": bundle_words(SEALS[seal]["bonus"]),
                "city": SEALS[seal]["city"],
            }
            for seal in SEAL_NAMES
        ],
        "special_cities": {
            city: {
                "seal": data["seal"],
                "bonus": bundle_words(data["bonus"]),
                "action": bundle_words(data["action"]),
            }
            for city, data in SPECIAL_CITIES.items()
        },
    }


def _card_board() -> JsonDict:
    """Bonus markers, outposts, the cities of each feature, city cards, contracts, goals, characters."""
    return {
        "markers": {m: bundle_words(r) for m, r in MARKERS.items()},
        "marker_cities": list(MARKER_CITIES),
        "outposts": {o: bundle_words(r) for o, r in OUTPOSTS.items()},
        "outpost_cities": list(OUTPOST_CITIES),
        "card_cities": list(CARD_CITIES),
        "contract_cities": list(CONTRACT_CITIES),
        "city_cards": {cid: {"kind": c["kind"], "text": card_text(cid)} for cid, c in CITY_CARDS.items()},
        "contracts": {
            cid: {
                "start": c["start"],
                "cost": bundle_words(c["cost"]),
                "vp": c["vp"],
                "reward": bundle_words(c["reward"]),
            }
            for cid, c in CONTRACTS.items()
        },
        "goals": {
            gid: {
                "shields": list(g["shields"]),
                "seals": dict(g["seals"]),
                "text": "shields "
                + ", ".join(g["shields"])
                + "".join(f"; improved {SEAL_TITLES[s]}: {vp} VP" for s, vp in g["seals"].items()),
            }
            for gid, g in GOALS.items()
        },
        "characters": {
            k: {"name": c["name"], "text": c["text"], "caravans": c["caravans"]}
            for k, c in CHARACTERS.items()
        },
    }


def _table_board() -> JsonDict:
    """Route tiles, the caravans' and shields' points, milestones, colours, rounds and Isabella's faces."""
    return {
        "route_tiles": {t: list(s) for t, s in ROUTE_TILES.items()},
        "caravan_sell_vp": dict(CARAVAN_SELL_VP),
        "caravan_final_vp": dict(CARAVAN_FINAL_VP),
        "shield_track": list(SHIELD_TRACK),
        "milestones": {str(k): v for k, v in MILESTONES.items()},
        "colours": list(COLOURS),
        "rounds": ROUNDS,
        "isabella_face": {str(v): bundle_words(b) for v, b in ISABELLA_FACE.items()},
    }
