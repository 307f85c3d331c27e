"""The registry of versioned game ids (`expedition-v1`, ...) and the `make` factory.

Pure: no Django, no I/O. A game joins by being listed in `_GAME_MODULES`; its module defines `SPEC`.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping
from typing import Any

from engine_service.games.base import GameSpec, GameState, InvalidOptions

_GAME_MODULES = (
    "engine_service.games.expedition",
    "engine_service.games.voyages",
    "engine_service.games.dragonda",
    "engine_service.games.mp2",
)

_specs: dict[str, GameSpec] | None = None
_loading = threading.Lock()


def _load() -> dict[str, GameSpec]:
    """Every game's spec, loaded once; threads that ask meanwhile wait for the whole table (a bot deciding
    several matches at once must never see a half-filled one)."""
    global _specs
    if _specs is None:
        with _loading:
            if _specs is None:
                loaded: dict[str, GameSpec] = {}
                for module_name in _GAME_MODULES:
                    spec: GameSpec = importlib.import_module(module_name).SPEC
                    loaded[spec.game_id] = spec
                _specs = loaded
    return _specs


def list_games() -> list[GameSpec]:
    return sorted(_load().values(), key=lambda spec: spec.game_id)


def game_ids() -> list[str]:
    return [spec.game_id for spec in list_games()]


def get_game(game_id: str) -> GameSpec:
    specs = _load()
    if game_id not in specs:
        raise InvalidOptions(f"unknown game {game_id!r}; known games: {', '.join(sorted(specs))}")
    return specs[game_id]


def make(game_id: str, num_players: int, seed: int, options: Mapping[str, Any] | None = None) -> GameState:
    """Make a new game: the one entry point the referee, bots and tests use."""
    return get_game(game_id).new_state(num_players, seed, options)


def state_from_json(data: Mapping[str, Any]) -> GameState:
    return get_game(str(data["game_id"])).state_from_json(data)
