"""The protocol's JSON (`protocol.dumps`, orjson with the standard encoder behind it) writes the very text
`json.dumps(..., separators=(",", ":"))` does for what every game sends a bot: observations and the legal
actions' details along random matches; and for what orjson alone would write otherwise (non-ASCII text,
integers over 64 bits, non-string keys) or refuse (types that are not JSON)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from engine_service.games import list_games, make
from engine_service.gateway.protocol import dumps
from engine_service.policies import make_policy

STEPS = 120  # decisions checked per game


def standard(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


@pytest.mark.parametrize("game_id", [spec.game_id for spec in list_games()])
def test_what_a_game_sends_a_bot_is_written_as_the_standard_encoder_writes_it(game_id: str) -> None:
    spec = next(s for s in list_games() if s.game_id == game_id)
    for players in sorted({spec.min_players, spec.max_players}):
        state = make(game_id, players, 11)
        policy = make_policy("random", 5)
        for _ in range(STEPS):
            if state.is_over():
                break
            seat = state.current_seats()[0]
            observation, legal = state.observation(seat), state.legal_actions(seat)
            assert dumps(observation) == standard(observation)
            for action in legal:
                assert dumps(dict(action.details)) == standard(dict(action.details))
            state.apply(seat, policy.choose(observation, legal))


def test_text_orjson_would_write_otherwise_is_the_standard_encoders() -> None:
    for data in (
        {"city": "Kaşgar ☾"},
        {"big": 2**70, "small": -(2**70)},
        {1: "a", 2.5: "b", False: "c", None: "d"},
    ):
        assert dumps(data) == standard(data)


@dataclasses.dataclass
class Piece:
    space: int


@pytest.mark.parametrize("value", [Piece(3), {1, 2}, b"bytes", object()])
def test_what_is_not_json_is_refused_with_the_standard_message(value: Any) -> None:
    with pytest.raises(TypeError, match=f"Object of type {type(value).__name__} is not JSON serializable"):
        dumps({"x": value})
