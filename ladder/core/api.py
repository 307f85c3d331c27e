"""API helpers shared by the apps: query-parameter parsing with clear 400s, and cursor pagination whose
bad cursors are 404s.

Layer: API plumbing; no domain logic.
"""

from __future__ import annotations

import math
from typing import Any

from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request


def parse_query(serializer_class: type[serializers.Serializer[Any]], request: Request) -> dict[str, Any]:
    """Validate query parameters with a serializer; unknown parameters are ignored, bad ones raise 400."""
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return {k: v for k, v in serializer.validated_data.items() if v not in (None, "")}


class _CheckedCursor(CursorPagination):
    """A cursor whose position must parse as `position_type` (a bad one is a 404, never a 500)."""

    position_type: type = int

    def decode_cursor(self, request: Request) -> Cursor | None:
        cursor = super().decode_cursor(request)
        if cursor is None or cursor.position is None:
            return cursor
        try:
            value = self.position_type(cursor.position)
        except (TypeError, ValueError) as exc:
            raise NotFound(self.invalid_cursor_message) from exc
        if not math.isfinite(value) or abs(value) >= 2**63:
            raise NotFound(self.invalid_cursor_message)
        return cursor


class NewestFirstCursor(_CheckedCursor):
    """Cursor pages over `-id` (stable under inserts); `page_size` up to 100."""

    ordering = "-id"
    page_size = 25
    page_size_query_param = "page_size"
    max_page_size = 100


class LeaderboardCursor(_CheckedCursor):
    """Cursor pages over the leaderboard order (best Elo first, ties by rating row id)."""

    ordering = ("-elo", "id")
    position_type = float
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
