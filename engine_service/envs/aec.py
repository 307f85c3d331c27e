"""Each game as a PettingZoo `AECEnv`: the same engine and legal actions as the referee, one seat at a time.

Engine layer: imports the games and this package's action space and encoding (numpy, gymnasium and
pettingzoo: the optional `envs` extra); no Django, no gRPC, no clock. It must never show a seat anything
but its own observation: `observe(agent)` encodes `GameState.observation(seat)` only, and `render` draws
the public spectator view (every hand hidden until the game ends).

- Agents `seat_0` ... `seat_{n-1}`; the agent to act is the referee's: `current_seats()[0]`.
- `observe(agent)`: `{"observation": float32[obs_size], "action_mask": int8[action space size]}`
  (`encoding.encode_observation` of that seat's observation; the mask is all zeros when it is not that
  seat's turn). `action_space(agent)`: `Discrete(n)` over `action_space.ActionSpace` of the game.
- Rewards: 0 until the game ends, then each seat's final placing in [-1, 1]: first +1, last -1, linear
  between, tied seats the mean of the places they share (`placing_reward`); `infos[agent]["result"]` then
  holds the seat's rank and score. A game ends by its own rules (and turn caps): `terminations`.
  `max_steps` (optional) truncates a game after that many decisions: `truncations`, rewards 0.
- Seeds: `reset(seed=s)` plays the game the referee plays with match seed `s`; no seed draws one at random.
  Game options are the constructor's (`options=` of `reset` is accepted and ignored, as PettingZoo asks).
- `observation_json(agent)` and `legal_actions(agent)` give the raw JSON and the `Action`s, for code that
  wants them (the dataset's rows are that JSON).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv

from engine_service.envs.action_space import ActionSpace, action_space
from engine_service.envs.encoding import DEFAULT_SIZE, FloatVector, encode_observation
from engine_service.games import Action, GameState
from engine_service.games.base import GameResult
from engine_service.games.registry import get_game

ObsDict = dict[str, Any]
RENDER_MODES = ("ansi", "human")


def agent_name(seat: int) -> str:
    return f"seat_{seat}"


def placing_reward(result: GameResult, seat: int) -> float:
    """+1 for first, -1 for last, linear between; tied seats share the mean of the places they cover."""
    count = len(result.ranks)
    if count < 2:
        return 0.0
    rank = result.ranks[seat]
    tied = sum(1 for other in result.ranks if other == rank)
    place = rank - 1 + (tied - 1) / 2  # 0-based mean place of the tied group
    return 1.0 - 2.0 * place / (count - 1)


class CaravanEnv(AECEnv[str, ObsDict, int | None]):  # type: ignore[misc]  # pettingzoo ships no types
    """One game, player count and option set as an AEC environment (see the module docstring)."""

    metadata: dict[str, Any] = {
        "render_modes": list(RENDER_MODES),
        "name": "caravanserai",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        game_id: str,
        num_players: int,
        options: Mapping[str, Any] | None = None,
        *,
        render_mode: str | None = None,
        max_steps: int | None = None,
        obs_size: int = DEFAULT_SIZE,
    ) -> None:
        super().__init__()
        self.game_spec = get_game(game_id)
        self.num_players = num_players
        self.game_options = self.game_spec.resolve_options(options, num_players)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode {render_mode!r} is not one of {', '.join(RENDER_MODES)}")
        self.render_mode = render_mode
        self.max_steps = max_steps
        self.obs_size = obs_size
        self.space: ActionSpace = action_space(game_id)
        self.metadata = {**self.metadata, "name": f"caravanserai-{game_id}"}
        self.possible_agents = [agent_name(s) for s in range(num_players)]
        self._seat = {name: s for s, name in enumerate(self.possible_agents)}
        self._action_space: gymnasium.spaces.Space[Any] = gymnasium.spaces.Discrete(self.space.size)
        self._observation_space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(-np.inf, np.inf, (obs_size,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (self.space.size,), np.int8),
            }
        )
        self.game_state: GameState | None = None

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self._observation_space

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self._action_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
        self.game_seed = seed
        self.game_state = self.game_spec.new_state(self.num_players, seed, self.game_options)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.decisions = 0
        self.agent_selection = agent_name(self.game_state.current_seats()[0])

    def observe(self, agent: str) -> ObsDict:
        state = self._game()
        seat = self._seat[agent]
        mask = np.zeros(self.space.size, dtype=np.int8)
        if not state.is_over() and agent == self.agent_selection and agent in self.agents:
            mask[self.space.legal_indices(state.legal_actions(seat))] = 1
        vector: FloatVector = encode_observation(state.observation(seat), self.obs_size)
        return {"observation": vector, "action_mask": mask}

    def observation_json(self, agent: str) -> dict[str, Any]:
        """The seat's own observation as the game gives it (JSON)."""
        return self._game().observation(self._seat[agent])

    def legal_actions(self, agent: str) -> list[Action]:
        """The seat's legal actions now (empty when it is not to decide)."""
        return list(self._game().legal_actions(self._seat[agent]))

    def action_index(self, agent: str, action_id: str) -> int:
        """The index of one of the seat's legal action ids."""
        return self.space.index(self.legal_actions(agent), action_id)

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._game()
        seat = self._seat[agent]
        if action is None:
            raise ValueError(f"{agent} is to act: None is only for a seat whose game is over")
        state.apply(seat, self.space.action_id(state.legal_actions(seat), int(action)))
        self.decisions += 1
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if state.is_over():
            self._finish(state.result())
        elif self.max_steps is not None and self.decisions >= self.max_steps:
            self.truncations = {a: True for a in self.agents}
        else:
            self.agent_selection = agent_name(state.current_seats()[0])
        self._accumulate_rewards()

    def _finish(self, result: GameResult) -> None:
        for agent in self.agents:
            seat = self._seat[agent]
            self.rewards[agent] = placing_reward(result, seat)
            self.terminations[agent] = True
            self.infos[agent] = {
                "result": {"rank": result.ranks[seat], "score": result.scores[seat], "reason": result.reason}
            }

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: pass render_mode='ansi' or 'human'")
            return None
        state = self._game()
        text = self.game_spec.render_view(state.spectator_view(reveal=state.is_over()))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.game_state = None

    def _game(self) -> GameState:
        if self.game_state is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game_state


def env(
    game_id: str, num_players: int, options: Mapping[str, Any] | None = None, **kwargs: Any
) -> CaravanEnv:
    """The environment of one game, player count and option set (PettingZoo's `env()` convention)."""
    return CaravanEnv(game_id, num_players, options, **kwargs)
