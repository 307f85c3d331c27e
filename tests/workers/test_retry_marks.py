"""Retry marks on the process's lease store (Redis in the PostgreSQL + Redis run, the SQLite file without):
held while the marking process lives, dropped by the retry wherever it runs, at the deadline, or by the
store once a killed process stops renewing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

from tests.workers.stack import wait_for
from workers import leases, retry_marks

HANG_GUARD = 120.0  # the longest a wait below may take before the test is called stuck; never a measure
TTL = 2.0  # renewed every third of it: a renewal thread held up for over 1.3 s would lose the mark


def key() -> str:
    return f"retrying:test-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def test_a_mark_outlives_its_time_to_live_until_the_retry_drops_it() -> None:
    store, mark = leases.store(), key()
    assert retry_marks.mark(mark, "task-1", TTL, HANG_GUARD * 2)
    time.sleep(2.5 * TTL)  # only renewals keep it this long
    assert store.holder(mark) == "task-1"
    retry_marks.unmark(mark, "task-1")
    assert store.holder(mark) is None


def test_a_retry_run_by_another_process_drops_the_mark_and_the_holder_stops_renewing() -> None:
    store, mark = leases.store(), key()
    assert retry_marks.mark(mark, "task-2", TTL, HANG_GUARD * 2)
    held = retry_marks._held[(mark, "task-2")]
    child = f"from workers import retry_marks; retry_marks.unmark({mark!r}, 'task-2')"
    subprocess.run([sys.executable, "-c", child], check=True, timeout=HANG_GUARD)
    assert store.holder(mark) is None
    wait_for(lambda: held.lease.lost, HANG_GUARD, "the holder's renewal to find the mark gone")
    assert store.holder(mark) is None
    retry_marks.unmark(mark, "task-2")  # the local record and its timer go; nothing else changes


def test_a_mark_goes_at_its_deadline_and_an_earlier_deadline_spares_a_later_mark() -> None:
    store, mark = leases.store(), key()
    assert retry_marks.mark(mark, "task-3", TTL, 0.1)
    wait_for(lambda: store.holder(mark) is None, HANG_GUARD, "the mark's deadline")
    assert retry_marks.mark(mark, "task-3", TTL, 0.1)
    earlier = retry_marks._held[(mark, "task-3")].lease
    retry_marks.unmark(mark, "task-3")
    assert retry_marks.mark(mark, "task-3", TTL, HANG_GUARD * 2)
    retry_marks.unmark(mark, "task-3", only=earlier)  # what the earlier mark's timer does
    assert store.holder(mark) == "task-3"
    retry_marks.unmark(mark, "task-3")


def test_a_killed_process_marks_nothing_once_its_mark_expires() -> None:
    store, mark = leases.store(), key()
    child = (
        f"import sys, time; from workers import retry_marks; retry_marks.mark({mark!r}, 'task-4', {TTL}, 600); "
        "print('marked', flush=True); time.sleep(600)"
    )
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "marked"
        assert store.holder(mark) == "task-4"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(HANG_GUARD)
    wait_for(lambda: store.holder(mark) is None, HANG_GUARD, "the unrenewed mark to expire")
