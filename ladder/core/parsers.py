"""The API's JSON parser: DRF's, plus a 400 (never a 500) for JSON nested deeper than `MAX_DEPTH`, whether
the standard library's parser runs out of recursion or a nested document would reach a validator.

Layer: API plumbing.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 64


def json_depth(value: Any) -> int:
    """How deeply lists and objects nest in `value` (0 for a scalar); iterative, so any depth is safe."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):  # type: ignore[no-untyped-def]
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError(f"JSON nested too deeply (at most {MAX_DEPTH} levels)") from exc
        if json_depth(data) > MAX_DEPTH:
            raise ParseError(f"JSON nested too deeply (at most {MAX_DEPTH} levels)")
        return data
