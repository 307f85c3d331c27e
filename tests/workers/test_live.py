"""The live publisher: match threads only offer (no I/O: an offer returns while a write hangs), the
publisher writes the latest offer of each match once (its actions and their clocks), a failed write is
dropped without raising, and a finished match's pending offer is forgotten."""

from __future__ import annotations

import threading

from django.db import OperationalError

from workers.live import LivePublisher


def test_offers_are_written_latest_first_and_failures_are_dropped():
    written: list[tuple[int, int, dict]] = []

    def publish(match_id, actions, clocks):
        if match_id == 3:
            raise OperationalError("the database is down")
        written.append((match_id, len(actions), clocks))

    live = LivePublisher(publish, interval=3600)
    live.offer(1, [(0, "pass")])
    clocks = {0: [0.25, 29.5], 1: [0.5, None]}
    live.offer(1, [(0, "pass"), (1, "draw:deck")], clocks)  # the later offer replaces the earlier
    clocks[2] = [1.0, 28.0]  # the match goes on: what was offered stays as it was
    live.offer(2, [(0, "pass")])
    live.offer(3, [(0, "pass")])
    live.offer(4, [(0, "pass")])
    live.forget(4)  # its match ended before the publisher woke
    live.flush()
    expected = [(1, 2, {0: [0.25, 29.5], 1: [0.5, None]}), (2, 1, {})]
    assert sorted(written, key=lambda w: w[0]) == expected
    live.flush()  # nothing pending: nothing written again
    assert sorted(written, key=lambda w: w[0]) == expected


def test_an_offer_returns_while_a_write_hangs():
    writing, release = threading.Event(), threading.Event()

    def publish(match_id, actions, clocks):
        writing.set()
        release.wait(120)  # a database that does not answer

    live = LivePublisher(publish, interval=3600)
    live.offer(1, [(0, "pass")])
    flusher = threading.Thread(target=live.flush, daemon=True)
    flusher.start()
    assert writing.wait(120)
    offering = threading.Thread(target=live.offer, args=(2, [(0, "pass"), (1, "pass")]), daemon=True)
    offering.start()
    offering.join(120)  # returns at once unless offering waits on the write
    try:
        assert not offering.is_alive(), "an offer waited on a write in progress"
    finally:
        release.set()
        flusher.join(120)
