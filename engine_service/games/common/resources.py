"""Resource bundles: named counts (coins, camels, pepper, ..., vp) held as plain `dict[str, int]`.

Pure and game-neutral: a game decides which names exist. A bundle is a cost, a gain or a player's holdings;
missing names count as zero. Nothing here checks game rules beyond "enough to pay".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping

Bundle = Mapping[str, int]


def can_afford(holdings: Bundle, cost: Bundle, times: int = 1) -> bool:
    """Whether `holdings` covers `cost` repeated `times` times."""
    return all(holdings.get(name, 0) >= amount * times for name, amount in cost.items())


def max_times(holdings: Bundle, cost: Bundle, cap: int) -> int:
    """How many times (at most `cap`) `cost` can be paid from `holdings`."""
    best = cap
    for name, amount in cost.items():
        if amount > 0:
            best = min(best, holdings.get(name, 0) // amount)
    return max(best, 0)


def gain(holdings: MutableMapping[str, int], bundle: Bundle, times: int = 1) -> None:
    for name, amount in bundle.items():
        holdings[name] = holdings.get(name, 0) + amount * times


def pay(holdings: MutableMapping[str, int], cost: Bundle, times: int = 1) -> None:
    """Subtract `cost` x `times`; raise ValueError (changing nothing) if the holdings do not cover it."""
    if not can_afford(holdings, cost, times):
        raise ValueError(f"cannot pay {describe(cost)} x{times} from {describe(holdings)}")
    for name, amount in cost.items():
        holdings[name] = holdings.get(name, 0) - amount * times


def total(bundle: Bundle, names: Iterable[str]) -> int:
    return sum(bundle.get(name, 0) for name in names)


def describe(bundle: Bundle) -> str:
    """'2 camels + 1 silk' (zero entries left out; '-' for an empty bundle)."""
    parts = [f"{amount} {name}" for name, amount in bundle.items() if amount]
    return " + ".join(parts) if parts else "-"
