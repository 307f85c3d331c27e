"""Redis killed (SIGKILL) and started again mid-play, with its data and without it, under the processes of
infra/Procfile (a match worker, the scheduler worker serving matchmaking and tournaments, beat): every Celery
process stays up and goes on by itself, a match made after the restart is played to DONE, and the matches in
play at the kill end DONE, rated exactly once.

Before the guard in `workers.broker` (`RedisChannel`), the match worker exited at the first loss with
"Unrecoverable error: AttributeError('NoneType' object has no attribute 'hostname')" (celery 5.7.0 closes
its lost connection's channel a second time, after letting go of its transport, to requeue the tasks in
flight)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery import Celery

from tests.workers.redis_server import RedisServer
from tests.workers.stack import PYTHON, Proc, Stack, wait_for
from workers.matches import RETRY_PUBLISH_POLICY

pytestmark = pytest.mark.slow

CELERY = [PYTHON, "-m", "celery", "-A", "workers.celery_app"]
WORKERS = ("worker", "scheduler")  # the Celery workers; beat is checked by the matches it has made since
ENV = {
    # A match whose message Redis lost (a task in flight at the kill, or acknowledged and then requeued by
    # no one) is left QUEUED with no message: the sweep sends it again after this (300 s by default). A
    # retry due while Redis was away waits for the broker instead (`RETRY_PUBLISH_POLICY`, tested below).
    "CARAVANSERAI_QUEUED_RESEND_SECONDS": "5",
}


def start_procfile_celery(stack: Stack) -> None:
    """The Celery processes as infra/Procfile runs them (gossip and mingle on)."""
    worker, scheduler = f"worker-{stack.uid}@%h", f"scheduler-{stack.uid}@%h"
    stack.spawn("worker", [*CELERY, "worker", "-Q", "matches", "-n", worker, "--loglevel", "INFO"])
    stack.spawn(
        "scheduler",
        [
            *CELERY,
            "worker",
            "-Q",
            "matchmaking,tournaments",
            "-c",
            "4",
            "-n",
            scheduler,
            "--loglevel",
            "INFO",
        ],
    )
    stack.spawn("beat", [*CELERY, "beat", "-s", str(stack.var / "beat"), "--loglevel", "INFO"])


@pytest.fixture(params=[False, True], ids=["without-its-data", "with-its-data"])
def stack_and_redis(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Stack, RedisServer]]:
    server = RedisServer(tmp_path / "redis", persistent=request.param).start()
    monkeypatch.setenv("REDIS_URL", server.url)
    stack = Stack(tmp_path / "stack", workers=0, beat=False, bot_delay=0.05, bot_concurrency=8, env=ENV)
    try:
        stack.prepare_database()
        stack.start_gateway()
        start_procfile_celery(stack)
        for i, (bot_id, token) in enumerate(sorted(stack.info["tokens"].items())):
            stack.start_python_bot(bot_id, token, seed=i)
        yield stack, server
    finally:
        if server.popen is None or server.popen.poll() is not None:
            with contextlib.suppress(AssertionError):
                server.start()  # the stack's cleanup talks to it
        stack.stop()
        server.stop()


def output_of_live(proc: Proc) -> str:
    """The process's log so far; fails at once, with the log's end, if the process has exited."""
    output = proc.output()
    assert proc.popen.poll() is None, f"{proc.name} exited:\n{output[-4000:]}"
    return output


def last_match_id(stack: Stack) -> int:
    return int(stack.query("SELECT COALESCE(MAX(id), 0) FROM matches_match")[0][0])


def done_after(stack: Stack, match_id: int) -> int:
    return int(
        stack.query("SELECT COUNT(*) FROM matches_match WHERE status = 'DONE' AND id > ?", (match_id,))[0][0]
    )


def kill_and_restart(stack: Stack, server: RedisServer) -> None:
    """Kill Redis once every worker is consuming, wait until both workers saw it go, start it again."""
    with server.client() as client:
        client.set("restart-marker", "kept")
    server.kill()
    for name in WORKERS:
        proc = stack.procs[name]
        wait_for(
            lambda p=proc: "Connection to broker lost" in output_of_live(p), 60, f"the {name} to see Redis go"
        )
    server.start()
    with server.client() as client:
        assert (client.get("restart-marker") == b"kept") is server.persistent


def test_celery_processes_survive_a_redis_restart_mid_play_and_go_on(
    stack_and_redis: tuple[Stack, RedisServer],
) -> None:
    stack, server = stack_and_redis
    for name in WORKERS:
        wait_for(lambda p=stack.procs[name]: " ready." in output_of_live(p), 90, f"the {name} ready")
    in_play = wait_for(lambda: len(stack.running()) >= 2 and stack.running(), 90, "two matches in play")
    kill_and_restart(stack, server)
    made_before = last_match_id(stack)

    for name in WORKERS:
        proc = stack.procs[name]
        wait_for(lambda p=proc: output_of_live(p).count("Connected to") >= 2, 90, f"the {name} reconnected")
    wait_for(
        lambda: done_after(stack, made_before) >= 1, 120, "a match made after the restart played to DONE"
    )
    wait_for(
        lambda: stack.count("DONE", in_play) == len(in_play),
        120,
        f"the matches in play at the kill {in_play}",
    )

    for name in (*WORKERS, "beat"):
        assert "Unrecoverable error" not in output_of_live(stack.procs[name])
    stack.assert_rated_exactly_once()


def test_a_retry_published_while_redis_is_away_waits_for_it_and_is_delivered(tmp_path: Path) -> None:
    """`run_match`'s retries publish with RETRY_PUBLISH_POLICY: sent while the broker is down, the message
    waits for it instead of failing (which left the match QUEUED with no message until the sweep's resend)."""
    server = RedisServer(tmp_path / "redis", persistent=False).start()
    app = Celery("retry-probe", broker=server.url)
    app.conf.broker_connection_retry_on_startup = True
    try:
        server.kill()
        restarter = threading.Timer(2.0, server.start)
        restarter.start()
        with app.connection_for_write() as conn:
            app.send_task(
                "matches.run_match",
                args=[7],
                queue="matches",
                connection=conn,
                retry=True,
                retry_policy=RETRY_PUBLISH_POLICY,
            )
        restarter.join()
        with server.client() as client:
            assert client.llen("matches") == 1
    finally:
        server.stop()
