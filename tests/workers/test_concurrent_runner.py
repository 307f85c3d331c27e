"""The concurrent match runner on real processes: one worker process plays many matches at once, a worker
killed with SIGKILL while playing 20 loses none of them and rates none twice, and bots are never charged
for our stalls: the gateway and the worker stopped for a known time, again and again, while one worker plays
40 matches."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_service.gateway.harness import scrape_metrics
from tests.ports import free_port
from tests.workers.stack import Stack, wait_for

pytestmark = pytest.mark.slow

NO_MATCHMAKING = {"CARAVANSERAI_MATCHMAKING_SECONDS": "3600"}


def seatings(stack: Stack, n: int, *, house_second: bool = False) -> list[list[int]]:
    """`n` two-player seatings rotating over the stack's bots (against the random house bot if asked)."""
    bots = sorted(int(b) for b in stack.info["tokens"])
    second = [stack.info["house"][0]] * n if house_second else [bots[(i + 1) % len(bots)] for i in range(n)]
    return [[bots[i % len(bots)], second[i]] for i in range(n)]


def queue_held(stack: Stack, seatings: list[list[int]], first_seed: int) -> list[int]:
    """Queue matches while the worker is stopped (SIGSTOP), so they start only once the test is watching:
    queueing them (a Django subprocess) can take longer on a loaded machine than they take to play."""
    worker = stack.procs["worker1"].popen.pid
    os.kill(worker, signal.SIGSTOP)
    try:
        return stack.queue_matches(stack.info["ladders"]["2"], seatings, first_seed=first_seed)
    finally:
        os.kill(worker, signal.SIGCONT)


@pytest.fixture
def twenty_match_stack(tmp_path: Path) -> Iterator[Stack]:
    env = {**NO_MATCHMAKING, "CARAVANSERAI_WORKER_METRICS_PORT": str(free_port())}
    stack = Stack(tmp_path, workers=1, bot_delay=0.03, bot_concurrency=16, env=env)
    yield stack.start()
    stack.stop()


def test_a_worker_killed_while_playing_twenty_matches_loses_none_and_rates_none_twice(
    twenty_match_stack: Stack,
) -> None:
    stack = twenty_match_stack
    ids = queue_held(stack, seatings(stack, 20), first_seed=500)
    wait_for(lambda: stack.count("RUNNING", ids) == 20, 300, "20 matches running in one worker process")
    holders = {stack.lease_holder_pid(i) for i in ids}
    assert len(holders) == 1 and None not in holders  # all 20 in the one process
    seen = scrape_metrics(int(stack.env["CARAVANSERAI_WORKER_METRICS_PORT"]))
    assert seen["caravanserai_worker_matches_in_flight"] == 20
    assert seen["caravanserai_worker_decisions_total"] > 0
    stack.procs["worker1"].kill(signal.SIGKILL)
    stack.start_worker("worker2")
    wait_for(lambda: stack.count("DONE", ids) == 20, 240, "all 20 matches to finish in the new worker")
    assert stack.running() == []
    attempts = [stack.status(i)[1] for i in ids]
    assert all(a >= 2 for a in attempts), attempts  # each was played again from its start
    stack.assert_rated_exactly_once()
    errors = stack.query(f"SELECT error FROM matches_match WHERE id IN ({','.join(map(str, ids))})")
    assert all("worker lost" in e for (e,) in errors)


# Decisions of 1 s with no time bank; the bots think 0.05 s. The test stalls the gateway (SIGSTOP, 1.2 s: longer
# than a whole decision) and the worker (1.0 s) in turn while the matches play: without the gateway's clock
# excusing its own stalls, every decision open across one would time out. Stalls of a known size, not a
# thin margin over the bots' thinking, so the machine's load does not decide the result.
DECISION_SECONDS = 1.0
GATEWAY_STALL_SECONDS = 1.2
WORKER_STALL_SECONDS = 1.0
MATCHES = 40  # in flight at once in one worker; `python -m bench matches` plays more


@pytest.fixture
def stalled_match_stack(tmp_path: Path) -> Iterator[Stack]:
    env = {
        **NO_MATCHMAKING,
        "CARAVANSERAI_MATCHES_PER_WORKER": "128",
        "CARAVANSERAI_DECISION_SECONDS": str(DECISION_SECONDS),
        "CARAVANSERAI_TIME_BANK_SECONDS": "0",
        "CARAVANSERAI_GATEWAY_METRICS_PORT": str(free_port()),
    }
    stack = Stack(tmp_path, workers=1, bot_delay=0.05, bot_concurrency=15, bots=7, env=env)
    yield stack.start()
    stack.stop()


class Staller:
    """Stops the gateway and the worker in turn (SIGSTOP, then SIGCONT after a known time) until told to
    end; every process it stopped is running again when `stop()` returns."""

    def __init__(self, stack: Stack) -> None:
        self.targets = [
            (stack.procs["gateway"].popen.pid, GATEWAY_STALL_SECONDS),
            (stack.procs["worker1"].popen.pid, WORKER_STALL_SECONDS),
        ]
        self.stalls = [0, 0]
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="staller", daemon=True)

    def start(self) -> Staller:
        self._thread.start()
        return self

    def _run(self) -> None:
        turn = 0
        while not self._done.wait(0.8):
            pid, seconds = self.targets[turn % 2]
            os.kill(pid, signal.SIGSTOP)
            try:
                time.sleep(seconds)
            finally:
                os.kill(pid, signal.SIGCONT)
            self.stalls[turn % 2] += 1
            turn += 1

    def stop(self) -> None:
        self._done.set()
        self._thread.join(10)


def test_bots_are_never_charged_for_gateway_or_worker_stalls_while_one_worker_plays_40_matches(
    stalled_match_stack: Stack,
) -> None:
    stack = stalled_match_stack
    ids = queue_held(stack, seatings(stack, MATCHES, house_second=True), 700)
    wait_for(
        lambda: stack.count("RUNNING", ids) >= MATCHES - 2, 240, f"{MATCHES} matches running in one worker"
    )
    staller = Staller(stack).start()
    try:
        wait_for(lambda: stack.count("DONE", ids) == MATCHES, 420, f"the {MATCHES} matches to finish")
    finally:
        staller.stop()
    rows = stack.query(f"SELECT faults FROM matches_seat WHERE match_id IN ({','.join(map(str, ids))})")
    faults = [fault for (raw,) in rows for fault in (json.loads(raw) if isinstance(raw, str) else raw)]
    assert len(rows) == 2 * MATCHES and faults == []
    stack.assert_rated_exactly_once()
    gateway_stalls, worker_stalls = staller.stalls
    assert gateway_stalls >= 3 and worker_stalls >= 3, staller.stalls
    seen = scrape_metrics(int(stack.env["CARAVANSERAI_GATEWAY_METRICS_PORT"]))
    assert seen["caravanserai_gateway_loop_stall_seconds_count"] >= gateway_stalls
    assert seen["caravanserai_gateway_loop_stall_seconds_sum"] >= gateway_stalls * (
        GATEWAY_STALL_SECONDS - 0.1
    )
    # decisions were open across the stalls, and their bots were not charged for them
    assert seen["caravanserai_gateway_excused_seconds_total"] >= GATEWAY_STALL_SECONDS
