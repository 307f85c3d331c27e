"""Marco Polo Expedition's cards, the track data and the six requirement types with their payments.

Pure: no I/O beyond reading the packaged track file, no RNG.

Cards are identified by id (0-54) but only their type matters to the rules: a type is "colour-kind", kind
being one of the four goods or "leader". Payments are therefore enumerated as multisets of types, so a
hand holding two blue oils offers "pay blue-oil" once, not twice.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from itertools import combinations, product
from typing import Any

COLORS = ("blue", "red", "yellow", "green", "purple")
GOODS = ("oil", "spice", "silk", "fruit")
LEADER = "leader"
GOODS_COPIES = 2
LEADER_COPIES = 3


def _build_cards() -> tuple[str, ...]:
    types: list[str] = []
    for color in COLORS:
        for good in GOODS:
            types.extend([f"{color}-{good}"] * GOODS_COPIES)
        types.extend([f"{color}-{LEADER}"] * LEADER_COPIES)
    return tuple(types)


CARD_TYPES: tuple[str, ...] = _build_cards()  # card id -> type; 55 cards
ALL_TYPES: tuple[str, ...] = tuple(dict.fromkeys(CARD_TYPES))


def color_of(card_type: str) -> str:
    return card_type.split("-", 1)[0]


def kind_of(card_type: str) -> str:
    return card_type.split("-", 1)[1]


def is_goods(card_type: str) -> bool:
    return kind_of(card_type) != LEADER


REQUIREMENTS = {
    "ANY1": "any one goods card (no caravan leader)",
    "SAME2": "two goods cards of the same good, any colours",
    "SAME3": "three goods cards of the same good, any colours",
    "SAME4": "four goods cards of the same good, any colours",
    "FOURGOODS": "one card of each of the four goods, any colours",
    "LEAD2": "two caravan leader cards, any colours",
    "COLOR3": "three cards of one colour, goods or leaders",
    "COLOR5": "one card of each of the five colours, goods or leaders",
}


@lru_cache(maxsize=1)
def track() -> dict[str, Any]:
    """The track data (spaces with requirement, chest and score), from `data/track.json`."""
    text = resources.files("engine_service.games.expedition").joinpath("data/track.json").read_text()
    data: dict[str, Any] = json.loads(text)
    for space in data["spaces"][1:]:
        if space["requirement"] not in REQUIREMENTS:
            raise ValueError(f"track space {space['index']}: unknown requirement {space['requirement']}")
    return data


Payment = tuple[str, ...]  # sorted card types


def _multisets(cards: list[str], size: int) -> Iterable[Payment]:
    """Distinct multisets of `size` types drawn from `cards` (a list of types, repeats allowed)."""
    return sorted(set(combinations(sorted(cards), size)))


def payments(hand: Counter[str], requirement: str) -> list[Payment]:
    """Every distinct way (as sorted card types) to pay `requirement` from `hand`, in a stable order."""
    cards = sorted(hand.elements())
    goods = [c for c in cards if is_goods(c)]
    result: list[Payment]
    if requirement == "ANY1":
        result = [(c,) for c in sorted(set(goods))]
    elif requirement in ("SAME2", "SAME3", "SAME4"):
        size = int(requirement[-1])
        result = []
        for good in GOODS:
            result.extend(_multisets([c for c in goods if kind_of(c) == good], size))
    elif requirement == "FOURGOODS":
        options = [sorted({c for c in goods if kind_of(c) == good}) for good in GOODS]
        result = [tuple(sorted(choice)) for choice in product(*options)]
    elif requirement == "LEAD2":
        result = list(_multisets([c for c in cards if not is_goods(c)], 2))
    elif requirement == "COLOR3":
        result = []
        for color in COLORS:
            result.extend(_multisets([c for c in cards if color_of(c) == color], 3))
    elif requirement == "COLOR5":
        options = [sorted({c for c in cards if color_of(c) == color}) for color in COLORS]
        result = [tuple(sorted(choice)) for choice in product(*options)]
    else:
        raise ValueError(f"unknown requirement {requirement}")
    return sorted(set(result))


def can_pay(hand: Counter[str], requirement: str) -> bool:
    """Cheaper than `payments(...)` when only feasibility matters (used by heuristics)."""
    goods_by_kind = Counter(kind_of(c) for c in hand.elements() if is_goods(c))
    if requirement == "ANY1":
        return sum(goods_by_kind.values()) >= 1
    if requirement in ("SAME2", "SAME3", "SAME4"):
        return max(goods_by_kind.values(), default=0) >= int(requirement[-1])
    if requirement == "FOURGOODS":
        return all(goods_by_kind[g] >= 1 for g in GOODS)
    if requirement == "LEAD2":
        return sum(n for t, n in hand.items() if not is_goods(t)) >= 2
    by_color = Counter(color_of(c) for c in hand.elements())
    if requirement == "COLOR3":
        return max(by_color.values(), default=0) >= 3
    if requirement == "COLOR5":
        return all(by_color[c] >= 1 for c in COLORS)
    raise ValueError(f"unknown requirement {requirement}")
