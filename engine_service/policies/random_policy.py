"""The `random` house bot: a uniformly random legal action."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.games import Action
from engine_service.policies.base import Policy


class RandomPolicy(Policy):
    name = "random"

    def choose(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> str:
        return self.rng.choice(legal_actions).id
