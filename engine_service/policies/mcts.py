"""The `mcts` house bot: single-observer information-set Monte Carlo tree search (Cowling et al., 2012)
guided by the game's heuristic.

Every iteration draws a fresh determinisation from the bot's own observation (`GameSpec.sample_state`:
other hands and the deck order sampled consistently with what the seat knows), descends one shared tree
keyed by action ids, completes the last mover's compound turn greedily, plays a short random rollout and
scores the position with the game's heuristic: each seat's value minus its best rival's. It never reads the
true state.

Two things keep it strong when the heuristic's differences are small or the branching is wide:
- the root's actions get priors from a one-step look at the heuristic (what `greedy` would see), used with
  PUCT selection (AlphaZero-style), so with few visits it plays like greedy and the search corrects it;
- node values are normalised by the range of values in the tree (MuZero-style min-max), so the exploration
  constant means the same in every game whatever its scoring scale.
Below the root, selection is UCB1 over availability counts. The budget is a number of iterations, so its
play is deterministic for a seed. A game may tune the search with `GameSpec.search_settings` (for example
`guided=False`: plain ISMCTS with random expansion, sigmoid win-probability rewards and no turn completion).

`method="rollout"` replaces the tree by a rollout algorithm over the greedy policy, for games where a
100-iteration tree is too noisy to beat one-step greedy play (Marco Polo II, Dragonda): the best few actions
by one-step value are simulated with every seat playing greedily until the bot moves again, compared on the
same sampled states, and halved until one is left.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.games import Action, GameSpec, GameState, get_game
from engine_service.policies.base import Policy
from engine_service.policies.levels import level_settings


class _Node:
    __slots__ = ("available", "children", "total", "visits")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.visits = 0
        self.available = 0
        self.total = 0.0  # summed raw reward of the seat that chose the action leading here


class _Bounds:
    """The range of node values (mean rewards) in this tree, to normalise values into [0, 1]."""

    __slots__ = ("high", "low")

    def __init__(self) -> None:
        self.low = math.inf
        self.high = -math.inf

    def update(self, value: float) -> None:
        self.low = min(self.low, value)
        self.high = max(self.high, value)

    def normalise(self, value: float) -> float:
        if self.high - self.low < 1e-9:
            return 0.5
        return (value - self.low) / (self.high - self.low)


class MctsPolicy(Policy):
    name = "mcts"

    DEFAULTS: dict[str, Any] = {
        "iterations": 120,
        "rollout_depth": 4,
        "exploration": 0.7,
        "prior_weight": 1.0,
        "turn_steps": 8,
        "guided": True,  # root priors, normalised values and rival-relative rewards; False: plain ISMCTS
        "temperature": 2.0,  # plain ISMCTS only: the sigmoid's scale for heuristic rewards
        "method": "tree",  # "tree": the ISMCTS above; "rollout": greedy-policy rollouts over the best candidates
        "candidates": 6,  # rollout only: how many of the root's actions (best one-step value first) compete
        "horizon": 24,  # rollout only: at most this many decisions simulated after the bot's own turn
    }

    def __init__(self, seed: int = 0, level: str | None = None, **params: Any) -> None:
        """`params` override `DEFAULTS`, and take precedence over a house `level`'s settings for the game
        (`engine_service.policies.levels`), which take precedence over its `GameSpec.search_settings`."""
        super().__init__(seed)
        if level is not None:
            level_settings(level, "")  # an unknown level is refused here, not at the first decision
            self.name = level
        self.level = level
        unknown = sorted(set(params) - set(self.DEFAULTS))
        if unknown:
            raise ValueError(
                f"unknown mcts parameter(s) {', '.join(unknown)}; known: {', '.join(self.DEFAULTS)}"
            )
        self.explicit = dict(params)
        self._configure({})

    def _configure(self, game_settings: Mapping[str, Any]) -> None:
        settings = {**self.DEFAULTS, **game_settings, **self.explicit}
        self.iterations = int(settings["iterations"])
        self.rollout_depth = int(settings["rollout_depth"])
        self.exploration = float(settings["exploration"])
        self.prior_weight = float(settings["prior_weight"])
        self.turn_steps = int(settings["turn_steps"])
        self.guided = bool(settings["guided"])
        self.temperature = float(settings["temperature"])
        self.method = str(settings["method"])
        if self.method not in ("tree", "rollout"):
            raise ValueError(f"unknown mcts method {self.method!r}; known: tree, rollout")
        self.candidates = int(settings["candidates"])
        self.horizon = int(settings["horizon"])

    def choose(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> str:
        if len(legal_actions) == 1:
            return legal_actions[0].id
        spec = self._configured_for(observation)
        seat = int(observation["seat"])
        if self.method == "rollout":
            return self._choose_by_rollouts(spec, observation, seat, legal_actions)
        priors = self._priors(spec, observation, seat, legal_actions) if self.guided else None
        root = _Node()
        bounds = _Bounds()
        for _ in range(self.iterations):
            self._iterate(spec, observation, root, priors, bounds)
        return max(
            legal_actions,
            key=lambda a: (
                root.children[a.id].visits if a.id in root.children else -1,
                priors[a.id] if priors is not None else 0.0,
            ),
        ).id

    def evaluate(
        self,
        observation: Mapping[str, Any],
        legal_actions: Sequence[Action],
        *,
        include: Sequence[str] = (),
        samples: int | None = None,
    ) -> dict[str, float]:
        """The estimated value of the `candidates` best actions by one-step value and of every action in
        `include` (for a match analysis: the move played), each the mean over `samples` sampled states
        (`iterations` by default) of the rollout measure: the seat's heuristic minus its best rival's after
        greedy play until it moves again. Every action is simulated on the same sampled states, and only the
        seat's observation is read, whatever the level's method."""
        spec = self._configured_for(observation)
        seat = int(observation["seat"])
        values = self._one_step_values(spec, observation, seat, legal_actions)
        best = sorted(values, key=lambda a: -values[a])[: max(1, self.candidates)]
        actions = list(dict.fromkeys([*best, *include]))
        count = max(1, self.iterations if samples is None else samples)
        totals = self._rollout_totals(spec, observation, seat, actions, count)
        return {action_id: total / count for action_id, total in totals.items()}

    def _configured_for(self, observation: Mapping[str, Any]) -> GameSpec:
        """The observation's game, with this policy's settings for it (level over the game's own)."""
        spec = get_game(str(observation["game_id"]))
        if self.level is None:
            self._configure(spec.search_settings)
        else:
            self._configure({**spec.search_settings, **level_settings(self.level, spec.game_id)})
        return spec

    def _rollout_totals(
        self, spec: GameSpec, observation: Mapping[str, Any], seat: int, actions: Sequence[str], samples: int
    ) -> dict[str, float]:
        """Each action's summed `_simulate` value over `samples` sampled states, all on the same ones."""
        totals = dict.fromkeys(actions, 0.0)
        for _ in range(samples):
            base = spec.sample_state(observation, self.rng)
            for action_id in actions:
                state = base.clone()
                state.apply(seat, action_id)
                totals[action_id] += self._simulate(spec, state, seat)
        return totals

    def _one_step_values(
        self, spec: GameSpec, observation: Mapping[str, Any], seat: int, legal_actions: Sequence[Action]
    ) -> dict[str, float]:
        """What `greedy` sees: the heuristic after each legal action, on one sampled state."""
        base = spec.sample_state(observation, self.rng)
        values = {}
        for action in legal_actions:
            trial = base.clone()
            trial.apply(seat, action.id)
            values[action.id] = spec.heuristic(trial, seat)
        return values

    def _choose_by_rollouts(
        self, spec: GameSpec, observation: Mapping[str, Any], seat: int, legal_actions: Sequence[Action]
    ) -> str:
        """A rollout algorithm over the greedy policy (Bertsekas): the `candidates` actions with the best
        one-step values compete by sequential halving (Karnin et al., 2013). Each simulation applies the
        action on a sampled state, completes the bot's turn greedily, lets every seat play greedily until the
        bot is to move again (at most `horizon` decisions) and scores the bot's value minus its best rival's.
        Every candidate of a round is simulated on the same sampled states (same hidden cards, same dice), so
        they are compared on equal luck and every one is judged at the same moment of the game."""
        values = self._one_step_values(spec, observation, seat, legal_actions)
        order = sorted(values, key=lambda a: -values[a])
        alive = order[: max(1, self.candidates)]
        totals = dict.fromkeys(alive, 0.0)
        rounds = max(1, len(alive).bit_length() - 1)  # halvings until one is left
        while len(alive) > 1:
            samples = max(1, self.iterations // (rounds * len(alive)))
            for action_id, total in self._rollout_totals(spec, observation, seat, alive, samples).items():
                totals[action_id] += total
            # Ties keep the better one-step value (the order of `alive`).
            alive = sorted(alive, key=lambda a: -totals[a])[: max(1, len(alive) // 2)]
        return alive[0]

    def _simulate(self, spec: GameSpec, state: GameState, seat: int) -> float:
        self._finish_turn(spec, state, seat, steps=max(self.turn_steps, self.horizon))
        for _ in range(self.horizon):
            if state.is_over() or state.current_seats()[0] == seat:
                break
            actor = state.current_seats()[0]
            state.apply(actor, self._greedy_action(spec, state, actor).id)
        values = [spec.heuristic(state, s) for s in range(state.num_players)]
        return values[seat] - max(values[o] for o in range(state.num_players) if o != seat)

    def _priors(
        self, spec: GameSpec, observation: Mapping[str, Any], seat: int, legal_actions: Sequence[Action]
    ) -> dict[str, float]:
        """A softmax of the one-step heuristic over the root's actions (its temperature set by their spread),
        mixed half and half with a uniform prior."""
        values = self._one_step_values(spec, observation, seat, legal_actions)
        best, worst = max(values.values()), min(values.values())
        temperature = max((best - worst) / 2, 1e-6)
        weights = {a: math.exp((v - best) / temperature) for a, v in values.items()}
        total = sum(weights.values())
        uniform = 1 / len(values)
        # Half uniform: narrow decisions are still explored fully; wide ones follow the heuristic first.
        return {a: 0.5 * w / total + 0.5 * uniform for a, w in weights.items()}

    def _iterate(
        self,
        spec: GameSpec,
        observation: Mapping[str, Any],
        root: _Node,
        priors: dict[str, float] | None,
        bounds: _Bounds,
    ) -> None:
        state = spec.sample_state(observation, self.rng)
        node = root
        path: list[tuple[_Node, int]] = []
        while not state.is_over():
            actor = state.current_seats()[0]
            actions = state.legal_actions(actor)
            for action in actions:
                child = node.children.get(action.id)
                if child is not None:
                    child.available += 1
            if node is root and priors is not None:
                action = max(actions, key=lambda a: self._puct(root, a.id, priors, bounds))
            else:
                untried = [a for a in actions if a.id not in node.children]
                if untried:
                    action = self.rng.choice(untried)
                else:
                    log_total = math.log(max(1, node.visits))
                    action = max(actions, key=lambda a: self._ucb(node.children[a.id], log_total, bounds))
            child = node.children.get(action.id)
            expanded = child is None
            if child is None:
                child = node.children[action.id] = _Node()
                child.available = 1
            state.apply(actor, action.id)
            path.append((child, actor))
            node = child
            if expanded:
                break
        if path and self.turn_steps:
            self._finish_turn(spec, state, path[-1][1])
        self._rollout(state)
        rewards = self._rewards(spec, state)
        root.visits += 1
        for visited, actor in path:
            visited.visits += 1
            visited.total += rewards[actor]
            bounds.update(visited.total / visited.visits)

    def _puct(self, root: _Node, action_id: str, priors: dict[str, float], bounds: _Bounds) -> float:
        child = root.children.get(action_id)
        visits = child.visits if child is not None else 0
        value = bounds.normalise(child.total / visits) if child is not None and visits else 0.0
        return value + self.prior_weight * priors[action_id] * math.sqrt(root.visits + 1) / (1 + visits)

    def _ucb(self, child: _Node, log_total: float, bounds: _Bounds) -> float:
        if child.visits == 0:
            return math.inf
        value = child.total / child.visits
        return (bounds.normalise(value) if self.guided else value) + self.exploration * math.sqrt(
            math.log(max(1, child.available)) / child.visits
        )

    def _finish_turn(self, spec: GameSpec, state: GameState, actor: int, steps: int | None = None) -> None:
        """Complete `actor`'s compound turn greedily (a placement is only as good as the choices that follow
        it), at most `steps` decisions (`turn_steps` unless given)."""
        for _ in range(self.turn_steps if steps is None else steps):
            if state.is_over() or state.current_seats()[0] != actor:
                return
            state.apply(actor, self._greedy_action(spec, state, actor).id)

    @staticmethod
    def _greedy_action(spec: GameSpec, state: GameState, actor: int) -> Action:
        """The actor's legal action with the best heuristic value one step ahead (the first on ties)."""
        actions = state.legal_actions(actor)
        if len(actions) == 1:
            return actions[0]
        best, best_value = actions[0], -math.inf
        for action in actions:
            trial = state.clone()
            trial.apply(actor, action.id)
            value = spec.heuristic(trial, actor)
            if value > best_value:
                best, best_value = action, value
        return best

    def _rollout(self, state: GameState) -> None:
        for _ in range(self.rollout_depth):
            if state.is_over():
                return
            actor = state.current_seats()[0]
            state.apply(actor, self.rng.choice(state.legal_actions(actor)).id)

    def _rewards(self, spec: GameSpec, state: GameState) -> list[float]:
        """Guided: each seat's heuristic value minus its best rival's (raw; normalised at selection).
        Plain: the rank at the end, else a win probability against the best rival (a sigmoid)."""
        n = state.num_players
        if not self.guided and state.is_over():
            ranks = state.result().ranks
            return [1.0 - (ranks[s] - 1) / max(1, n - 1) for s in range(n)]
        values = [spec.heuristic(state, s) for s in range(n)]
        margins = [values[s] - max(values[o] for o in range(n) if o != s) for s in range(n)]
        if self.guided:
            return margins
        return [1.0 / (1.0 + math.exp(-m / self.temperature)) for m in margins]
