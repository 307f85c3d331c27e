"""A bot host's uid allocation in a process of its own, for test_uids to start several at once: this module
imports only the uid pool, so a spawned process starts without the test module's imports."""

from __future__ import annotations

from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

from bot_host.uids import UidPool


def allocate_many(directory: str, first: int, got: Queue[list[int]], barrier: Barrier, wait: float) -> None:
    """Four uids from the pool of 40 from `first` (its lock directory `directory`), put in `got`, held until
    every process at `barrier` has its own (or `wait` seconds)."""
    pool = UidPool(first, 40, directory=Path(directory), temp_dirs=())
    got.put([pool.allocate() for _ in range(4)])
    barrier.wait(wait)
