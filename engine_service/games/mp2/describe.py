"""Marco Polo II in words and as a static board, for replays: the board a viewer draws (`board`), every
event of a view's log and every legal action as a plain English sentence, the final screen, and the round
and turn of a state.

Pure: reads the game's own tables and the JSON it is given; no Django, no clock, no RNG. Seats are named
"seat N"; map nodes, characters, seals and spaces by their names; contracts, city cards, outposts and bonus
markers by their id with what they give. Nothing here says more than the view or the action id shows: a
kept goal card is never named.

The words are split by concern: `words` names things and tells the log's events, `drawn_board` is the static
board; this module tells the legal actions, the final screen and the progress, and re-exports the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import pairwise
from typing import Any

from engine_service.games.base import Action, GameResult, Progress
from engine_service.games.common.resources import count_words
from engine_service.games.mp2.drawn_board import board
from engine_service.games.mp2.rules import Mp2State
from engine_service.games.mp2.setup_state import (
    SPECIAL_SPACES,
    TRAVEL1_COINS,
)
from engine_service.games.mp2.tables import (
    CARAVAN_SELL_VP,
    CITY_CARDS,
    COLOURS,
    ISABELLA_PAIR,
    MARKERS,
    MONGKE_OASIS_VP,
    SPECIAL_CITIES,
    UPGRADE,
    tok_value,
)
from engine_service.games.mp2.words import (
    EVENT_WORDS,
    SEAL_TITLES,
    _and,
    _cost,
    _goods,
    bundle_words,
    card_words,
    character_name,
    contract_words,
    describe_event,
    dice_words,
    die_words,
    marker_words,
    node_name,
    outpost_words,
    space_name,
    tile_words,
)

__all__ = ["EVENT_WORDS", "board", "describe_action", "describe_event", "describe_result", "progress"]


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
