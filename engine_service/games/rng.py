"""The per-match chance source: a small, portable, serialisable PRNG.

Pure: no I/O, no clock, never the global `random`. Its whole state is one integer, so a game state that
holds it round-trips through JSON, and the same seed gives the same draws on every platform and Python
version (SplitMix64, Steele et al. 2014).
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK64 = (1 << 64) - 1


class ChanceRng:
    """SplitMix64 with unbiased bounded draws (rejection sampling)."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK64

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def randbelow(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        if n <= 0:
            raise ValueError("randbelow needs a positive bound")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n

    def randint(self, low: int, high: int) -> int:
        """A uniform integer in [low, high], both ends included (a die is randint(1, 6))."""
        return low + self.randbelow(high - low + 1)

    def choice(self, items: Sequence[T]) -> T:
        return items[self.randbelow(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates, in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]

    def fork(self, salt: int) -> ChanceRng:
        """An independent stream derived from this one's current state and a salt (does not advance self)."""
        mixed = ChanceRng(self.state ^ ((salt * 0xD1B54A32D192ED03) & _MASK64))
        return ChanceRng(mixed.next_u64())
