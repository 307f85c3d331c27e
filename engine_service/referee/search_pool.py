"""House bots that search, run in their own processes: `SearchPool` and `PooledHouseSeat`.

A worker process plays many matches at once in threads; a house policy that searches (mcts, up to seconds
of CPU a decision) must not run among them, or it would hold the interpreter while every other match waits.
`PooledHouseSeat` sends each decision to a small pool of processes (`SearchPool`, started lazily with the
"spawn" method, so it inherits no thread, gRPC channel or database connection of the worker) together with
the policy itself, and takes the policy back with the answer: the policy's seeded RNG advances exactly as
it would in-process, so a pooled house bot plays the very moves an in-process one would. Like every house
seat it is not clocked (`HouseSeat`): a search process starved of CPU or queued behind other matches' searches
never makes it lose on time. The seconds its policy took in the pool process are still reported
(`extra["bot_seconds"]`, wall time there; never the wait for a free process), to be seen, not charged.

A pool process that dies (killed, out of memory) is an infrastructure failure, `MatchAborted`: the match is
retried, unrated; a bug in the policy itself raises as it would in-process (the referee records a crash).

Layer: referee infrastructure (processes, no Django, no gRPC). It must not see the game state: a policy gets
the observation and the legal actions only, as everywhere.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from engine_service.games import Action
from engine_service.policies.base import Policy
from engine_service.referee.seats import DecisionRequest, HouseSeat, MatchAborted


def _choose(
    policy: Policy, observation: dict[str, Any], legal: Sequence[Action]
) -> tuple[str, Policy, float]:
    """In a pool process: one decision, the policy as it is after it (its RNG advanced), and the seconds it
    took there."""
    started = time.perf_counter()
    action_id = policy.choose(observation, legal)
    return action_id, policy, time.perf_counter() - started


class SearchPool:
    """A lazily started, fork-safe pool of `processes` search processes shared by a worker's matches."""

    def __init__(self, processes: int) -> None:
        if processes < 1:
            raise ValueError(f"a search pool needs at least one process, not {processes}")
        self.processes = processes
        self._executor: ProcessPoolExecutor | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def _pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self._executor = ProcessPoolExecutor(
                    self.processes, mp_context=multiprocessing.get_context("spawn")
                )
                self._pid = os.getpid()
            return self._executor

    def _discard(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is broken:
                self._executor = None
        broken.shutdown(wait=False, cancel_futures=True)

    def choose(
        self, policy: Policy, observation: dict[str, Any], legal: Sequence[Action]
    ) -> tuple[str, Policy, float]:
        """One decision in a pool process: the action id, the policy after it, its seconds there."""
        pool = self._pool()
        try:
            return pool.submit(_choose, policy, observation, list(legal)).result()
        except BrokenProcessPool as exc:
            self._discard(pool)  # the next decision starts a new pool
            raise MatchAborted(f"a search process died ({exc}); the match is retried") from exc

    def shutdown(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)


class PooledHouseSeat(HouseSeat):
    """A house seat whose policy decides in a `SearchPool` process instead of the caller's thread."""

    def __init__(self, policy: Policy, pool: SearchPool, name: str | None = None) -> None:
        super().__init__(policy, name)
        self.pool = pool

    def decide(self, request: DecisionRequest) -> str:
        action_id, self.policy, seconds = self.pool.choose(
            self.policy, request.observation, request.legal_actions
        )
        request.extra["bot_seconds"] = seconds  # its thinking, for the record's readers; never charged
        return action_id
