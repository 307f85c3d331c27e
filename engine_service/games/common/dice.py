"""Dice placement on action spaces: dice tokens, occupancy, the occupancy fee and the colour-once rule.

Pure and game-neutral (the Marco Polo family's placement rules); no RNG of its own: `roll` takes the
caller's `ChanceRng`.

A die is a token string: a kind letter and a value, e.g. "c4" (a die in the player's own colour showing 4),
"b3" (a black die), "w6" (a white die). Value 0 means "not rolled: the value is chosen when the die is used"
(a character ability). A placement is `[seat, [tokens]]`; seat -1 is a neutral die that never leaves.

Rules encoded here (a game decides which spaces use them):
- a space takes exactly `dice` dice;
- a `shared` space may be used while occupied, paying the lowest value among the dice being placed (the
  dice already there do not matter); a single-use space may not be used while occupied;
- the player's own colour ("c") appears at most once per space; other kinds may be added freely.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from engine_service.games.rng import ChanceRng

COLOUR = "c"


def token(kind: str, value: int) -> str:
    return f"{kind}{value}"


def kind_of(tok: str) -> str:
    return tok[0]


def value_of(tok: str) -> int:
    return int(tok[1:])


def roll(rng: ChanceRng, kind: str) -> str:
    return token(kind, rng.randint(1, 6))


def distinct_groups(tokens: Iterable[str], size: int) -> list[tuple[str, ...]]:
    """Every distinct multiset of `size` tokens drawn from `tokens`, each sorted, in a stable order."""
    return sorted(set(combinations(sorted(tokens), size)))


def remove_tokens(pool: list[str], used: Sequence[str]) -> None:
    """Remove one occurrence of each used token; raise ValueError (pool unchanged) if one is missing."""
    trial = list(pool)
    for tok in used:
        if tok not in trial:
            raise ValueError(f"die {tok} is not available in {pool}")
        trial.remove(tok)
    pool[:] = trial


@dataclass(frozen=True)
class SpaceDef:
    """An action space: how many dice it takes, whether it can be shared (paying a fee) and its meaning."""

    id: str
    dice: int
    shared: bool = True
    colour_once: bool = True
    fee: bool = True


def colour_used(placements: Sequence[Sequence[Any]], seat: int) -> bool:
    """Whether `seat` already placed a die of its own colour in these placements."""
    for placed_seat, tokens in placements:
        if placed_seat == seat and any(kind_of(t) == COLOUR for t in tokens):
            return True
    return False


def placement_fee(
    space: SpaceDef, occupied: bool, values: Sequence[int], *, exempt: bool = False
) -> int | None:
    """Coins due to place dice showing `values` on `space`; None when the space cannot be used at all."""
    if not occupied:
        return 0
    if not space.shared:
        return None
    if not space.fee or exempt:
        return 0
    return min(values)
