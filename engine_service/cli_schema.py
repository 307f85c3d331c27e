"""`caravan schema <game>`: a game's reference bundle for bot authors, offline, the very object the ladder
serves at `/api/v1/games/<game>/schema/` (both come from `GameSpec.reference()`, one implementation).

The bundle is a JSON object, not one JSON Schema. Its members:
- `game_id`: the versioned game id;
- `first_action`: which legal action is always safe (the referee's fallback), in words;
- `decisions`: how a turn splits into decisions, in words;
- `observation`: the JSON Schema (draft 2020-12) of an observation, every field described;
- `actions`: per action kind, `description`, `id` (the id's regular expression), `grammar`, `examples`
  and `details` (the JSON Schema of that kind's `details_json`).
`--member observation` (or `actions.move.details`, any dotted path) prints one member alone, e.g. a schema
to hand to a validator.

Layer: a command-line front over engine_service.games; pure: no Django, no gRPC, no I/O but stdout.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from engine_service.games import get_game

MEMBERS = ("game_id", "first_action", "decisions", "observation", "actions")


class SchemaError(Exception):
    """A game without a reference, or a member it does not have; the message says which."""


def reference_bundle(game_id: str) -> dict[str, Any]:
    """The reference bundle of `game_id` (`GameError` naming the known games when unknown)."""
    bundle = get_game(game_id).reference()
    if bundle is None:
        raise SchemaError(f"{game_id} has no reference yet")
    return bundle


def member(bundle: dict[str, Any], path: str) -> Any:
    """The member at a dotted `path` of `bundle` (`observation`, `actions.move.details`)."""
    value: Any = bundle
    walked: list[str] = []
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            where = ".".join(walked) or "the bundle"
            choices = ", ".join(value) if isinstance(value, dict) else "none (not an object)"
            raise SchemaError(f"{where} has no member {part!r}; its members: {choices}")
        value = value[part]
        walked.append(part)
    return value


def cmd_schema(args: argparse.Namespace) -> int:
    bundle = reference_bundle(args.game)
    value = member(bundle, args.member) if args.member else bundle
    print(json.dumps(value, indent=None if args.compact else 1, ensure_ascii=False))
    return 0


def add_parser(sub: Any) -> None:
    """`schema`, added to `caravan`'s subcommands."""
    schema = sub.add_parser(
        "schema",
        help="a game's reference bundle (JSON), as the ladder serves it at /api/v1/games/<game>/schema/",
        description="Print a game's reference bundle: "
        + ", ".join(f"`{m}`" for m in MEMBERS)
        + " (the observation's JSON Schema is its `observation` member; each action kind's `details` "
        "schema is `actions.<kind>.details`).",
    )
    schema.add_argument("game", help="versioned game id, e.g. expedition-v1 (see `caravan games`)")
    schema.add_argument("--member", help="print one member: observation, actions, actions.move.details, ...")
    schema.add_argument("--compact", action="store_true", help="one line, no indentation")
    schema.set_defaults(func=cmd_schema)
