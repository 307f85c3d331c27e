"""The Voyages of Marco Polo's static data, loaded once from `data/*.json` (ids are the reference's ids).

Pure: reads only packaged data files, no RNG. Everything here is immutable after import.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from engine_service.games.common.routemap import RouteMap

GOODS = ("pepper", "silk", "gold")
COST_NAMES = ("camels", "coins")


@cache
def load(name: str) -> Any:
    text = resources.files("engine_service.games.voyages").joinpath(f"data/{name}.json").read_text()
    return json.loads(text)


_MAP = load("map")
NODES: list[dict[str, Any]] = _MAP["nodes"]
NODE_TYPE: dict[int, str] = {n["id"]: n["type"] for n in NODES}
SLUG: dict[int, str] = {n["id"]: n["slug"] for n in NODES}
NODE_NAME: dict[int, str] = {n["id"]: n["name"] for n in NODES}
NODE_BY_SLUG: dict[str, int] = {n["slug"]: n["id"] for n in NODES}
VENEZIA = NODE_BY_SLUG["venezia"]
BEIJING = NODE_BY_SLUG["beijing"]
LARGE_CITIES = tuple(n["id"] for n in NODES if n["type"] == "large")
SMALL_CITIES = tuple(n["id"] for n in NODES if n["type"] == "small")
OASES = tuple(n["id"] for n in NODES if n["type"] == "oasis")
CITIES = frozenset(LARGE_CITIES + SMALL_CITIES + (BEIJING,))
TRAVEL_COST: list[int] = _MAP["travel_cost"]
BEIJING_VP: list[int] = _MAP["beijing_vp"]
CARD_SLOTS: list[tuple[str, int]] = [(slot, NODE_BY_SLUG[city]) for slot, city in _MAP["city_card_slots"]]
ROUTES = RouteMap(
    [n["id"] for n in NODES],
    [(e["a"], e["b"], {"camels": e["camels"], "coins": e["coins"]}) for e in _MAP["edges"]],
    COST_NAMES,
)

CONTRACTS: dict[int, dict[str, Any]] = {c["id"]: c for c in load("contracts")["contracts"]}
START_CONTRACTS = tuple(sorted(cid for cid, c in CONTRACTS.items() if c["start"]))
REGULAR_CONTRACTS = tuple(sorted(cid for cid, c in CONTRACTS.items() if not c["start"]))
CITY_CARDS: dict[int, dict[str, Any]] = {c["id"]: c for c in load("city_cards")["cards"]}
_GOALS = load("goals")
GOALS: dict[int, dict[str, Any]] = {g["id"]: g for g in _GOALS["goals"]}
DISTINCT_CITY_VP: list[int] = _GOALS["distinct_city_vp"]
OUTPOST_BONUSES: dict[int, dict[str, int]] = {
    b["id"]: b["reward"] for b in load("outpost_bonuses")["bonuses"]
}
CITY_BONUSES: dict[str, dict[str, Any]] = {b["letter"]: b for b in load("city_bonuses")["bonuses"]}
BAZAAR: dict[str, dict[str, Any]] = load("bazaar")["spaces"]
_CHARS = load("characters")
CHARACTERS: dict[str, dict[str, Any]] = {c["key"]: c for c in _CHARS["characters"]}
CHARACTER_KEYS = tuple(c["key"] for c in _CHARS["characters"])
FIRST_GAME_CHARACTERS: list[str] = _CHARS["first_game_order"]


def _check() -> None:
    if len(NODES) != 25 or len(ROUTES.route_cost) != 60:
        raise ValueError("map data: expected 25 nodes and 30 routes")
    if len(CONTRACTS) != 44 or len(START_CONTRACTS) != 6:
        raise ValueError("contract data: expected 44 contracts, 6 of them starting contracts")
    if len(CITY_CARDS) != 31 or len(GOALS) != 18 or len(OUTPOST_BONUSES) != 10 or len(CITY_BONUSES) != 6:
        raise ValueError("card data: expected 31 city cards, 18 goals, 10 outpost and 6 city bonuses")
    if len(LARGE_CITIES) != 7 or len(SMALL_CITIES) != 6 or len(OASES) != 10 or len(CARD_SLOTS) != 9:
        raise ValueError("map data: expected 7 large cities, 6 small cities, 10 oases and 9 card slots")


_check()
