"""House bots in a search pool: the same moves as in-process, and a dead pool process is an infrastructure
failure (the match is retried), never a fault of the bot."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from engine_service.policies import make_policy
from engine_service.policies.random_policy import RandomPolicy
from engine_service.referee import DecisionRequest, HouseSeat, MatchAborted, TimeControl, run_match, verify
from engine_service.referee.search_pool import PooledHouseSeat, SearchPool

GAME = "expedition-v1"


@pytest.fixture(scope="module")
def pool() -> Iterator[SearchPool]:
    pool = SearchPool(2)
    yield pool
    pool.shutdown()


class DyingPolicy(RandomPolicy):
    """Kills the process it decides in (a pool process lost to the OOM killer, say)."""

    def choose(self, observation, legal_actions):  # type: ignore[no-untyped-def]
        os._exit(3)


def test_pooled_house_bots_play_exactly_the_moves_of_in_process_ones(pool: SearchPool) -> None:
    def seats(pooled: bool) -> list[HouseSeat]:
        policies = [make_policy("mcts:8", seed=11), make_policy("greedy", seed=12), make_policy("random", 13)]
        return [PooledHouseSeat(p, pool) if pooled else HouseSeat(p) for p in policies]

    in_process = run_match(GAME, 3, 31, seats(pooled=False))
    pooled = run_match(GAME, 3, 31, seats(pooled=True))
    assert pooled.actions == in_process.actions and pooled.result == in_process.result
    assert pooled.faults == []


def test_a_dead_search_process_aborts_the_match_and_the_pool_recovers(pool: SearchPool) -> None:
    with pytest.raises(MatchAborted, match="search process died"):
        run_match(GAME, 2, 3, [PooledHouseSeat(DyingPolicy(1), pool), HouseSeat(make_policy("random", 2))])
    record = run_match(
        GAME, 2, 3, [PooledHouseSeat(make_policy("random", 1), pool), HouseSeat(RandomPolicy(2))]
    )
    assert record.result is not None and record.faults == []


def test_a_pool_needs_a_process() -> None:
    with pytest.raises(ValueError, match="at least one process"):
        SearchPool(0)


class SleepingPolicy(RandomPolicy):
    """A search far slower than the deadline on its first decisions (a starved pool process, a slow
    machine). Its count of slow decisions travels with it to the pool process and back."""

    slow_left = 2

    def choose(self, observation, legal_actions):  # type: ignore[no-untyped-def]
        if self.slow_left > 0:
            self.slow_left -= 1
            time.sleep(0.6)
        return super().choose(observation, legal_actions)


def test_a_pooled_house_seat_whose_search_sleeps_past_the_deadline_is_never_faulted_on_time() -> None:
    pool = SearchPool(1)
    seconds: list[float] = []

    class Watched(PooledHouseSeat):
        def decide(self, request: DecisionRequest) -> str:
            action_id = super().decide(request)
            seconds.append(request.extra["bot_seconds"])
            return action_id

    try:
        busy = pool._pool().submit(time.sleep, 0.5)  # and the only process is busy at first
        record = run_match(
            GAME,
            2,
            4,
            [Watched(SleepingPolicy(1), pool), HouseSeat(make_policy("random", 2))],
            time_control=TimeControl(decision_seconds=0.1, time_bank_seconds=0.0, max_faults=0),
        )
        busy.result()
    finally:
        pool.shutdown()
    assert seconds[0] >= 0.6 and seconds[1] >= 0.6  # each far over its 0.1 s, with no bank
    assert record.faults == [] and record.forfeits == []  # one timeout would have forfeited it
    verify(record)


class GatedPolicy(RandomPolicy):
    """Decides only once the file `gate` exists: a search that holds its process as long as the test says."""

    def __init__(self, seed: int, gate: str) -> None:
        super().__init__(seed)
        self.gate = gate

    def choose(self, observation, legal_actions):  # type: ignore[no-untyped-def]
        while not os.path.exists(self.gate):
            time.sleep(0.01)
        return super().choose(observation, legal_actions)


def test_the_pool_measures_decisions_waiting_for_a_process_and_how_long_they_waited(tmp_path) -> None:
    import threading

    from engine_service.games import registry

    state = registry.make(GAME, 2, 5)
    seat = state.current_seats()[0]
    observation, legal = state.observation(seat), state.legal_actions(seat)
    gate = str(tmp_path / "open")
    pool = SearchPool(1)
    try:
        pool.choose(RandomPolicy(1), observation, legal)  # a new pool's first decision waits for the spawn
        assert pool.pressure().longest_wait == 0.0 and pool.pressure().waiting == 0
        threads = [
            threading.Thread(target=pool.choose, args=(GatedPolicy(i, gate), observation, legal))
            for i in range(2)
        ]
        for thread in threads:
            thread.start()
        while pool.pressure().waiting < 1:  # one decides (held at the gate), one waits for the process
            time.sleep(0.01)
        time.sleep(1.2)  # the injected stall: the waiting decision waits at least this long
        open(gate, "w").close()
        for thread in threads:
            thread.join()
    finally:
        pool.shutdown()
    pressure = pool.pressure()
    assert pressure.waiting == 0 and pressure.processes == 1
    assert pressure.longest_wait >= 1.2
    assert pool.pressure(now=time.monotonic() + 31).longest_wait == 0.0  # the window forgets it
