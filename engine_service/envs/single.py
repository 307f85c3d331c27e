"""A Gymnasium single-agent environment: one seat of a game, the other seats played by house bots.

Engine layer: imports the games, the house policies and this package; no Django, no gRPC, no clock. The
house bots decide from their own seat's observation and legal actions (as the referee's house seats do),
seeded from the episode's seed, so an episode is deterministic given `reset(seed=...)`. Observations,
actions and the final reward are `aec.CaravanEnv`'s (the learner's own observation only; reward the
final placing in [-1, 1]).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium

from engine_service.envs.aec import CaravanEnv, ObsDict, agent_name
from engine_service.policies.base import Policy, make_policy

OPPONENT_SEED_STRIDE = 7919  # house seat s of an episode with seed x plays with seed x * stride + s


class SeatEnv(gymnasium.Env[ObsDict, int]):
    """Play `seat` of `game_id` against `opponents` (house levels, one per other seat in seat order, or
    one level for all: `random`, `greedy`, `search`, `search-strong`)."""

    metadata = {"render_modes": ["ansi", "human"]}

    def __init__(
        self,
        game_id: str,
        num_players: int = 2,
        *,
        seat: int = 0,
        opponents: str | Sequence[str] = "random",
        options: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
        max_steps: int | None = None,
    ) -> None:
        if not 0 <= seat < num_players:
            raise ValueError(f"seat {seat} is not one of 0-{num_players - 1}")
        others = num_players - 1
        levels = [opponents] * others if isinstance(opponents, str) else list(opponents)
        if len(levels) != others:
            raise ValueError(f"{others} opponents are needed for {num_players} players, not {len(levels)}")
        self.game = CaravanEnv(game_id, num_players, options, render_mode=render_mode, max_steps=max_steps)
        self.seat = seat
        self.agent = agent_name(seat)
        self.levels = levels
        self.render_mode = render_mode
        self.observation_space = self.game.observation_space(self.agent)
        self.action_space = self.game.action_space(self.agent)
        self._policies: dict[str, Policy] = {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsDict, dict[str, Any]]:
        super().reset(seed=seed)
        self.game.reset(seed=seed)
        base = self.game.game_seed
        others = [s for s in range(self.game.num_players) if s != self.seat]
        self._policies = {}
        for level, s in zip(self.levels, others, strict=True):
            policy = make_policy(level, seed=(base * OPPONENT_SEED_STRIDE + s) % 2**63)
            policy.reset(self.game.game_spec.game_id, s)
            self._policies[agent_name(s)] = policy
        self._play_opponents()
        return self.game.observe(self.agent), self._info()

    def step(self, action: int) -> tuple[ObsDict, float, bool, bool, dict[str, Any]]:
        if self._over():
            raise RuntimeError("the episode is over: call reset()")
        self.game.step(int(action))
        self._play_opponents()
        reward = float(self.game.rewards.get(self.agent, 0.0))
        terminated = self.game.terminations[self.agent]
        truncated = self.game.truncations[self.agent]
        return self.game.observe(self.agent), reward, terminated, truncated, self._info()

    def action_masks(self) -> Any:
        """The legal-action mask now (the convention of maskable learners)."""
        return self.game.observe(self.agent)["action_mask"]

    def render(self) -> str | None:
        return self.game.render()

    def _play_opponents(self) -> None:
        while not self._over() and self.game.agent_selection != self.agent:
            agent = self.game.agent_selection
            legal = self.game.legal_actions(agent)
            chosen = self._policies[agent].choose(self.game.observation_json(agent), legal)
            self.game.step(self.game.space.index(legal, chosen))

    def _over(self) -> bool:
        return self.game.terminations[self.agent] or self.game.truncations[self.agent]

    def _info(self) -> dict[str, Any]:
        info = dict(self.game.infos.get(self.agent, {}))
        info["legal_ids"] = [a.id for a in self.game.legal_actions(self.agent)] if not self._over() else []
        return info
