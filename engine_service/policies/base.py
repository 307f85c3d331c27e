"""The house-bot interface and the factory of house bots by name.

A policy sees one seat's observation (JSON) and the legal actions, never the game state. Its randomness is
its own seeded `ChanceRng`, so a match of house bots is deterministic given the match seed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.games import Action
from engine_service.games.rng import ChanceRng
from engine_service.policies.levels import LEVELS, SEARCH_LEVELS


class Policy(ABC):
    name: str = "policy"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = ChanceRng(seed)

    def reset(self, game_id: str, seat: int) -> None:  # noqa: B027 - optional hook
        """Called at the start of each match."""

    @abstractmethod
    def choose(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> str:
        """One legal action id."""


def policy_names() -> list[str]:
    """The house levels, weakest first, then the fixed-budget search (`mcts`, `mcts:N`)."""
    return [*LEVELS, "mcts"]


def make_policy(name: str, seed: int = 0, **params: Any) -> Policy:
    """A house bot by name: a level (`random`, `greedy`, `search`, `search-strong`; see
    `engine_service.policies.levels`) or `mcts` (`mcts:200` sets the iteration budget)."""
    from engine_service.policies.greedy import GreedyPolicy
    from engine_service.policies.mcts import MctsPolicy
    from engine_service.policies.random_policy import RandomPolicy

    base, _, arg = name.partition(":")
    if base == "random" and not arg:
        return RandomPolicy(seed)
    if base == "greedy" and not arg:
        return GreedyPolicy(seed)
    if base in SEARCH_LEVELS and not arg:
        return MctsPolicy(seed, level=base, **params)
    if base == "mcts":
        if arg:
            if not arg.isdigit() or int(arg) < 1:
                raise ValueError(f"mcts budget must be a positive number of iterations, not {arg!r}")
            params["iterations"] = int(arg)
        return MctsPolicy(seed, **params)
    raise ValueError(f"unknown house bot {name!r}; known: {', '.join(policy_names())} (mcts:N for a budget)")
