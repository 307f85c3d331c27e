"""Leases on both stores: one holder at a time, renewed in batches by the process's one renewal thread, and
a lease found taken or gone is marked lost so its match stops."""

from __future__ import annotations

import os
import time

import pytest

from tests.workers.stack import wait_for
from workers.leases import Lease, RedisLeases, SqliteLeases


@pytest.fixture(params=["sqlite", "redis"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return SqliteLeases(tmp_path / "leases.sqlite3")
    url = os.environ.get("REDIS_URL", "").strip() or "redis://127.0.0.1:6379/15"
    return RedisLeases(url, prefix=f"cvs:test-lease-store:{os.getpid()}:{tmp_path.name}:")


def test_one_holder_at_a_time_and_release_frees_the_key(store) -> None:
    with Lease("match:1", 5, store) as first:
        assert first.acquired
        with Lease("match:1", 5, store) as second:
            assert not second.acquired
        assert store.holder("match:1") == first.owner
    assert store.holder("match:1") is None


LIFETIME = 2.0  # renewed every third of it: a renewal thread held up for over 1.3 s would lose its leases


def test_many_leases_are_renewed_past_their_time_to_live(store) -> None:
    held = [Lease(f"match:{i}", LIFETIME, store) for i in range(50)]
    for lease in held:
        lease.acquire()
    time.sleep(2.5 * LIFETIME)  # only renewals keep them this long
    assert all(store.holder(lease.key) == lease.owner for lease in held)
    assert not any(lease.lost for lease in held)
    for lease in held:
        lease.release()


def test_a_lease_taken_by_another_is_marked_lost(store) -> None:
    with Lease("match:2", 0.6, store) as lease:
        store.release("match:2", lease.owner)  # as if it expired ...
        assert store.acquire("match:2", "someone-else", 30)  # ... and another process took the match
        # the next renewal, a fifth of a second on, finds it (120 s: a hang guard)
        wait_for(lambda: lease.lost, 120, "the renewal to find the lease taken")
        assert lease.lost
    assert store.holder("match:2") == "someone-else"  # leaving the block never frees another's lease
