"""The stable action space of a game: legal action ids <-> integer indices in a fixed `Discrete(n)`.

Engine layer, pure: imports the games only (no Django, no gRPC, no clock, no I/O beyond the packaged
reference, no RNG). The space is derived from the game's reference (`GameSpec.reference()`: its action
kinds, in the reference's order, each with its id pattern) and is the same for every variant and player
count of a game (an index a variant or count never offers is simply never legal).

Two levels, one flat index:
- A kind whose id pattern has a small finite language (at most `ENUMERABLE_LIMIT` ids, e.g.
  `^means:(foot|horse|caravan|ship)$`) gets one fixed index per id, in the sorted order of its ids: the
  index means the same action in every state.
- Any other kind (quantities, routes, card payments, dice combinations: patterns with `+` lists or
  unbounded numbers) gets `slots` indices: slot k is the k-th of that kind's legal actions *now*, in the
  canonical order (`natural_key` of the id: text parts compared as text, number parts as numbers). Level
  one (the kind) is fixed, level two (the rank within the kind) is relative to the state. A game's
  `SLOTS` entry bounds it; `ActionSpace.index` raises `ActionSpaceError` if a state ever offers more.
`NARROWED` gives tighter id patterns than the reference's for kinds whose ids are in fact few (a legal
id that does not match one is an `ActionSpaceError`, so the narrowing is checked, never trusted).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import product
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

from engine_service.games import Action
from engine_service.games.registry import get_game

ENUMERABLE_LIMIT = 512  # a kind whose pattern has more ids than this gets relative slots
DEFAULT_SLOTS = 32
# Relative slots per kind where a game's states offer more than DEFAULT_SLOTS of one kind at once: about
# twice the most seen over 680 seeded random games (tests/envs/test_action_space.py checks them).
SLOTS: dict[str, dict[str, int]] = {
    "expedition-v1": {"move": 1024},  # card payments: 360 ways for one turn seen in random play
    "dragonda-v1": {"move": 128, "buy": 64},
    "mp2-v1": {"bonus": 48, "place": 96, "move": 64},
    "voyages-v1": {"bonus": 48, "place": 48, "move": 64},
}
_CARD = "(blue|red|yellow|green|purple)-(oil|spice|silk|fruit|leader)"
NARROWED: dict[str, dict[str, str]] = {
    "expedition-v1": {"draw": f"^(draw:deck|take:{_CARD})$", "ballast": "^ballast:p[0-4]$"},
}


class ActionSpaceError(ValueError):
    """An id outside the space, an index outside it or not legal now, or more legal actions of one kind
    than its slots; the message names the game, the kind and the id or index."""


@dataclass(frozen=True)
class KindBlock:
    """One kind's part of the space: `start` and `size` in the flat index; `ids` for a fixed kind."""

    kind: str
    pattern: re.Pattern[str]
    start: int
    size: int
    ids: tuple[str, ...] | None  # None: relative slots

    @property
    def fixed(self) -> bool:
        return self.ids is not None


class ActionSpace:
    """The flat index space of one game. `index(legal, id)` and `action_id(legal, index)` are inverse
    for every legal action of a state; `mask(legal)` marks the legal indices."""

    def __init__(self, game_id: str) -> None:
        reference = get_game(game_id).reference()
        if reference is None:
            raise ActionSpaceError(f"{game_id} has no reference, so no action space")
        self.game_id = game_id
        blocks: list[KindBlock] = []
        start = 0
        narrowed = NARROWED.get(game_id, {})
        for kind, entry in reference["actions"].items():
            source = narrowed.get(kind, entry["id"])
            ids = enumerate_pattern(source, ENUMERABLE_LIMIT)
            size = len(ids) if ids is not None else SLOTS.get(game_id, {}).get(kind, DEFAULT_SLOTS)
            blocks.append(KindBlock(kind, re.compile(source), start, size, ids))
            start += size
        self.blocks: tuple[KindBlock, ...] = tuple(blocks)
        self.size = start
        self._by_kind = {block.kind: block for block in blocks}
        self._fixed = {i: (block, k) for block in blocks if block.ids for k, i in enumerate(block.ids)}

    def block(self, kind: str) -> KindBlock:
        if kind not in self._by_kind:
            raise ActionSpaceError(f"{self.game_id} has no action kind {kind!r}")
        return self._by_kind[kind]

    def index(self, legal: Sequence[Action], action_id: str) -> int:
        """The index of the legal action `action_id` among `legal` (the seat's legal actions now)."""
        action = next((a for a in legal if a.id == action_id), None)
        if action is None:
            raise ActionSpaceError(f"{self.game_id}: {action_id!r} is not one of the legal actions")
        block = self._checked(action)
        if block.ids is not None:
            return block.start + block.ids.index(action_id)
        ranked = self._ranked(legal, block)
        return block.start + ranked.index(action_id)

    def action_id(self, legal: Sequence[Action], index: int) -> str:
        """The legal action id at `index`; `ActionSpaceError` if the index is not legal now."""
        block = self._block_at(index)
        if block.ids is not None:
            wanted = block.ids[index - block.start]
            if any(a.id == wanted for a in legal):
                return wanted
            raise ActionSpaceError(f"{self.game_id}: index {index} ({wanted}) is not legal now")
        ranked = self._ranked(legal, block)
        slot = index - block.start
        if slot >= len(ranked):
            raise ActionSpaceError(
                f"{self.game_id}: index {index} is {block.kind} slot {slot}, only {len(ranked)} legal now"
            )
        return ranked[slot]

    def legal_indices(self, legal: Sequence[Action]) -> list[int]:
        """The index of every legal action, in the order of `legal`."""
        ranks: dict[str, dict[str, int]] = {}
        indices = []
        for action in legal:
            block = self._checked(action)
            if block.ids is not None:
                indices.append(block.start + block.ids.index(action.id))
                continue
            if block.kind not in ranks:
                ranks[block.kind] = {a: k for k, a in enumerate(self._ranked(legal, block))}
            indices.append(block.start + ranks[block.kind][action.id])
        return indices

    def mask(self, legal: Sequence[Action]) -> list[int]:
        """1 at every legal index, 0 elsewhere (length `size`)."""
        marks = [0] * self.size
        for i in self.legal_indices(legal):
            marks[i] = 1
        return marks

    def describe(self) -> list[dict[str, Any]]:
        """The layout, for documentation: per kind its range and whether its indices are fixed."""
        return [
            {"kind": b.kind, "start": b.start, "size": b.size, "fixed": b.fixed, "ids": list(b.ids or ())}
            for b in self.blocks
        ]

    def _block_at(self, index: int) -> KindBlock:
        if not 0 <= index < self.size:
            raise ActionSpaceError(f"{self.game_id}: index {index} is outside 0-{self.size - 1}")
        return next(b for b in self.blocks if b.start <= index < b.start + b.size)

    def _checked(self, action: Action) -> KindBlock:
        block = self.block(action.kind)
        if not block.pattern.fullmatch(action.id) or (block.ids is not None and action.id not in block.ids):
            raise ActionSpaceError(f"{self.game_id}: {action.kind} id {action.id!r} is outside its pattern")
        return block

    def _ranked(self, legal: Sequence[Action], block: KindBlock) -> list[str]:
        ranked = sorted((a.id for a in legal if a.kind == block.kind), key=natural_key)
        if len(ranked) > block.size:
            raise ActionSpaceError(
                f"{self.game_id}: {len(ranked)} legal {block.kind} actions, more than its {block.size} slots"
            )
        return ranked


@cache
def action_space(game_id: str) -> ActionSpace:
    """The (shared, immutable) action space of a game."""
    return ActionSpace(game_id)


def natural_key(action_id: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key: digit runs compare as numbers, the rest as text (`buy:SP:2` before `buy:SP:10`)."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", action_id) if part
    )


def enumerate_pattern(pattern: str, limit: int) -> tuple[str, ...] | None:
    """Every string a regular expression matches, sorted, if they are at most `limit`; None when the
    language is larger or infinite (an unbounded repeat, or a class too wide)."""
    try:
        strings = _strings(sre_parse.parse(pattern), limit)
    except _TooMany:
        return None
    return tuple(sorted(set(strings)))


class _TooMany(Exception):
    pass


def _strings(parsed: Any, limit: int) -> list[str]:
    results = [""]
    for op, arg in parsed:
        options = _node(op, arg, limit)
        if len(results) * len(options) > limit:
            raise _TooMany
        results = [a + b for a, b in product(results, options)]
    return results


def _node(op: Any, arg: Any, limit: int) -> list[str]:
    name = str(op)
    if name == "LITERAL":
        return [chr(arg)]
    if name == "AT":
        return [""]
    if name == "SUBPATTERN":
        return _strings(arg[-1], limit)
    if name == "BRANCH":
        return [s for branch in arg[1] for s in _strings(branch, limit)]
    if name == "IN":
        return list(_class(arg, limit))
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        low, high, body = arg
        if high > limit:
            raise _TooMany
        one = _strings(body, limit)
        found: list[str] = []
        for count in range(low, high + 1):
            found.extend("".join(p) for p in product(one, repeat=count))
            if len(found) > limit:
                raise _TooMany
        return found
    raise _TooMany  # anything else (categories, lookarounds) is treated as too wide


def _class(items: Any, limit: int) -> Iterator[str]:
    chars: list[str] = []
    for op, arg in items:
        if str(op) == "LITERAL":
            chars.append(chr(arg))
        elif str(op) == "RANGE":
            chars.extend(chr(c) for c in range(arg[0], arg[1] + 1))
        else:
            raise _TooMany
    if len(chars) > limit:
        raise _TooMany
    return iter(chars)
