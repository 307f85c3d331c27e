"""The leaderboard cache's per-ladder version: cached pages carry the version in their key, and changing it
(after a rating change commits) makes every cached page of that ladder stale at once, on any cache backend.
Versions are nanosecond timestamps, so a lost version key can never bring back an older page.

Layer: infrastructure helper (cache only; no database).
"""

from __future__ import annotations

import time

from django.core.cache import cache


def _version_key(ladder_id: int) -> str:
    return f"leaderboard:v:{ladder_id}"


def leaderboard_cache_version(*, ladder_id: int) -> int:
    key = _version_key(ladder_id)
    version = cache.get(key)
    if version is None:
        cache.add(key, time.time_ns(), timeout=None)
        version = cache.get(key) or 0
    return int(version)


def leaderboard_cache_invalidate(*, ladder_id: int) -> None:
    cache.set(_version_key(ladder_id), time.time_ns(), timeout=None)


def leaderboard_cache_key(*, ladder_id: int, query: str) -> str:
    return f"leaderboard:{ladder_id}:{leaderboard_cache_version(ladder_id=ladder_id)}:{query}"
