"""Pure game rules: one package per game, the engine contract (`base`), the registry and the chance RNG.

Nothing here imports Django or gRPC, reads the clock, or uses the global `random`.
"""

from engine_service.games.base import (
    Action,
    GameError,
    GameResult,
    GameSpec,
    GameState,
    IllegalAction,
    InvalidOptions,
    Progress,
)
from engine_service.games.registry import get_game, list_games, make, state_from_json

__all__ = [
    "Action",
    "GameError",
    "GameResult",
    "GameSpec",
    "GameState",
    "IllegalAction",
    "InvalidOptions",
    "Progress",
    "get_game",
    "list_games",
    "make",
    "state_from_json",
]
