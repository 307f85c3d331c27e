"""Marco Polo II's static board for replays (`board`): the map (nodes with their 0-100 positions, routes with
costs and sea seals), the action spaces, books and offer tiles, seals, special cities, bonus markers,
outposts, city cards, contracts, goals, characters, route tiles and the shield track, each with its words.

Pure: reads the game's own tables only; no Django, no clock, no RNG, no state, nothing hidden (it holds no
game's cards in hand). It must not describe a game in progress (that is `describe`'s).
"""

from __future__ import annotations

from engine_service.games.base import JsonDict
from engine_service.games.mp2.setup_state import (
    BLUE,
    BOOK_OF,
    CARD_SLOTS,
    KHAN_SLOTS,
    ROUNDS,
    SPECIAL_SPACES,
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
    MARKER_CITIES,
    MARKERS,
    MILESTONES,
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
)
from engine_service.games.mp2.words import (
    SEAL_TITLES,
    SPACE_NAMES,
    _cost,
    bundle_words,
    card_text,
    node_name,
    space_name,
)


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
