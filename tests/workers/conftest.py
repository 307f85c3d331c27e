"""Fixtures for the worker tests: the ladder's user, bot and ladder fixtures, per-process lease keys (Redis
may be shared with other runs), and matchmaking's registry and sent tasks."""

from __future__ import annotations

import os

import pytest

from engine_service.gateway.registry import SqliteRegistry
from tests.ladder.conftest import (  # noqa: F401 - fixtures re-exported for this package
    _fresh_cache,
    house_bots,
    ladder2,
    ladder4,
    make_bot,
    staff_user,
    user,
)
from workers import leases, matchmaking


@pytest.fixture(autouse=True)
def _own_leases(monkeypatch, tmp_path):
    monkeypatch.setenv("CARAVANSERAI_LEASE_PREFIX", f"cvs:test-lease:{os.getpid()}:{tmp_path.name}:")
    leases.reset_after_fork()
    yield
    leases.reset_after_fork()


@pytest.fixture
def registry(tmp_path, monkeypatch):
    reg = SqliteRegistry(tmp_path / "registry.sqlite3", ttl=10)
    monkeypatch.setattr(matchmaking, "registry", lambda: reg)
    return reg


@pytest.fixture
def sent(monkeypatch):
    calls: list[int] = []

    class Recorder:
        @staticmethod
        def delay_on_commit(match_id: int) -> None:
            calls.append(match_id)

        delay = delay_on_commit

    monkeypatch.setattr(matchmaking, "run_match", Recorder)
    return calls
