"""The `greedy` house bot: the action whose immediate result the game's heuristic likes best.

It samples one state consistent with its observation (`GameSpec.sample_state`), tries every legal action on
it and keeps the best by `GameSpec.heuristic` for its own seat; ties are broken at random. A subclass may
judge by another evaluation (`evaluate`), as the benches do with a previous heuristic kept frozen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.games import Action, GameSpec, GameState, get_game
from engine_service.policies.base import Policy


class GreedyPolicy(Policy):
    name = "greedy"

    def choose(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> str:
        if len(legal_actions) == 1:
            return legal_actions[0].id
        spec = get_game(str(observation["game_id"]))
        seat = int(observation["seat"])
        base = spec.sample_state(observation, self.rng)
        best: list[str] = []
        best_value = float("-inf")
        for action in legal_actions:
            trial = base.clone()
            trial.apply(seat, action.id)
            value = self.evaluate(spec, trial, seat)
            if value > best_value + 1e-9:
                best, best_value = [action.id], value
            elif abs(value - best_value) <= 1e-9:
                best.append(action.id)
        return self.rng.choice(best)

    def evaluate(self, spec: GameSpec, state: GameState, seat: int) -> float:
        """How much `seat` likes `state`: the game's heuristic."""
        return spec.heuristic(state, seat)
