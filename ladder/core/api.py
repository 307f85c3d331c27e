"""API helpers shared by the apps: query-parameter parsing with clear 400s, and cursor pagination.

Layer: API plumbing; no domain logic.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request


def parse_query(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """Validate query parameters with a serializer; unknown parameters are ignored, bad ones raise 400."""
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return {k: v for k, v in serializer.validated_data.items() if v not in (None, "")}


class NewestFirstCursor(CursorPagination):
    """Cursor pages over `-id` (stable under inserts); `page_size` up to 100."""

    ordering = "-id"
    page_size = 25
    page_size_query_param = "page_size"
    max_page_size = 100


class LeaderboardCursor(CursorPagination):
    """Cursor pages over the leaderboard order (best Elo first, ties by rating row id)."""

    ordering = ("-elo", "id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
