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

The pool measures its own pressure (`pressure()`): decisions waiting now for a free process, and the longest
wait for one in the last `PRESSURE_WINDOW_SECONDS` (from submission to the pool process starting it, both on
the machine's monotonic clock; a new pool's first decisions, which wait for the processes to spawn, are not
counted). Matchmaking reads it, through the workers' capacity reports, to admit search seats only while the
pool keeps up.

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
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from engine_service.games import Action
from engine_service.policies.base import Policy
from engine_service.referee.seats import DecisionRequest, HouseSeat, MatchAborted

PRESSURE_WINDOW_SECONDS = 30.0
_WAITS_KEPT = 512


def _choose(
    policy: Policy, observation: dict[str, Any], legal: Sequence[Action]
) -> tuple[str, Policy, float, float]:
    """In a pool process: one decision, the policy as it is after it (its RNG advanced), the seconds it
    took there, and when it started (`time.monotonic()`, the machine's clock, comparable across processes)."""
    began = time.monotonic()
    started = time.perf_counter()
    action_id = policy.choose(observation, legal)
    return action_id, policy, time.perf_counter() - started, began


@dataclass(frozen=True)
class SearchPressure:
    """A pool's load as measured: decisions waiting for a free process now, the longest wait for one in the
    last window (seconds), and the pool's processes."""

    waiting: int
    longest_wait: float
    processes: int


class SearchPool:
    """A lazily started, fork-safe pool of `processes` search processes shared by a worker's matches."""

    def __init__(self, processes: int) -> None:
        if processes < 1:
            raise ValueError(f"a search pool needs at least one process, not {processes}")
        self.processes = processes
        self._executor: ProcessPoolExecutor | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._in_flight = 0
        self._warming = 0  # decisions of a new pool still to come whose wait includes its spawning
        self._waits: deque[tuple[float, float]] = deque(maxlen=_WAITS_KEPT)  # (when, seconds)

    def _pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self._executor = ProcessPoolExecutor(
                    self.processes, mp_context=multiprocessing.get_context("spawn")
                )
                self._pid = os.getpid()
                self._in_flight, self._warming = 0, self.processes
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
        submitted = time.monotonic()
        with self._lock:
            self._in_flight += 1
            warming, self._warming = self._warming > 0, max(0, self._warming - 1)
        try:
            action_id, policy, seconds, began = pool.submit(
                _choose, policy, observation, list(legal)
            ).result()
        except BrokenProcessPool as exc:
            self._discard(pool)  # the next decision starts a new pool
            raise MatchAborted(f"a search process died ({exc}); the match is retried") from exc
        finally:
            with self._lock:
                self._in_flight = max(0, self._in_flight - 1)
        if not warming:
            with self._lock:
                self._waits.append((began, max(0.0, began - submitted)))
        return action_id, policy, seconds

    def pressure(self, now: float | None = None) -> SearchPressure:
        """The pool's measured load now (`now`: a `time.monotonic()` reading, for tests)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            recent = [wait for at, wait in self._waits if at >= now - PRESSURE_WINDOW_SECONDS]
            waiting = max(0, self._in_flight - self.processes)
        return SearchPressure(waiting, max(recent, default=0.0), self.processes)

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
