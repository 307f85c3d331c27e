"""Fixtures of the analysis tests: the tasks the ladder sends to the broker, recorded instead of sent."""

from __future__ import annotations

import pytest

from ladder.tournaments import dispatch
from workers.celery_app import app


@pytest.fixture
def recorded(monkeypatch):
    """The tasks sent to the broker (name, args, queue)."""
    calls: list[tuple[str, list[int], str]] = []
    monkeypatch.setattr(app, "send_task", lambda name, args, queue: calls.append((name, args, queue)))
    return calls


@pytest.fixture
def sent(recorded, monkeypatch):
    """The tasks sent, each at once (these tests run in a transaction that never commits)."""
    monkeypatch.setattr(dispatch.transaction, "on_commit", lambda send: send())
    return recorded
