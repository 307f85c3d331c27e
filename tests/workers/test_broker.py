"""The embedded broker (`workers.broker`) with several processes on one SQLite file: queues declared by
many processes at the same moment are each created once, every declaration succeeds and every channel can
publish afterwards (kombu's own transport failed about half of them here with a unique-name error, and left
that channel unusable)."""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.synchronize
import queue
from pathlib import Path

from kombu import Connection

from workers.broker import ALIAS, register

PROCESSES = 6
QUEUES = [f"race-{i}" for i in range(30)]


def _declare_all(
    url: str, barrier: multiprocessing.synchronize.Barrier, errors: multiprocessing.Queue[str]
) -> None:
    register()
    with Connection(url) as connection:
        channel = connection.default_channel
        assert channel.session is not None  # the engine and tables first: the race is on the queue rows alone
        barrier.wait()
        for name in QUEUES:
            try:
                channel.queue_declare(name)
            except Exception as exc:  # reported to the test, which names it
                errors.put(f"{name}: {type(exc).__name__}: {exc}")
        channel.basic_publish(channel.prepare_message("after the race"), "", QUEUES[0])


def test_processes_declaring_the_same_queues_at_once_all_succeed(tmp_path: Path) -> None:
    register()
    url = f"{ALIAS}+sqlite:///{tmp_path / 'broker.sqlite3'}"
    with Connection(url) as connection:
        assert connection.default_channel.session is not None  # create the tables before the race
    context = multiprocessing.get_context("spawn")
    barrier, errors = context.Barrier(PROCESSES), context.Queue()
    processes = [context.Process(target=_declare_all, args=(url, barrier, errors)) for _ in range(PROCESSES)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
    found = []
    with contextlib.suppress(queue.Empty):
        while True:
            found.append(errors.get(timeout=0.5))
    assert found == []
    assert [p.exitcode for p in processes] == [0] * PROCESSES
    with Connection(url) as connection:
        channel = connection.default_channel
        names = [q.name for q in channel.session.query(channel.queue_cls).all()]
        assert sorted(n for n in names if n.startswith("race-")) == sorted(QUEUES)  # each created once
        published = [channel.basic_get(QUEUES[0], no_ack=True) for _ in range(PROCESSES)]
        assert [m.body if m is not None else None for m in published] == [b"after the race"] * PROCESSES
