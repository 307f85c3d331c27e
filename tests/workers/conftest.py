"""Fixtures for the worker tests: the ladder's user, bot and ladder fixtures, and per-process lease keys
(Redis may be shared with other runs)."""

from __future__ import annotations

import os

import pytest

from tests.ladder.conftest import (  # noqa: F401 - fixtures re-exported for this package
    _fresh_cache,
    house_bots,
    ladder2,
    ladder4,
    make_bot,
    staff_user,
    user,
)
from workers import leases


@pytest.fixture(autouse=True)
def _own_leases(monkeypatch, tmp_path):
    monkeypatch.setenv("CARAVANSERAI_LEASE_PREFIX", f"cvs:test-lease:{os.getpid()}:{tmp_path.name}:")
    leases.reset_after_fork()
    yield
    leases.reset_after_fork()
