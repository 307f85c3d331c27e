"""The `mcts` house bot: single-observer information-set Monte Carlo tree search (Cowling et al., 2012).

Every iteration draws a fresh determinisation from the bot's own observation (`GameSpec.sample_state`:
other hands and the deck order sampled consistently with what the seat knows), descends one shared tree
keyed by action ids with UCB1 over availability counts, plays a short random rollout and scores the
position with the game's heuristic (a win probability against the best opponent). It never reads the true
state. The budget is a number of iterations, so its play is deterministic for a seed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.games import Action, GameSpec, GameState, get_game
from engine_service.policies.base import Policy


class _Node:
    __slots__ = ("available", "children", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.visits = 0
        self.available = 0
        self.total = 0.0  # summed reward of the seat that chose the action leading here


class MctsPolicy(Policy):
    name = "mcts"

    def __init__(
        self,
        seed: int = 0,
        *,
        iterations: int = 120,
        rollout_depth: int = 6,
        exploration: float = 0.7,
        temperature: float = 2.0,
    ) -> None:
        super().__init__(seed)
        self.iterations = iterations
        self.rollout_depth = rollout_depth
        self.exploration = exploration
        self.temperature = temperature

    def choose(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> str:
        if len(legal_actions) == 1:
            return legal_actions[0].id
        spec = get_game(str(observation["game_id"]))
        root = _Node()
        for _ in range(self.iterations):
            self._iterate(spec, observation, root)
        best = max(legal_actions, key=lambda a: root.children[a.id].visits if a.id in root.children else -1)
        return best.id

    def _iterate(self, spec: GameSpec, observation: Mapping[str, Any], root: _Node) -> None:
        state = spec.sample_state(observation, self.rng)
        node = root
        path: list[tuple[_Node, int]] = []
        while not state.is_over():
            actor = state.current_seats()[0]
            actions = state.legal_actions(actor)
            untried = [a for a in actions if a.id not in node.children]
            for action in actions:
                child = node.children.get(action.id)
                if child is not None:
                    child.available += 1
            if untried:
                action = self.rng.choice(untried)
                child = _Node()
                child.available = 1
                node.children[action.id] = child
                state.apply(actor, action.id)
                path.append((child, actor))
                break
            log_total = math.log(max(1, node.visits))
            action = max(actions, key=lambda a: self._ucb(node.children[a.id], log_total))
            node = node.children[action.id]
            state.apply(actor, action.id)
            path.append((node, actor))
        self._rollout(state)
        rewards = self._rewards(spec, state)
        root.visits += 1
        for visited, actor in path:
            visited.visits += 1
            visited.total += rewards[actor]

    def _ucb(self, child: _Node, log_total: float) -> float:
        if child.visits == 0:
            return float("inf")
        return child.total / child.visits + self.exploration * math.sqrt(
            math.log(max(1, child.available)) / child.visits
        )

    def _rollout(self, state: GameState) -> None:
        for _ in range(self.rollout_depth):
            if state.is_over():
                return
            actor = state.current_seats()[0]
            state.apply(actor, self.rng.choice(state.legal_actions(actor)).id)

    def _rewards(self, spec: GameSpec, state: GameState) -> list[float]:
        n = state.num_players
        if state.is_over():
            ranks = state.result().ranks
            return [1.0 - (ranks[s] - 1) / max(1, n - 1) for s in range(n)]
        values = [spec.heuristic(state, s) for s in range(n)]
        rewards = []
        for s in range(n):
            rival = max(values[o] for o in range(n) if o != s)
            rewards.append(1.0 / (1.0 + math.exp(-(values[s] - rival) / self.temperature)))
        return rewards
