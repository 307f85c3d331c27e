"""Marco Polo II's names and event sentences, for replays: the names of map nodes, characters, spaces, seals
and moves, the words for bundles, contracts, city cards, outposts, markers, route tiles and dice, and every
event of a view's log as a plain English sentence (`describe_event`).

Pure: reads the game's own tables and the JSON it is given; no Django, no clock, no RNG, no state. Nothing
here says more than the event shows: a kept goal card is never named. The action sentences and the final
screen are `describe`'s, the drawn board `drawn_board`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.games.common.resources import RESOURCE_WORDS, count_words
from engine_service.games.mp2.setup_state import (
    ROUNDS,
    SPECIAL_SPACES,
    TRAVEL1_COINS,
)
from engine_service.games.mp2.tables import (
    BOOKS,
    CARAVAN_SELL_VP,
    CHARACTERS,
    CITY_CARDS,
    COLOURS,
    CONTRACTS,
    MARKERS,
    NODES,
    OUTPOSTS,
    ROUTE_TILES,
    SEAL_NAMES,
    SEALS,
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
