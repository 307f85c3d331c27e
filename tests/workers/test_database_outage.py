"""PostgreSQL unreachable under a worker playing matches (real processes; the database behind a TCP proxy
that is cut and restored): matches that end meanwhile wait to be recorded, matches that start meanwhile are
retried with backoff and their failure's real reason is recorded once the database is back, and all of them
end DONE and rated exactly once, without waiting for the stale-match sweep. The outage lasts until the
worker has met both (its log says so), however slowly a loaded machine plays. An outage longer than a played
match waits to be recorded has it played again by its own task's retries, which the sweep leaves alone
(`workers.retry_marks`): a worker waiting out the database is not a lost worker."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import pytest

from tests.workers.db_proxy import TcpProxy
from tests.workers.stack import Stack, wait_for
from tests.workers.test_concurrent_runner import NO_MATCHMAKING, seatings

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # the outage waits up to 600 s for its events


@pytest.fixture
def proxied_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[tuple[Stack, TcpProxy]]:
    monkeypatch.setenv(
        "DATABASE_URL", os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/test"
    )
    env = {
        **NO_MATCHMAKING,
        "CARAVANSERAI_MATCHES_PER_WORKER": "8",
        "CARAVANSERAI_QUEUED_RESEND_SECONDS": "900",
        # the outage must meet a match being prepared; the live publisher's own database writes changed that
        # timing (the live view under an outage is tests/workers/test_matches.py's), so it is off here
        "CARAVANSERAI_LIVE_SECONDS": "0",
        **getattr(request, "param", {}),  # a test's own settings
    }
    stack = Stack(tmp_path, workers=1, bot_delay=0.03, bot_concurrency=16, env=env)
    direct = urlparse(stack.env["DATABASE_URL"])
    proxy = TcpProxy((direct.hostname or "127.0.0.1", direct.port or 5432)).restore()
    netloc = f"{direct.username}@127.0.0.1:{proxy.port}" if direct.username else f"127.0.0.1:{proxy.port}"
    stack.env["DATABASE_URL"] = urlunparse(direct._replace(netloc=netloc))
    try:
        yield stack.start(), proxy
    finally:
        proxy.cut()
        stack.stop()


def cut_while_playing(stack: Stack, proxy: TcpProxy, matches: int, first_seed: int) -> list[int]:
    """Queue `matches` (8 play at once, the rest wait in the broker) and cut the database under them."""
    ids = stack.queue_matches(stack.info["ladders"]["2"], seatings(stack, matches), first_seed=first_seed)
    wait_for(
        lambda: stack.count("RUNNING", ids) == 8, 60, "8 matches running, the rest waiting in the broker"
    )
    time.sleep(3)
    proxy.cut()
    return ids


def errors_of(stack: Stack, ids: list[int]) -> list[str]:
    return [
        e for (e,) in stack.query(f"SELECT error FROM matches_match WHERE id IN ({','.join(map(str, ids))})")
    ]


def test_a_database_outage_mid_match_loses_nothing_and_waits_for_no_sweep(
    proxied_stack: tuple[Stack, TcpProxy],
) -> None:
    stack, proxy = proxied_stack
    ids = cut_while_playing(stack, proxy, 16, first_seed=900)
    worker_log = stack.procs["worker1"].output
    wait_for(  # matches end and others are taken from the broker, with no database
        lambda: "recording failed" in worker_log() and "infrastructure failure" in worker_log(),
        600,
        "a match to end and another to start during the outage",
    )
    proxy.restore()
    wait_for(lambda: stack.count("DONE", ids) == 16, 120, "all 16 matches done after the outage")
    stack.assert_rated_exactly_once()
    # the real reason, recorded once the database was back
    assert any("OperationalError" in e for e in errors_of(stack, ids))
    assert "OperationalError" in worker_log()
    assert "stale matches" not in worker_log()  # the sweep sent nothing again


BACKOFF_PAST_THE_SWEEP = 5  # failures: the next retry waits 0.5 * 2**5 s, well past the sweep's 2 s period


@pytest.mark.parametrize("proxied_stack", [{"CARAVANSERAI_RECORD_RETRIES": "1"}], indirect=True)
def test_an_outage_longer_than_recording_waits_replays_the_matches_by_their_own_tasks(
    proxied_stack: tuple[Stack, TcpProxy],
) -> None:
    stack, proxy = proxied_stack
    ids = cut_while_playing(stack, proxy, 8, first_seed=950)
    worker_log = stack.procs["worker1"].output

    def waiting_long() -> bool:  # a played match gave up recording and its retries now wait long
        log = worker_log()
        played = set(re.findall(r"match (\d+): recording failed", log))
        return any(log.count(f"match {m}: infrastructure failure") >= BACKOFF_PAST_THE_SWEEP for m in played)

    wait_for(waiting_long, 600, "a played match's retries to back off past the sweep's period")
    proxy.restore()
    wait_for(lambda: stack.count("DONE", ids) == 8, 180, "all 8 matches played again and done")
    stack.assert_rated_exactly_once()
    assert "stale matches" not in worker_log()  # never taken for a lost worker's
    errors = errors_of(stack, ids)
    assert any("OperationalError" in e for e in errors) and not any("worker lost" in e for e in errors)
