"""Prometheus metrics of a bot host: hosted processes running now, sandbox starts, crashes and restarts
(prometheus-client), served over HTTP by the host itself when CARAVANSERAI_BOT_HOST_METRICS_PORT is set.

Layer: bot host infrastructure. It counts; it must not change what the host does.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterable
from typing import Any

from prometheus_client import Counter, Gauge

RUNNING = Gauge("caravanserai_hosted_bots_running", "Hosted bot processes running now", ["runtime"])
STARTS = Counter("caravanserai_hosted_bot_starts_total", "Hosted versions started on this host", ["runtime"])
CRASHES = Counter(
    "caravanserai_hosted_bot_crashes_total", "Hosted bot processes that ended (any exit)", ["runtime"]
)
RESTARTS = Counter(
    "caravanserai_hosted_bot_restarts_total", "Hosted bot processes restarted after a backoff", ["runtime"]
)
RUNTIMES = ("python", "node")


def set_running(entries: Iterable[Any]) -> None:
    """`entries` are the host's running records (an `assignment.runtime` and a `process.state` each)."""
    counts = Tally(e.assignment.runtime for e in entries if e.process.state == "running")
    for runtime in RUNTIMES:
        RUNNING.labels(runtime).set(counts.get(runtime, 0))
