"""Marco Polo II's static data, loaded once from `data/*.json` (ids are the specification's ids).

Pure: reads only packaged data files, no RNG. Everything here is immutable after import. The data is the
specification `shared/game-data/mp2-and-caravans.md`; its FOUND and AUTHORED records are marked in the files.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, cast

from engine_service.games.common.routemap import RouteMap

GOODS = ("pepper", "silk", "gold")
VALUABLES = ("pepper", "silk", "gold", "jade")  # the goods of final scoring (camels are not goods)
RESOURCES = ("coins", "camels", "pepper", "silk", "gold", "jade", "vp")
COST_NAMES = ("coins", "camels", "jade")
WILD = "jade"
WILD_COVERS = ("coins", "camels")
SEAL_NAMES = ("farmer", "spicer", "tailor", "jeweler")
COLOURS = ("blue", "yellow", "green", "red")


@cache
def load(name: str) -> Any:
    text = (
        resources.files("engine_service.games.mp2").joinpath(f"data/{name}.json").read_text(encoding="utf-8")
    )
    return json.loads(text)


_MAP = load("map")
NODES: dict[str, dict[str, Any]] = {n["id"]: n for n in _MAP["nodes"]}
NODE_IDS: tuple[str, ...] = tuple(n["id"] for n in _MAP["nodes"])
BEIJING = "BEI"
CITIES = frozenset(n for n, d in NODES.items() if d["kind"] in ("city", "start"))
POST_CITIES = frozenset(n for n, d in NODES.items() if d["kind"] == "city")
OASES = frozenset(n for n, d in NODES.items() if d["kind"] == "oasis")
SHIELD: dict[str, str] = {n: d["shield"] for n, d in NODES.items() if d["shield"]}
ROUTES_DATA: list[dict[str, Any]] = _MAP["routes"]
ROUTES = RouteMap(NODE_IDS, [(r["a"], r["b"], r["cost"]) for r in ROUTES_DATA], COST_NAMES)  # type: ignore[arg-type]
# The RouteMap is typed for int nodes; Marco Polo II's nodes are the specification's string ids.
NEIGHBOURS: dict[str, list[tuple[str, tuple[int, int, int]]]] = cast(
    "dict[str, list[tuple[str, tuple[int, int, int]]]]", ROUTES.links
)
ROUTE_SEAL: dict[tuple[str, str], str | None] = {}
ROUTE_ID: dict[tuple[str, str], str] = {}
for _r in ROUTES_DATA:
    for _a, _b in ((_r["a"], _r["b"]), (_r["b"], _r["a"])):
        ROUTE_SEAL[(_a, _b)] = _r["sea_seal"]
        ROUTE_ID[(_a, _b)] = _r["id"]

CONTRACTS: dict[str, dict[str, Any]] = {c["id"]: c for c in load("contracts")["contracts"]}
START_CONTRACTS = tuple(sorted(cid for cid, c in CONTRACTS.items() if c["start"]))
REGULAR_CONTRACTS = tuple(sorted(cid for cid, c in CONTRACTS.items() if not c["start"]))
GOALS: dict[str, dict[str, Any]] = {g["id"]: g for g in load("goals")["goals"]}
CITY_CARDS: dict[str, dict[str, Any]] = {c["id"]: c for c in load("city_cards")["cards"]}
_BOOKS = load("books")
BOOKS: dict[str, dict[str, Any]] = _BOOKS["books"]
OFFER_TILES: dict[str, dict[str, Any]] = {t["id"]: t for t in _BOOKS["offer_tiles"]}
_BONUSES = load("bonuses")
SEALS: dict[str, dict[str, Any]] = {s["id"]: s for s in _BONUSES["seals"]}
SPECIAL_CITIES: dict[str, dict[str, Any]] = {s["city"]: s for s in _BONUSES["special_cities"]}
OUTPOSTS: dict[str, dict[str, Any]] = {o["id"]: o["reward"] for o in _BONUSES["outposts"]}
OUTPOST_CITIES: tuple[str, ...] = tuple(_BONUSES["outpost_cities"])
MARKERS: dict[str, dict[str, Any]] = {m["id"]: m["reward"] for m in _BONUSES["city_bonus_markers"]}
MARKER_CITIES: tuple[str, ...] = tuple(_BONUSES["marker_cities"])
CARD_CITIES: tuple[str, ...] = tuple(_BONUSES["card_cities"])
CONTRACT_CITIES: tuple[str, ...] = tuple(_BONUSES["contract_cities"])
SHIELD_TRACK: list[int] = _BONUSES["shield_track"]
MILESTONES: dict[int, int] = {int(k): v for k, v in _BONUSES["milestones"].items()}
_CHARS = load("characters")["characters"]
CHARACTERS: dict[str, dict[str, Any]] = {c["key"]: c for c in _CHARS}
BASE_CHARACTERS = tuple(c["key"] for c in _CHARS if not c["caravans"])
CARAVAN_CHARACTERS = tuple(c["key"] for c in _CHARS if c["caravans"])
_TILES = load("route_tiles")
ROUTE_TILES: dict[str, tuple[str, str]] = {
    t["id"]: (t["shields"][0], t["shields"][1]) for t in _TILES["tiles"]
}
CARAVAN_SELL_VP: dict[str, int] = _TILES["sell_vp"]
CARAVAN_FINAL_VP: dict[str, int] = _TILES["final_sell_vp"]
CITIES_OF_SHIELD: dict[str, tuple[str, ...]] = {}
for _node in NODE_IDS:
    if _node in CITIES:
        CITIES_OF_SHIELD.setdefault(SHIELD[_node], ())
        CITIES_OF_SHIELD[SHIELD[_node]] += (_node,)


# --- small fixed tables ---------------------------------------------------------------------------------
FIGURE_VALUE = 6  # a Donata figure placed as a die
UPGRADE = {"pepper": "silk", "silk": "gold"}
ISABELLA_FACE = {
    1: {"coins": 2},
    6: {"coins": 2},
    2: {"vp": 1},
    5: {"vp": 1},
    3: {"camels": 1},
    4: {"camels": 1},
}
ISABELLA_PAIR = {
    1: {"jade": 1},
    6: {"jade": 1},
    2: {"silk": 1},
    5: {"silk": 1},
    3: {"gold": 1},
    4: {"gold": 1},
}
MONGKE_OASIS_VP = 3


def tok_value(tok: str) -> int:
    """A die token's value; a Donata figure token ("F<colour>") is a value-6 die."""
    return FIGURE_VALUE if tok[0] == "F" else int(tok[1:])


def shield_vp(shields: int) -> int:
    return SHIELD_TRACK[min(shields, len(SHIELD_TRACK) - 1)]


def _check() -> None:
    if len(CITIES) != 24 or len(OASES) != 9 or len(ROUTES_DATA) != 48:
        raise ValueError("map data: expected 24 cities, 9 oases and 48 routes")
    if len(CONTRACTS) != 49 or len(START_CONTRACTS) != 7:
        raise ValueError("contract data: expected 49 contracts, 7 of them starting contracts")
    if len(CITY_CARDS) != 25 or len(GOALS) != 14 or len(OFFER_TILES) != 18 or len(OUTPOSTS) != 10:
        raise ValueError("card data: expected 25 city cards, 14 goals, 18 offer tiles and 10 outposts")
    if len(MARKERS) != 7 or len(CHARACTERS) != 11 or len(ROUTE_TILES) != 10:
        raise ValueError("bonus data: expected 7 city bonus markers, 11 characters and 10 route tiles")
    for route in ROUTES_DATA:
        if route["a"] not in NODES or route["b"] not in NODES:
            raise ValueError(f"route {route['id']} joins an unknown node")


_check()
