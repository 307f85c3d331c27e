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


# Words for the resources the Marco Polo games share: (one, many), in the games' usual order.
RESOURCE_WORDS: dict[str, tuple[str, str]] = {
    "coins": ("coin", "coins"),
    "camels": ("camel", "camels"),
    "pepper": ("pepper", "pepper"),
    "silk": ("silk", "silk"),
    "gold": ("gold", "gold"),
    "jade": ("jade", "jade"),
    "vp": ("VP", "VP"),
}


def count_words(amount: int, name: str, words: Mapping[str, tuple[str, str]] = RESOURCE_WORDS) -> str:
    """'1 camel', '3 coins' (an unknown name is used as it is)."""
    one, many = words.get(name, (name, name))
    return f"{amount} {one if amount == 1 else many}"


def describe(bundle: Bundle) -> str:
    """'2 camels + 1 silk' (zero entries left out; '-' for an empty bundle)."""
    parts = [f"{amount} {name}" for name, amount in bundle.items() if amount]
    return " + ".join(parts) if parts else "-"


# --- a wildcard resource (Marco Polo II's jade pays any coin or camel of a cost) ------------------------------
def wildcard_shortfall(holdings: Bundle, cost: Bundle, covers: Iterable[str], times: int = 1) -> int:
    """How many units of the covered names `cost` x `times` asks beyond what `holdings` has of them."""
    return sum(max(0, cost.get(name, 0) * times - holdings.get(name, 0)) for name in covers)


def can_afford_with(
    holdings: Bundle, cost: Bundle, wildcard: str, covers: Iterable[str], times: int = 1
) -> bool:
    """Whether `holdings` covers `cost` x `times` when each missing unit of a `covers` name may be paid with
    one `wildcard` (on top of whatever the cost asks of the wildcard itself)."""
    covered = tuple(covers)
    for name, amount in cost.items():
        if name not in covered and name != wildcard and holdings.get(name, 0) < amount * times:
            return False
    need = cost.get(wildcard, 0) * times + wildcard_shortfall(holdings, cost, covered, times)
    return holdings.get(wildcard, 0) >= need


def pay_with(
    holdings: MutableMapping[str, int], cost: Bundle, wildcard: str, covers: Iterable[str], times: int = 1
) -> int:
    """Pay `cost` x `times`, the covered names first from their own stock and the rest with the wildcard;
    return the wildcard units spent as cover. Raise ValueError (changing nothing) if it cannot be paid."""
    covered = tuple(covers)
    if not can_afford_with(holdings, cost, wildcard, covered, times):
        raise ValueError(
            f"cannot pay {describe(cost)} x{times} from {describe(holdings)} ({wildcard} as wildcard)"
        )
    cover = 0
    for name, amount in cost.items():
        due = amount * times
        if name in covered:
            own = min(due, holdings.get(name, 0))
            holdings[name] = holdings.get(name, 0) - own
            cover += due - own
        else:
            holdings[name] = holdings.get(name, 0) - due
    holdings[wildcard] = holdings.get(wildcard, 0) - cover
    return cover


def max_times_with(holdings: Bundle, cost: Bundle, wildcard: str, covers: Iterable[str], cap: int) -> int:
    """How many times (at most `cap`) `cost` can be paid with the wildcard rule of `can_afford_with`."""
    covered = tuple(covers)
    best = 0
    for times in range(1, cap + 1):
        if not can_afford_with(holdings, cost, wildcard, covered, times):
            break
        best = times
    return best
