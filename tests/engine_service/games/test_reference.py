"""Every game's reference for bot authors (`GameSpec.reference()`, its `data/reference.json`) holds for
random games of every game, player count and option variant: every observation (each seat's, the
spectator's, hidden and revealed) validates against the observation schema, every legal action's kind is
documented, its id matches the kind's pattern and its details the kind's schema, ids have no spaces and no
id is shared by two kinds, and every field of every schema is described. A field added to a view without
its description fails here.

The random games sample: one seed (REFERENCE_SEEDS) for every game, player count and option variant. The
full series, many seeds of each, is `python -m bench conformance` (bench/bench_conformance.py)."""

from __future__ import annotations

import re
from typing import Any

import jsonschema_rs  # compiled (Rust), the same draft: fast enough to validate every step of every game
import pytest
from jsonschema import Draft202012Validator

from engine_service.games import get_game, list_games, make
from engine_service.games.rng import ChanceRng
from tests.engine_service.games.test_conformance import CONFIGS, _config_id

GAMES = [spec.game_id for spec in list_games()]
REFERENCE_SEEDS = (2,)  # the suite's sample of seeds; bench/bench_conformance.py plays many


def _undescribed(schema: Any, path: str = "$") -> list[str]:
    """Paths of schema nodes that name fields without a description, or objects open to any field."""
    if not isinstance(schema, dict):
        return []
    missing = []
    if schema.get("type") == "object" or "properties" in schema:
        if "additionalProperties" not in schema and "patternProperties" not in schema:
            missing.append(f"{path} (an object open to undescribed fields)")
        for name, sub in schema.get("properties", {}).items():
            if not (isinstance(sub, dict) and sub.get("description")):
                missing.append(f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        missing += _undescribed(schema.get(key), f"{path}[]" if key == "items" else f"{path}{{}}")
    for name, sub in schema.get("properties", {}).items():
        missing += _undescribed(sub, f"{path}.{name}")
    for sub in schema.get("patternProperties", {}).values():
        missing += _undescribed(sub, f"{path}{{}}")
    for key in ("oneOf", "anyOf", "allOf"):
        for sub in schema.get(key, []):
            missing += _undescribed(sub, path)
    return missing


@pytest.mark.parametrize("game_id", GAMES)
def test_the_reference_describes_every_field_and_action_kind(game_id: str) -> None:
    reference = get_game(game_id).reference()
    assert reference is not None, f"{game_id} has no data/reference.json"
    Draft202012Validator.check_schema(reference["observation"])
    assert _undescribed(reference["observation"]) == []
    assert reference["first_action"] and reference["actions"]
    for kind, doc in reference["actions"].items():
        assert doc["description"] and doc["grammar"] and doc["examples"], kind
        Draft202012Validator.check_schema(doc["details"])
        assert _undescribed(doc["details"], kind) == []
        for example in doc["examples"]:
            assert _matches(doc["id"], example), f"{kind}: example {example!r} does not match {doc['id']}"


def _matches(pattern: str, action_id: str) -> bool:
    return re.fullmatch(pattern, action_id) is not None


@pytest.fixture(params=CONFIGS, ids=[_config_id(*c) for c in CONFIGS])
def config(request: pytest.FixtureRequest) -> tuple[str, int, dict[str, Any]]:
    return request.param


def test_random_games_follow_the_reference(config: tuple[str, int, dict[str, Any]]) -> None:
    kind_of_id: dict[str, str] = {}
    for seed in REFERENCE_SEEDS:
        check_random_game_against_reference(config, seed, kind_of_id)


def check_random_game_against_reference(
    config: tuple[str, int, dict[str, Any]], seed: int, kind_of_id: dict[str, str]
) -> None:
    """Play the random game of `seed`, checking every step's views and legal actions against the
    reference; `kind_of_id` (id -> kind) carries the ids seen across games, so no id is two kinds."""
    game_id, n, options = config
    reference = get_game(game_id).reference()
    assert reference is not None
    observation = jsonschema_rs.Draft202012Validator(reference["observation"])
    details = {
        kind: jsonschema_rs.Draft202012Validator(doc["details"]) for kind, doc in reference["actions"].items()
    }
    id_patterns = {kind: re.compile(doc["id"]) for kind, doc in reference["actions"].items()}
    state = make(game_id, n, seed, options)
    rng = ChanceRng(seed)
    while True:
        # one seat's observation per step, in turn, and the spectator's: every seat is seen often
        views = [state.observation((state.step + seed) % n), state.spectator_view(reveal=False)]
        for view in views:
            errors = [
                f"{'/'.join(map(str, e.instance_path))}: {e.message}" for e in observation.iter_errors(view)
            ]
            assert errors == [], f"step {state.step}: {errors[:5]}"
        if state.is_over():
            revealed = state.spectator_view(reveal=True)
            assert list(observation.iter_errors(revealed)) == []
            break
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        for action in legal:
            assert action.kind in reference["actions"], f"undocumented action kind {action.kind}"
            pattern = id_patterns[action.kind]
            assert " " not in action.id and pattern.fullmatch(action.id), (action.kind, action.id)
            assert list(details[action.kind].iter_errors(dict(action.details))) == [], action.to_json()
            assert kind_of_id.setdefault(action.id, action.kind) == action.kind, (
                f"id {action.id!r} is both {kind_of_id[action.id]} and {action.kind}"
            )
        state.apply(seat, rng.choice(legal).id)
