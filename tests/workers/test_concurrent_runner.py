"""The concurrent match runner on real processes: one worker process plays many matches at once, a worker
killed with SIGKILL while playing 20 loses none of them and rates none twice, and bots are charged only the
time measured at the gateway, however busy the worker is."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine_service.gateway.harness import scrape_metrics
from tests.workers.stack import Stack, free_port, wait_for

pytestmark = pytest.mark.slow

NO_MATCHMAKING = {"CARAVANSERAI_MATCHMAKING_SECONDS": "3600"}


def seatings(stack: Stack, n: int, *, house_second: bool = False) -> list[list[int]]:
    """`n` two-player seatings rotating over the stack's bots (against the random house bot if asked)."""
    bots = sorted(int(b) for b in stack.info["tokens"])
    second = [stack.info["house"][0]] * n if house_second else [bots[(i + 1) % len(bots)] for i in range(n)]
    return [[bots[i % len(bots)], second[i]] for i in range(n)]


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
    ids = stack.queue_matches(stack.info["ladders"]["2"], seatings(stack, 20), first_seed=500)
    wait_for(lambda: stack.count("RUNNING", ids) == 20, 90, "20 matches running in one worker process")
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


@pytest.fixture
def hundred_match_stack(tmp_path: Path) -> Iterator[Stack]:
    # decisions of 0.5 s with no time bank; the bots think 0.4 s (80%) on every decision
    env = {
        **NO_MATCHMAKING,
        "CARAVANSERAI_MATCHES_PER_WORKER": "128",
        "CARAVANSERAI_DECISION_SECONDS": "0.5",
        "CARAVANSERAI_TIME_BANK_SECONDS": "0",
    }
    stack = Stack(tmp_path, workers=1, bot_delay=0.4, bot_concurrency=15, bots=7, env=env)
    yield stack.start()
    stack.stop()


def test_bots_answering_in_80_percent_of_their_time_never_time_out_while_one_worker_plays_100_matches(
    hundred_match_stack: Stack,
) -> None:
    stack = hundred_match_stack
    ids = stack.queue_matches(stack.info["ladders"]["2"], seatings(stack, 100, house_second=True), 700)
    wait_for(lambda: stack.count("RUNNING", ids) >= 95, 120, "100 matches running in one worker process")
    wait_for(lambda: stack.count("DONE", ids) == 100, 420, "the 100 matches to finish")
    rows = stack.query(f"SELECT faults FROM matches_seat WHERE match_id IN ({','.join(map(str, ids))})")
    faults = [fault for (raw,) in rows for fault in (json.loads(raw) if isinstance(raw, str) else raw)]
    assert len(rows) == 200 and faults == []
    stack.assert_rated_exactly_once()
