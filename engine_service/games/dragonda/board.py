"""Marco Polo: Dragonda's static data: the map graph, the trade table and the cards, from `data/*.json`.

Layer: pure game data. Reads only the packaged JSON files (through `importlib.resources`) once, checks them
against the counts the specification states, and derives the graphs and distance tables the rules and the
heuristic use. No RNG, no clock, no state.

Space ids: the 52 named places (3-letter ids), land dots `L1`-`L66`, sea nodes `S1`-`S42` and the six sea
junctions `J**`. A place is a land space; a port is also on the sea graph.

Every space also has drawing coordinates (`xy`, for replay viewers only; no rule reads them): places and
junctions carry their own, land dots theirs inside their chain, a sea chain lists its nodes' points in
`nodes_xy`. The loader checks that every space has one point inside the map's `extent`, that no two spaces
are drawn closer than `MIN_SPACING`, and that each chain's inner points stay near the chain's ends.
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from itertools import pairwise, permutations
from typing import Any

GOODS = ("TX", "MG", "SI", "PO", "SP", "PS")
PASSES = ("PL", "CT")
REQUIRED = ("DAM", "ORM", "SAM", "PEC", "YUN")
HOME = "VEN"
PASS_SHOP = {"PL": "VEN", "CT": "PEC"}
BONUS_PLACES = {"NAG": "NAG", "MAN": "MANPAL", "PAL": "MANPAL"}  # place -> first-arrival bonus key
LAND_MEANS = ("horse", "caravan")
MEANS = ("foot", "horse", "caravan", "ship")


@dataclass(frozen=True)
class Means:
    name: str
    price: int
    upkeep: int
    capacity: int
    movement: int
    sea: bool


# The prose values of the rule text (the printed table is shifted one column; resolution #2).
MEANS_TABLE = {
    "foot": Means("foot", 0, 0, 3, 4, False),
    "horse": Means("horse", 6, 3, 5, 9, False),
    "caravan": Means("caravan", 16, 8, 12, 6, False),
    "ship": Means("ship", 100, 30, 16, 10, True),
}
MIN_SPACING = 10  # drawing units between any two spaces' points
CHAIN_MARGIN = 60  # how far a chain's inner point may lie outside the box of the chain's two ends
MAX_CAPACITY = max(m.capacity for m in MEANS_TABLE.values())
LAND_CAPACITY = max(m.capacity for m in MEANS_TABLE.values() if not m.sea)


def cargo_total(cargo: Mapping[str, int]) -> int:
    return sum(cargo.values())


def card_slug(name: str) -> str:
    """An Adventure card's name as action ids write it: spaces as underscores (GOOD FORTUNE: GOOD_FORTUNE)."""
    return name.replace(" ", "_")


def _read(name: str) -> Any:
    text = (
        resources.files("engine_service.games.dragonda").joinpath(f"data/{name}").read_text(encoding="utf-8")
    )
    return json.loads(text)


class Board:
    """The map as graphs plus the trade table and card definitions, checked on load."""

    def __init__(self) -> None:
        self._load_map(_read("map.json"))
        self._derive_distances()
        self._load_trade(_read("trade.json"))
        self._load_cards(_read("events.json")["cards"], _read("adventures.json")["cards"])
        self.tour_land = self._tours(self.land_dist)
        self.tour_comb = self._tours(self.comb_dist)

    # --- building -------------------------------------------------------------------------------------
    def _load_map(self, mapdata: dict[str, Any]) -> None:
        """Spaces, zones, drawing points and the two graphs, checked."""
        self.zone_names: dict[str, str] = dict(mapdata["zones"])
        self.places: dict[str, dict[str, Any]] = {p["id"]: p for p in mapdata["places"]}
        self.zone: dict[str, str] = {}
        self.kind: dict[str, str] = {}  # place | dot | sea | junction
        for place in mapdata["places"]:
            self.zone[place["id"]] = place["zone"]
            self.kind[place["id"]] = "place"
        self.junctions: dict[str, str] = {}
        self.xy: dict[str, tuple[int, int]] = {}
        self.extent: tuple[int, int] = (int(mapdata["extent"][0]), int(mapdata["extent"][1]))
        self.chain_ends: dict[str, tuple[str, str]] = {}  # a dot or sea node -> its chain's two ends
        for place in mapdata["places"]:
            self._point(place["id"], place.get("xy"))
        for junction in mapdata["junctions"]:
            self.zone[junction["id"]] = junction["zone"]
            self.kind[junction["id"]] = "junction"
            self.junctions[junction["id"]] = junction["name"]
            self._point(junction["id"], junction.get("xy"))
        self.land_adj: dict[str, list[str]] = {}
        self.sea_adj: dict[str, list[str]] = {}
        land_edges = self._chains(mapdata["land_chains"], "dots", self.land_adj, sea=False)
        sea_edges = self._chains(mapdata["sea_chains"], "nodes", self.sea_adj, sea=True)
        for adj in (self.land_adj, self.sea_adj):
            for space in adj:
                adj[space] = sorted(set(adj[space]), key=self.order_key)
        self.ports = sorted(p for p, d in self.places.items() if d["port"])
        self.sea_only = sorted(p for p, d in self.places.items() if d["sea_only"])
        self.spaces = sorted(self.zone, key=self.order_key)
        self.index = {s: i for i, s in enumerate(self.spaces)}
        self._check(land_edges, sea_edges)

    def _derive_distances(self) -> None:
        """Distance tables by land, by sea and combined; the passage and the nearest shore of each space."""
        self.land_dist = self._all_pairs(self.land_adj)
        self.sea_dist = self._all_pairs(self.sea_adj)
        combined = {s: sorted(set(self.land_adj.get(s, []) + self.sea_adj.get(s, []))) for s in self.spaces}
        self.comb_dist = self._all_pairs(combined)
        land_ports = [p for p in self.ports if p not in self.sea_only]
        self.passage = {p: self._nearest(p, land_ports) for p in self.sea_only}
        self.ashore = {
            s: self._nearest(s, self.ports) for s in self.spaces if self.kind[s] in ("sea", "junction")
        }

    def _load_trade(self, trade: dict[str, Any]) -> None:
        """The goods and each named place's buying and selling prices."""
        self.goods_names: dict[str, str] = dict(trade["goods"])
        self.buy: dict[str, dict[str, int]] = {}
        self.sell: dict[str, dict[str, int]] = {}
        for city, row in trade["prices"].items():
            if city not in self.places:
                raise ValueError(f"trade table names an unknown place {city}")
            self.buy[city] = {g: int(row[g][0]) for g in GOODS}
            self.sell[city] = {g: int(row[g][1]) for g in GOODS}
        if set(self.buy) != set(self.places):
            raise ValueError("the trade table must have one row per named place")

    def _load_cards(self, events: list[dict[str, Any]], adventures: list[dict[str, Any]]) -> None:
        """The 40 Event and 36 Adventure cards, checked; attack names and the defences cancelling each."""
        self.events: dict[str, dict[str, Any]] = {c["id"]: c for c in events}
        self.adventures: dict[str, dict[str, Any]] = {c["id"]: c for c in adventures}
        if len(self.events) != 40 or len(self.adventures) != 36:
            raise ValueError("Dragonda needs 40 Event and 36 Adventure cards")
        for event in self.events.values():
            covered = sorted(k for band in event["bands"] for k in range(band["lo"], band["hi"] + 1))
            if covered != list(range(2, 13)):
                raise ValueError(f"event {event['id']}: bands must cover 2-12 exactly once")
        self.card_name = {cid: c["name"] for cid, c in self.adventures.items()}
        self.attack_names = sorted({c["name"] for c in adventures if c["kind"] == "attack"})
        self.defence_names = sorted({c["name"] for c in adventures if c["kind"] == "defence"})
        self.attack_def = {c["name"]: c for c in adventures if c["kind"] == "attack"}
        self.cancels: dict[str, list[str]] = {}  # attack name -> defence names that cancel it
        for card in adventures:
            if card["kind"] == "defence":
                for target in card["cancels"]:
                    for attack in self.attack_names if target == "*" else [target]:
                        names = self.cancels.setdefault(attack, [])
                        if card["name"] not in names:
                            names.append(card["name"])
        for attack in self.attack_names:
            self.cancels[attack] = sorted(self.cancels.get(attack, []))
        self.all_cards = sorted(self.events) + sorted(self.adventures)

    def order_key(self, space: str) -> tuple[int, int, str]:
        """A stable order: places, then land dots, then sea nodes, then junctions (numbers numerically)."""
        if space[0] in "LS" and space[1:].isdigit():
            return (1 if space[0] == "L" else 2, int(space[1:]), space)
        if space in self.kind and self.kind[space] == "junction":
            return (3, 0, space)
        return (0, 0, space)

    def _chains(self, chains: list[dict[str, Any]], key: str, adj: dict[str, list[str]], *, sea: bool) -> int:
        edges = 0
        for chain in chains:
            for end in (chain["from"], chain["to"]):
                if end not in self.zone:
                    raise ValueError(f"map chain names an unknown place {end}")
            inner: list[str] = []
            points = chain.get("nodes_xy", []) if sea else [node.get("xy") for node in chain[key]]
            if len(points) != len(chain[key]):
                raise ValueError(f"map chain {chain['from']}-{chain['to']} needs one point per node")
            for node, point in zip(chain[key], points, strict=True):
                node_id = node if sea else node["id"]
                if node_id in self.zone:
                    raise ValueError(f"map node {node_id} appears twice")
                self.zone[node_id] = chain["zone"] if sea else node["zone"]
                self.kind[node_id] = "sea" if sea else "dot"
                self.chain_ends[node_id] = (chain["from"], chain["to"])
                self._point(node_id, point)
                inner.append(node_id)
            path = [chain["from"], *inner, chain["to"]]
            for a, b in pairwise(path):
                adj.setdefault(a, []).append(b)
                adj.setdefault(b, []).append(a)
                edges += 1
        return edges

    def _point(self, space: str, point: Any) -> None:
        width, height = self.extent
        if (
            not isinstance(point, list)
            or len(point) != 2
            or not all(isinstance(v, int) for v in point)
            or not (0 <= point[0] <= width and 0 <= point[1] <= height)
        ):
            raise ValueError(
                f"map space {space} needs an xy inside the extent {width}x{height}, not {point!r}"
            )
        self.xy[space] = (point[0], point[1])

    def _check_drawing(self) -> None:
        """Every space drawn once, apart from the others, and each chain's points along its chain."""
        missing = sorted(set(self.zone) - set(self.xy))
        if missing:
            raise ValueError(f"map spaces without xy: {', '.join(missing)}")
        points = sorted(self.xy.items())
        for i, (a, pa) in enumerate(points):
            for b, pb in points[i + 1 :]:
                if math.dist(pa, pb) < MIN_SPACING:
                    raise ValueError(f"map spaces {a} and {b} are drawn closer than {MIN_SPACING}")
        for node, (start, end) in self.chain_ends.items():
            (x0, y0), (x1, y1), (x, y) = self.xy[start], self.xy[end], self.xy[node]
            if not (
                min(x0, x1) - CHAIN_MARGIN <= x <= max(x0, x1) + CHAIN_MARGIN
                and min(y0, y1) - CHAIN_MARGIN <= y <= max(y0, y1) + CHAIN_MARGIN
            ):
                raise ValueError(f"map node {node} is drawn far from its chain {start}-{end}")

    def _check(self, land_edges: int, sea_edges: int) -> None:
        counts = {
            k: sum(1 for v in self.kind.values() if v == k) for k in ("place", "dot", "sea", "junction")
        }
        expected = {"place": 52, "dot": 66, "sea": 42, "junction": 6}
        if counts != expected or (land_edges, sea_edges) != (121, 72):
            raise ValueError(
                f"map counts {counts}, edges {land_edges}/{sea_edges} differ from the specification"
            )
        for port in self.ports:
            if port not in self.sea_adj:
                raise ValueError(f"port {port} has no sea edge")
        for place in self.sea_only:
            if place in self.land_adj:
                raise ValueError(f"sea-only port {place} has a land edge")
        self._check_drawing()

    def _all_pairs(self, adj: dict[str, list[str]]) -> dict[str, dict[str, int]]:
        result: dict[str, dict[str, int]] = {}
        for source in adj:
            dist = {source: 0}
            queue = deque([source])
            while queue:
                here = queue.popleft()
                for nxt in adj[here]:
                    if nxt not in dist:
                        dist[nxt] = dist[here] + 1
                        queue.append(nxt)
            result[source] = dist
        return result

    def _nearest(self, source: str, targets: list[str]) -> str:
        dist = self.sea_dist[source]
        return min((dist[t], t) for t in targets if t in dist and t != source)[1]

    def _tours(self, dist: dict[str, dict[str, int]]) -> dict[tuple[int, str], int]:
        """Shortest walk from city c through every city of `mask` (bits over REQUIRED) ending at VEN."""
        tours: dict[tuple[int, str], int] = {}
        for mask in range(1 << len(REQUIRED)):
            cities = [REQUIRED[i] for i in range(len(REQUIRED)) if mask >> i & 1]
            for start in (*REQUIRED, HOME):
                best = None
                for order in permutations(cities):
                    here, total = start, 0
                    for city in (*order, HOME):
                        total += dist[here][city]
                        here = city
                    best = total if best is None else min(best, total)
                tours[(mask, start)] = best if best is not None else dist[start][HOME]
        return tours

    # --- queries --------------------------------------------------------------------------------------
    def is_land(self, space: str) -> bool:
        return self.kind[space] in ("place", "dot")

    def is_place(self, space: str) -> bool:
        return self.kind[space] == "place"

    def is_port(self, space: str) -> bool:
        return self.kind[space] == "place" and bool(self.places[space]["port"])

    def neighbours(self, space: str, *, sea: bool) -> list[str]:
        return (self.sea_adj if sea else self.land_adj).get(space, [])

    def home_distance(self, space: str) -> int:
        """Steps to VEN on the combined land+sea graph (the tie-break's measure)."""
        return self.comb_dist[space][HOME]


BOARD = Board()
