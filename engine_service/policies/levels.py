"""The house levels: named strengths of the house bots, weakest first, and each search level's budget per game.

`random` < `greedy` < `search` < `search-strong`: the order is measured, not assumed, by seat-rotated seeded
two-player series in every game (`python -m bench strengths`, results in bench/results/strengths.json,
which says for each game which neighbouring pairs the series separate). `search` is the default search level: its budget keeps a decision at 50 ms
or less on average at four players (`python -m bench engine`); `search-strong` may take longer. A search
level is the `mcts` house bot with the settings below for the game, which override the game's own
`GameSpec.search_settings` (`mcts:N` keeps the older fixed-iteration bot for existing records).

Pure data and lookups: no Django, no I/O, no RNG.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LEVELS: tuple[str, ...] = ("random", "greedy", "search", "search-strong")  # weakest first
SEARCH_LEVELS: tuple[str, ...] = ("search", "search-strong")
# Policies (by name before any ":") that search and so decide in a search process, not a match thread.
SEARCHING_POLICIES: tuple[str, ...] = ("mcts", *SEARCH_LEVELS)

# Per level, per game family (a game id without its version): overrides of `MctsPolicy.DEFAULTS`.
# "Tree" is the ISMCTS with heuristic priors; "rollout" lets the best few one-step actions compete in
# greedy-policy simulations. The budgets come from the engine bench (time) and the strengths bench (order).
LEVEL_SETTINGS: Mapping[str, Mapping[str, Mapping[str, Any]]] = {
    "search": {
        "expedition": {"method": "tree", "iterations": 120},
        "voyages": {"method": "rollout", "iterations": 2, "candidates": 2, "horizon": 8},
        "mp2": {"method": "rollout", "iterations": 2, "candidates": 2, "horizon": 4},
        "dragonda": {"method": "rollout", "iterations": 10, "candidates": 2},
    },
    "search-strong": {
        "expedition": {"method": "tree", "iterations": 360},
        "voyages": {"method": "rollout", "iterations": 6, "candidates": 3, "horizon": 8},
        "mp2": {"method": "rollout", "iterations": 8, "candidates": 3, "horizon": 8},
        "dragonda": {"method": "rollout", "iterations": 24, "candidates": 2},
    },
}


@dataclass(frozen=True)
class HouseLevel:
    """Where a house policy stands: its level name and rank among `LEVELS` (None for other policies)."""

    policy: str
    level: str | None
    rank: int | None  # 1 = weakest

    @property
    def summary(self) -> str:
        """One sentence for people: the level and the measured order, or why the policy has no level."""
        order = " < ".join(LEVELS)
        if self.level is None:
            return (
                f"House bot playing '{self.policy}', outside the measured house levels ({order}); "
                "a fixed search budget kept for existing ladders and records."
            )
        return (
            f"House level '{self.level}', {_ordinal(self.rank or 0)} of {len(LEVELS)} by strength ({order}); "
            "seat-rotated seeded series measure it, and bench/results/strengths.json says which neighbours they "
            "tell apart in each game."
        )


def _ordinal(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def house_level(policy: str) -> HouseLevel:
    """The level of a house policy name (`search`; `mcts:25` and other policies have none)."""
    if policy in LEVELS:
        return HouseLevel(policy, policy, LEVELS.index(policy) + 1)
    return HouseLevel(policy, None, None)


def level_settings(level: str, game_id: str) -> Mapping[str, Any]:
    """The search settings of `level` for `game_id` (empty for a game without its own entry)."""
    if level not in LEVEL_SETTINGS:
        raise ValueError(f"unknown search level {level!r}; known: {', '.join(LEVEL_SETTINGS)}")
    family = game_id.rsplit("-v", 1)[0]
    return LEVEL_SETTINGS[level].get(family, {})
