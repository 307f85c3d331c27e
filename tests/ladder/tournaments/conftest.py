"""Per-test lease keys for the tournament tests (Redis may be shared with other runs)."""

from __future__ import annotations

import os

import pytest

from workers import leases


@pytest.fixture(autouse=True)
def _own_leases(monkeypatch, tmp_path):
    monkeypatch.setenv("CARAVANSERAI_LEASE_PREFIX", f"cvs:test-lease:{os.getpid()}:{tmp_path.name}:")
    leases.reset_after_fork()
    yield
    leases.reset_after_fork()
