"""A face-up row of cards that slides left when cards are taken, and face-down piles drawn from the top.

Pure and game-neutral: cards are ints. A row is a list (index 0 = space 1); a pile is a list whose index 0
is the top card.
"""

from __future__ import annotations

from collections.abc import Sequence


def take_from_row(row: list[int], spaces: Sequence[int]) -> list[int]:
    """Take the cards on the given 1-based spaces (all picks first, then slide the rest left)."""
    if len(set(spaces)) != len(spaces) or any(not 1 <= s <= len(row) for s in spaces):
        raise ValueError(f"spaces {list(spaces)} are not distinct occupied spaces of a row of {len(row)}")
    taken = [row[s - 1] for s in spaces]
    keep = [card for i, card in enumerate(row, start=1) if i not in spaces]
    row[:] = keep
    return taken


def draw_top(pile: list[int]) -> int | None:
    """The top card of a pile (None when empty)."""
    return pile.pop(0) if pile else None


def put_bottom(pile: list[int], cards: Sequence[int]) -> None:
    pile.extend(cards)
