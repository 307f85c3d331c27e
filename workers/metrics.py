"""Prometheus metrics of a worker process: matches in flight, decisions, match durations, task outcomes,
retries and infrastructure failures (prometheus-client), served over HTTP by the worker itself.

Set CARAVANSERAI_WORKER_METRICS_PORT to serve them (`/metrics` on that port, all interfaces of
CARAVANSERAI_WORKER_METRICS_ADDR, default 127.0.0.1); unset or 0, nothing is served and the counters cost
a few dictionary look-ups. Several worker processes on one host need a port each. Queued and running
matches per ladder, counted from the database, are the web server's (`/metrics` there).

Layer: worker infrastructure. It counts; it must not change what a task does.
"""

from __future__ import annotations

import logging
import os

from prometheus_client import Counter, Gauge, Histogram, start_http_server

from engine_service.settings_env import env_int, env_str

log = logging.getLogger("caravanserai.workers")

MATCHES_IN_FLIGHT = Gauge(
    "caravanserai_worker_matches_in_flight", "Matches this worker process is playing now", ["game"]
)
DECISIONS = Counter(
    "caravanserai_worker_decisions_total", "Decisions played by this worker's matches", ["game"]
)
MATCH_SECONDS = Histogram(
    "caravanserai_worker_match_duration_seconds",
    "Wall time of a played match, first decision to result",
    ["game"],
    buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800),
)
TASK_OUTCOMES = Counter(
    "caravanserai_worker_match_tasks_total",
    "run_match results: done, already-done, not-runnable, error, lease-lost, dropped, raised (a retry)",
    ["outcome"],
)
RETRIES = Counter("caravanserai_worker_task_retries_total", "run_match retries sent, by cause", ["cause"])
INFRASTRUCTURE_FAILURES = Counter(
    "caravanserai_worker_infrastructure_failures_total",
    "Matches interrupted by an infrastructure failure (never rated), by exception type",
    ["kind"],
)


def serve_from_env() -> int | None:
    """Start the metrics server when CARAVANSERAI_WORKER_METRICS_PORT is set; the port, or None."""
    port = env_int(os.environ, "CARAVANSERAI_WORKER_METRICS_PORT", 0, minimum=0)
    if port == 0:
        return None
    addr = env_str(os.environ, "CARAVANSERAI_WORKER_METRICS_ADDR", "127.0.0.1")
    start_http_server(port, addr=addr)
    log.info("worker metrics on http://%s:%s/metrics", addr, port)
    return port
