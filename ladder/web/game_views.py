"""Game pages: a game's reference for bot authors (its observation's fields, its action kinds with their id
grammar and examples, which first action is safe), read from the engine's `GameSpec.reference()`.

Layer: web views (read-only); the JSON itself is served at /api/v1/games/<id>/schema/.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from ladder.ladders.selectors import game_get, game_reference


@dataclass(frozen=True)
class FieldRow:
    path: str
    type: str
    description: str
    values: str


def schema_rows(schema: dict[str, Any], path: str = "") -> list[FieldRow]:
    """The fields of a JSON Schema as rows (`players[].gold`), nested objects and arrays flattened."""
    rows: list[FieldRow] = []
    for name, sub in schema.get("properties", {}).items():
        here = f"{path}.{name}" if path else name
        rows.append(FieldRow(here, _type(sub), sub.get("description", ""), _values(sub)))
        rows += _nested(sub, here)
    for pattern, sub in schema.get("patternProperties", {}).items():
        here = f"{path}{{{pattern}}}"
        rows.append(FieldRow(here, _type(sub), sub.get("description", ""), _values(sub)))
        rows += _nested(sub, here)
    return rows


def _nested(schema: dict[str, Any], path: str) -> list[FieldRow]:
    rows = schema_rows(schema, path)
    items = schema.get("items")
    if isinstance(items, dict):
        rows += schema_rows(items, f"{path}[]") + _nested_items(items, f"{path}[]")
    for option in schema.get("oneOf", []) + schema.get("anyOf", []):
        rows += _nested(option, path)
    return rows


def _nested_items(items: dict[str, Any], path: str) -> list[FieldRow]:
    inner = items.get("items")
    return _nested(inner, f"{path}[]") if isinstance(inner, dict) else []


def _type(schema: dict[str, Any]) -> str:
    if "const" in schema:
        return "constant"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_type(schema['items'])}"
    if kind is None and ("oneOf" in schema or "anyOf" in schema):
        return " or ".join(_type(s) for s in schema.get("oneOf", []) + schema.get("anyOf", []))
    return str(kind or "any")


def _values(schema: dict[str, Any]) -> str:
    if "const" in schema:
        return repr(schema["const"])
    if "enum" in schema:
        return ", ".join("null" if v is None else str(v) for v in schema["enum"])
    if "pattern" in schema:
        return f"pattern {schema['pattern']}"
    bounds = [f"{k} {schema[k]}" for k in ("minimum", "maximum") if k in schema]
    return ", ".join(bounds)


def game_reference_page(request: HttpRequest, game_id: str) -> HttpResponse:
    try:
        game = game_get(game_id=game_id)
        reference = game_reference(game_id=game_id)
    except LookupError as exc:
        raise Http404(str(exc)) from exc
    actions = [
        {"kind": kind, **doc, "rows": schema_rows(doc["details"])}
        for kind, doc in reference["actions"].items()
    ]
    context = {
        "game": game,
        "reference": reference,
        "observation_rows": schema_rows(reference["observation"]),
        "actions": actions,
    }
    return render(request, "web/game_reference.html", context)
