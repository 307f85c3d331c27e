"""Training tools over the engine: PettingZoo and Gymnasium environments for every game, the stable
action space, the observation encoding and the per-decision dataset rows.

Engine layer: imports the games, the referee's records and the policies, and the optional `envs` extra
(numpy, gymnasium, pettingzoo, pyarrow); never Django or gRPC. The names below load on first use, so
`engine_service.envs.dataset` (which the ladder's export uses) needs none of the extra.
Install the extra with `pip install -e '.[envs]'`.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ActionSpace": "action_space",
    "ActionSpaceError": "action_space",
    "CaravanEnv": "aec",
    "env": "aec",
    "placing_reward": "aec",
    "encode_observation": "encoding",
    "SeatEnv": "single",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
