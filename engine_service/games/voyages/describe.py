"""The Voyages of Marco Polo in words and as a static board: the replay hooks of `VoyagesSpec`.

Pure: reads only the game's own tables and the state or event it is given; no Django, no clock, no RNG.
Every event kind that `rules.py` logs has one small describer, registered by name in `EVENTS`; actions are
described from their id and details (`state.legal_actions`), saying nothing a spectator cannot already read
from the id (a kept pair of goal cards is not named). `board()` is the static table the web viewer draws:
the map with node positions and route costs, the action spaces, and the words for every card and bonus, so
the viewer never needs a second copy of the game's data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from engine_service.games.base import Action, GameResult, JsonDict, Progress
from engine_service.games.common.resources import RESOURCE_WORDS, count_words
from engine_service.games.voyages.tables import (
    BAZAAR,
    BEIJING_VP,
    CARD_SLOTS,
    CHARACTERS,
    CITY_BONUSES,
    CITY_CARDS,
    CONTRACTS,
    DISTINCT_CITY_VP,
    GOALS,
    NODE_BY_SLUG,
    NODE_NAME,
    NODES,
    OUTPOST_BONUSES,
    TRAVEL_COST,
    load,
)

# --- names ------------------------------------------------------------------------------------------------
_UNIT = {
    **RESOURCE_WORDS,
    "good_choice": ("good of your choice", "goods of your choice"),
    "different_goods": ("pair of different goods", "pairs of different goods"),
    "other_bonus": ("other city bonus of your choice", "other city bonuses of your choice"),
    "black_die": ("black die", "black dice"),
    "contract": ("contract from the special pile", "contracts from the special pile"),
    "move": ("move", "moves"),
    "dice": ("die", "dice"),
}
_ORDER = tuple(_UNIT)

SPACE_NAMES = {
    "coins5": "the 5 coins space",
    "camels": "the camel space",
    "pepper": "the pepper space",
    "silk": "the silk space",
    "gold": "the gold space",
    "khan": "Khan's Favor",
    "contracts": "the contracts space",
    "travel": "the travel space",
}
SLOT_NAMES = {
    slot: f"city card {slot[-1]} in {NODE_NAME[city]}"
    if slot[-1].isdigit()
    else f"the city card in {NODE_NAME[city]}"
    for slot, city in CARD_SLOTS
}


def amount(name: str, n: int) -> str:
    if name in ("black_die", "contract", "other_bonus", "different_goods", "good_choice") and n == 1:
        one = _UNIT[name][0]
        return f"a {one}" if name not in ("other_bonus",) else f"one {one}"
    return count_words(n, name, _UNIT)


def bundle(b: Mapping[str, int], empty: str = "nothing") -> str:
    """'2 camels, 3 pepper and 1 gold' (names in the game's usual order, zero entries left out)."""
    keys = sorted((k for k, v in b.items() if v), key=lambda k: _ORDER.index(k) if k in _ORDER else 99)
    return joined([amount(k, int(b[k])) for k in keys]) or empty


def joined(parts: Sequence[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def die(tok: str) -> str:
    """'4', 'black 3', 'white 6', or 'an unrolled die' for Raschid's dice (value 0)."""
    kind, value = tok[0], int(tok[1:])
    colour = {"c": "", "b": "black ", "w": "white ", "n": "neutral "}.get(kind, "")
    if value == 0:
        return f"an unrolled {colour}die"
    return f"{colour}{value}"


def dice(tokens: Sequence[str]) -> str:
    """'1+4' for the dice of one placement."""
    return "+".join(die(t) for t in tokens) if tokens else "no dice"


def dice_list(tokens: Sequence[str]) -> str:
    """'1, 2, 2, 3 and white 6', or '5 unrolled dice' for Raschid's."""
    rolled = [die(t) for t in tokens if not t.endswith("0")]
    unrolled = len(tokens) - len(rolled)
    if unrolled:
        rolled.append(f"{unrolled} unrolled di{'e' if unrolled == 1 else 'ce'}")
    return joined(rolled) or "no dice"


def node(node_id: Any) -> str:
    return NODE_NAME.get(int(node_id), f"place {node_id}")


def space_name(space: str) -> str:
    if space.startswith("card-"):
        return SLOT_NAMES.get(space[5:], "a city card")
    return SPACE_NAMES.get(space, space.replace("_", " "))


def character(key: str) -> str:
    return str(CHARACTERS[key]["name"]) if key in CHARACTERS else "no character"


def contract_text(cid: int) -> str:
    c = CONTRACTS[int(cid)]
    return f"{bundle(c['cost'])} for {bundle(c['reward'])}"


def contract(cid: Any) -> str:
    return f"contract {int(cid)} ({contract_text(int(cid))})"


def city_bonus_text(letter: str) -> str:
    return f"city bonus {letter} ({bundle(CITY_BONUSES[letter]['reward'])})"


def card_text(card: int) -> str:
    """A city card's effect in words, from its kind and numbers."""
    data = CITY_CARDS[int(card)]
    kind = data["kind"]
    if kind in ("repeat",):
        return f"pay {bundle(data['cost'])} for {bundle(data['gain'])}, up to the die's value times"
    if kind == "exchange":
        swaps = [f"{bundle(o['give'])} for {bundle(o['get'])}" for o in data["options"]]
        same = "always the same way" if data["always_same"] else "either way"
        return f"exchange {' or '.join(swaps)}, up to the die's value times ({same})"
    return str(data["text"])


def seat_name(seat: Any) -> str:
    return f"seat {seat}" if isinstance(seat, int) else "the game"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# --- events -----------------------------------------------------------------------------------------------
Event = Mapping[str, Any]
EVENTS: dict[str, Callable[[Event], str]] = {}


def _event(kind: str) -> Callable[[Callable[[Event], str]], Callable[[Event], str]]:
    def register(fn: Callable[[Event], str]) -> Callable[[Event], str]:
        EVENTS[kind] = fn
        return fn

    return register


@_event("setup")
def _setup(e: Event) -> str:
    chars = [f"seat {s} is {character(k)}" for s, k in enumerate(e.get("characters", []))]
    return f"The game is set up: {joined(chars)}" if chars else "The game is set up"


@_event("draft")
def _draft(e: Event) -> str:
    return f"{seat_name(e['seat'])} chose the character {character(e['character'])}"


@_event("goals_kept")
def _goals_kept(e: Event) -> str:
    return f"{seat_name(e['seat'])} kept 2 of the 4 goal cards dealt"


@_event("round")
def _round(e: Event) -> str:
    rolled = [f"seat {s} {dice_list(d)}" for s, d in enumerate(e.get("dice", []))]
    return (
        f"Round {e['round']} begins with seat {e['start_player']} as start player; dice: {'; '.join(rolled)}"
    )


@_event("compensation")
def _compensation(e: Event) -> str:
    got = bundle({"coins": int(e["coins"]), "camels": int(e["camels"])})
    return f"{seat_name(e['seat'])} took {got} as compensation for a dice total below 15"


@_event("city_bonus")
def _city_bonus(e: Event) -> str:
    return f"{seat_name(e['seat'])} took {city_bonus_text(str(e['letter']))}"


@_event("place")
def _place(e: Event) -> str:
    space = str(e["space"])
    text = f"{seat_name(e['seat'])} placed {dice(e['dice'])} on {space_name(space)}"
    low = min((int(t[1:]) for t in e["dice"]), default=0)
    if space == "coins5":
        text += " and took 5 coins"
    elif space in BAZAAR:
        text += f" for a reward up to column {low}"
    elif space == "contracts":
        text += f" for contracts from spaces 1-{low}" if low > 1 else " for the contract on space 1"
    elif space == "travel":
        text += f" for up to {low} step{'s' if low != 1 else ''}"
    elif space == "khan":
        text += " and took 2 camels and a good of their choice"
    fee = int(e.get("fee", 0))
    if fee:
        text += f", paying {amount('coins', fee)} to share the space"
    return text


@_event("bag")
def _bag(e: Event) -> str:
    return f"{seat_name(e['seat'])} put {_bagged(str(e['die']))} in the money bag for 3 coins"


def _bagged(tok: str) -> str:
    return die(tok) if tok.endswith("0") else f"a die ({die(tok)})"


@_event("die")
def _die(e: Event) -> str:
    old, new = die(str(e["from"])), die(str(e["to"]))
    if old == new:
        return f"{seat_name(e['seat'])} rerolled a die showing {old} and rolled {new[-1]} again"
    return f"{seat_name(e['seat'])} changed a die from {old} to {new}"


@_event("black_die")
def _black_die(e: Event) -> str:
    tok = str(e["die"])
    shows = "its value to be chosen when used" if tok.endswith("0") else f"showing {tok[1:]}"
    return f"{seat_name(e['seat'])} took a black die, {shows}"


@_event("black_die_none_left")
def _black_none(e: Event) -> str:
    return f"{seat_name(e['seat'])} was due a black die, but none were left"


@_event("complete")
def _complete(e: Event) -> str:
    return f"{seat_name(e['seat'])} completed {contract(e['contract'])}"


@_event("take_contracts")
def _take_contracts(e: Event) -> str:
    taken = [f"{contract(c)} from space {s}" for s, c in zip(e["spaces"], e["contracts"], strict=False)]
    return f"{seat_name(e['seat'])} took {joined(taken)}"


@_event("discard_contract")
def _discard_contract(e: Event) -> str:
    return f"{seat_name(e['seat'])} discarded {contract(e['contract'])} to the bottom of the special pile"


@_event("special_contract")
def _special_contract(e: Event) -> str:
    who = seat_name(e["seat"])
    new = contract(e["contract"])
    choice = str(e.get("choice", ""))
    if choice == "decline":
        return f"{who} drew {new} from the special pile and declined it (back under the pile)"
    if choice.startswith("discard:"):
        old = choice.split(":", 1)[1]
        return f"{who} drew {new} from the special pile and kept it, discarding contract {old}"
    return f"{who} drew {new} from the special pile"


@_event("special_to_board")
def _special_to_board(e: Event) -> str:
    shown = [contract(c) for c in e.get("contracts", [])]
    if not shown:
        return "The contract spaces are empty and the special pile has no contracts to refill them"
    return f"The contract spaces were empty: {joined(shown)} came from the special pile"


@_event("special_pile_empty")
def _special_empty(e: Event) -> str:
    return f"{seat_name(e['seat'])} was due a contract, but the special pile is empty"


@_event("move")
def _move(e: Event) -> str:
    ends = [node(n) for n in e.get("to", [])]
    cost = bundle({"coins": int(e.get("coins", 0)), "camels": int(e.get("camels", 0))}, empty="")
    verb = "travelled" if e.get("travel") else "moved"
    where = f"to {ends[0]}" if len(ends) == 1 else f"its two figures to {joined(ends)}"
    return f"{seat_name(e['seat'])} {verb} {where}" + (f", paying {cost}" if cost else " at no cost")


@_event("post")
def _post(e: Event) -> str:
    text = f"{seat_name(e['seat'])} placed a trading post in {node(e['city'])}"
    vp = int(e.get("milestone_vp", 0))
    return text + (f" and scored {vp} VP for its number of posts" if vp else "")


@_event("outpost_bonus")
def _outpost_bonus(e: Event) -> str:
    reward = bundle(OUTPOST_BONUSES[int(e["bonus"])])
    return f"{seat_name(e['seat'])} took the trading-post bonus of {node(e['city'])}: {reward}"


@_event("relocate")
def _relocate(e: Event) -> str:
    return (
        f"{seat_name(e['seat'])} had no trading posts left and moved one from {node(e['from'])} "
        f"to {node(e['to'])}"
    )


@_event("card")
def _card(e: Event) -> str:
    times = int(e.get("times", 1))
    return (
        f"{seat_name(e['seat'])} used city card {int(e['card'])} ({card_text(int(e['card']))}) "
        f"{'once' if times == 1 else f'{times} times'}"
    )


@_event("round_end")
def _round_end(e: Event) -> str:
    return f"Round {e['round']} ends: dice come back and the unused contracts go under the special pile"


@_event("game_end")
def _game_end(e: Event) -> str:
    if e.get("reason") == "step_cap":
        return "The game stops at the step cap; final scoring"
    return "The fifth round is over; final scoring"


def describe_event(event: Event) -> str:
    kind = str(event.get("event", ""))
    handler = EVENTS.get(kind)
    if handler is None:
        return f"{seat_name(event.get('seat'))}: {kind.replace('_', ' ') or 'an event'}"
    return handler(event)


# --- actions ----------------------------------------------------------------------------------------------
def describe_action(state: Any, seat: int, action_id: str) -> str:
    action = next((a for a in state.legal_actions(seat) if a.id == action_id), None)
    if action is None:
        return action_id
    return _action_words(state, seat, action)


def _route(state: Any, seat: int, d: Mapping[str, Any], verb: str) -> str:
    steps = int(d.get("steps", 1))
    text = f"{verb} {steps} step{'s' if steps != 1 else ''} to {node(d['end'])}"
    if len(state.figures[seat]) > 1:
        text = f"{verb} {'the first' if int(d['fig']) == 0 else 'the second'} figure " + text[len(verb) + 1 :]
    passed = [node(n) for n in d.get("passed", []) if int(n) != int(d["end"])]
    if state.chars[seat] == "wilhelm" and passed:
        text += f" through {joined(passed)}"
    cost = bundle({"coins": int(d["coins"]), "camels": int(d["camels"])}, empty="")
    return text + (f" for {cost}" if cost else " at no cost")


def _pending(state: Any) -> Mapping[str, Any]:
    return state.pending[0] if state.pending else {}


Words = Callable[[Any, int, Mapping[str, Any], str], str]  # (state, seat, details, id after its head)


def _place_words(state: Any, seat: int, d: Mapping[str, Any], rest: str) -> str:
    space = str(d["space"])
    if space.startswith("card-"):
        index = [s for s, _c in CARD_SLOTS].index(space[5:])
        card = int(state.cards[index])
        return f"chooses {space_name(space)} for the main action (card {card}: {card_text(card)})"
    return f"chooses {space_name(space)} for the main action"


def _dice_words(state: Any, seat: int, d: Mapping[str, Any], rest: str) -> str:
    text = f"places {dice(d['dice'])} on {space_name(str(d['space']))}"
    if d.get("value"):
        text += f", the unrolled die set to {d['value']}"
    if int(d.get("fee", 0)):
        text += f", paying {amount('coins', int(d['fee']))}"
    return text


def _adjust_words(state: Any, seat: int, d: Mapping[str, Any], rest: str) -> str:
    tok = str(d["die"])
    return f"pays 2 camels to turn a die from {die(tok)} to {die(tok[0] + str(int(tok[1:]) + int(d['by'])))}"


def _discard_words(state: Any, seat: int, d: Mapping[str, Any], rest: str) -> str:
    if "contract" in d:
        return f"discards contract {d['discard']} to keep {contract(d['contract'])}"
    return f"discards {contract(d['discard'])}"


def _space_bonus_words(state: Any, seat: int, d: Mapping[str, Any], rest: str) -> str:
    kind, n = next((k, int(v)) for k, v in d.items())
    return f"takes {amount(kind, n)} as the contract space bonus"


def _route_words(state: Any, seat: int, d: Mapping[str, Any], rest: str) -> str:
    return _route(state, seat, d, "travels" if _pending(state).get("t") == "travel" else "moves")


def _times_words(state: Any, seat: int, d: Mapping[str, Any], rest: str) -> str:
    times = int(d["times"])
    return f"uses city card {d['card']} {'once' if times == 1 else f'{times} times'} ({card_text(int(d['card']))})"


def _city_words(state: Any, seat: int, d: Mapping[str, Any], rest: str) -> str:
    cities = [int(c) for c in d.get("cities", [d.get("city")])]
    bonuses = [f"{node(c)}'s {city_bonus_text(state.city_bonus[str(c)])}" for c in cities]
    paid = " for 1 coin" if d.get("coins") else ""
    return f"takes {joined(bonuses)}{paid}"


def _comp_words(state: Any, seat: int, d: Mapping[str, Any], rest: str) -> str:
    return f"takes {bundle({'coins': int(d['coins']), 'camels': int(d['camels'])})} as compensation"


_BY_ID: dict[str, Words] = {
    "end": lambda state, seat, d, rest: "ends the turn",
    "bonus": lambda state, seat, d, rest: "takes a bonus action",
    "black": lambda state, seat, d, rest: "pays 3 camels for a black die",
    "done": lambda state, seat, d, rest: "takes no more contracts",
    "decline": lambda state, seat, d, rest: f"declines {contract(d['contract'])}",
    "stay": lambda state, seat, d, rest: "leaves the other figure where it is",
    "skip": lambda state, seat, d, rest: "does not move",
    "stop": lambda state, seat, d, rest: "stops using the card",
    "go": lambda state, seat, d, rest: f"walks the {amount('move', int(d['moves']))} bought",
}
_BY_HEAD: dict[str, Words] = {
    "complete": lambda state, seat, d, rest: f"completes {contract(d['contract'])}",
    "place": _place_words,
    "dice": _dice_words,
    "bag": lambda state, seat, d, rest: f"puts {_bagged(rest)} in the money bag for 3 coins",
    "reroll": lambda state, seat, d, rest: f"pays 1 camel to reroll a die ({die(rest)})",
    "adjust": _adjust_words,
    "column": lambda state, seat, d, rest: (
        f"takes column {rest} of {space_name(str(d['space']))}: {bundle(d['reward'])}"
    ),
    "good": lambda state, seat, d, rest: f"takes 1 {d['good']}",
    "goods": lambda state, seat, d, rest: f"takes 1 {d['goods'][0]} and 1 {d['goods'][1]}",
    "take": lambda state, seat, d, rest: f"takes {contract(d['contract'])} from space {d['space']}",
    "discard": _discard_words,
    "bonus": _space_bonus_words,
    "route": _route_words,
    "relocate": lambda state, seat, d, rest: (
        f"moves a trading post from {node(d['from'])} to {node(d['to'])}"
    ),
    "times": _times_words,
    "ex": lambda state, seat, d, rest: f"exchanges {bundle(d['give'])} for {bundle(d['get'])}",
    "city": _city_words,
    "pay": lambda state, seat, d, rest: f"pays 1 {d['goods'][0]} and 1 {d['goods'][1]} for a move",
    "xian": lambda state, seat, d, rest: (
        f"takes the bonus of {node(d['city'])}: {city_bonus_text(str(d['letter']))}"
    ),
    "comp": _comp_words,
    "pick": lambda state, seat, d, rest: f"chooses the character {character(str(d['character']))}",
    "keep": lambda state, seat, d, rest: "keeps 2 of the 4 goal cards dealt",
}


def _action_words(state: Any, seat: int, action: Action) -> str:
    """The words for an action: by its whole id (end, done, ...) or else by its head (`dice:`, `route:`)."""
    head, _, rest = action.id.partition(":")
    words = _BY_ID.get(action.id) or _BY_HEAD.get(head)
    if words is None:
        return f"{action.kind.replace('_', ' ')} ({action.id})"
    return words(state, seat, action.details, rest)


# --- result and progress ----------------------------------------------------------------------------------
_PARTS = (
    ("goal_cards", "goal cards"),
    ("goal_cities", "goal cities"),
    ("beijing", "Beijing"),
    ("most_contracts", "most contracts"),
    ("coins", "coins"),
    ("goods", "goods"),
)


def describe_result(state: Any, result: GameResult) -> list[str]:
    """One line per seat in rank order (points, the final-scoring parts, VP scored during play), then the
    tie-break in the game's terms: more camels; seats equal on both share the rank."""
    n = len(result.scores)
    order = sorted(range(n), key=lambda s: (result.ranks[s], s))
    final = {int(p["seat"]): p for p in (getattr(state, "final", None) or [])}
    lines = []
    for s in order:
        line = f"{ordinal(result.ranks[s])}: seat {s} with {result.scores[s]} VP"
        parts = final.get(s)
        if parts:
            scored = [f"{label} {parts[key]}" for key, label in _PARTS if parts.get(key)]
            during = result.scores[s] - int(parts["total"])
            line += f" ({during} during play; at the end: {', '.join(scored) or 'nothing'})"
        lines.append(line)
    for rank in sorted(set(result.ranks)):
        tied = [s for s in order if result.ranks[s] == rank]
        if len(tied) > 1:
            lines.append(
                f"seats {joined([str(s) for s in tied])} tie on {result.scores[tied[0]]} VP and "
                f"{amount('camels', int(result.tiebreaks[tied[0]]))} and share {ordinal(rank)} place"
            )
    for a, b in pairwise(order):
        if result.scores[a] == result.scores[b] and result.ranks[a] != result.ranks[b]:
            lines.append(
                f"seat {a} ranks above seat {b} on the tie-break: more camels "
                f"({result.tiebreaks[a]} against {result.tiebreaks[b]})"
            )
    if result.reason == "step_cap":
        lines.append("The game was stopped at the step cap and scored as it stood")
    return lines


def progress(state: Any) -> Progress:
    """The round (None during the character draft and goal choice before round 1) and the number of turns
    ended so far (it changes as each new player turn begins)."""
    return Progress(round=int(state.round) or None, turn=int(state.turns))


# --- the static board -------------------------------------------------------------------------------------
def board() -> JsonDict:
    """The map (nodes with x/y, routes with their extra camels/coins), the action spaces, and the words for
    every contract, city card, goal, bonus and character, keyed by id."""
    return {
        "nodes": [
            {"id": n["id"], "slug": n["slug"], "name": n["name"], "type": n["type"], "xy": list(n["xy"])}
            for n in NODES
        ],
        "routes": [
            {"a": e["a"], "b": e["b"], "camels": e["camels"], "coins": e["coins"]}
            for e in load("map")["edges"]
        ],
        "travel_cost": list(TRAVEL_COST),
        "beijing": NODE_BY_SLUG["beijing"],
        "beijing_vp": list(BEIJING_VP),
        "card_slots": [{"slot": slot, "city": city, "name": SLOT_NAMES[slot]} for slot, city in CARD_SLOTS],
        "spaces": _spaces(),
        "contracts": {
            str(cid): {
                "text": contract_text(cid),
                "cost": dict(c["cost"]),
                "reward": dict(c["reward"]),
                "start": bool(c["start"]),
            }
            for cid, c in CONTRACTS.items()
        },
        "city_cards": {str(cid): card_text(cid) for cid in CITY_CARDS},
        "city_bonuses": {
            letter: {"text": bundle(b["reward"]), "reward": dict(b["reward"])}
            for letter, b in CITY_BONUSES.items()
        },
        "outpost_bonuses": {
            str(bid): {"text": bundle(r), "reward": dict(r)} for bid, r in OUTPOST_BONUSES.items()
        },
        "goals": {
            str(gid): {
                "cities": list(g["cities"]),
                "vp": int(g["vp"]),
                "text": f"{node(g['cities'][0])} and {node(g['cities'][1])}: {g['vp']} VP",
            }
            for gid, g in GOALS.items()
        },
        "distinct_city_vp": list(DISTINCT_CITY_VP),
        "characters": {key: {"name": c["name"], "text": c["text"]} for key, c in CHARACTERS.items()},
    }


def _spaces() -> list[JsonDict]:
    """The main actions' spaces, with the words for what each gives."""
    return [
        {"id": "coins5", "name": "5 coins", "dice": 1, "text": "take 5 coins"},
        *(
            {
                "id": name,
                "name": name.capitalize(),
                "dice": int(space["dice"]),
                "text": f"bazaar: {amount('dice', int(space['dice']))}, the reward of a column up to the lowest die",
                "columns": [bundle(c) for c in space["columns"]],
            }
            for name, space in BAZAAR.items()
        ),
        {
            "id": "khan",
            "name": "Khan's Favor",
            "dice": 1,
            "slots": 4,
            "text": "2 camels and a good of your choice; each die at least the previous one, no fee",
        },
        {
            "id": "contracts",
            "name": "Contracts",
            "dice": 1,
            "text": "take up to 2 contracts from spaces up to the die; space 5: +1 coin or camel, 6: +2",
        },
        {
            "id": "travel",
            "name": "Travel",
            "dice": 2,
            "text": "move up to the lowest die in steps, paying the travel cost plus route costs",
        },
    ]
