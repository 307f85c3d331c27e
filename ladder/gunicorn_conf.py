"""gunicorn's settings for the ladder's web server, wherever it is started (`gunicorn ladder.wsgi:application
-c python:ladder.gunicorn_conf --bind ... --workers N`: compose, Kubernetes, the Procfile, the demo).

Slow and idle clients must not starve the server. Sync workers read a request in the one thread they have,
so three sockets sending half a request stalled `/healthz` on two of them. Here:
- gthread workers: a connection that has sent nothing waits in the worker's poller, not in a thread, and a
  request is read by one of CARAVANSERAI_WEB_THREADS threads (default 4), so one slow client holds one
  thread, not a whole worker;
- in every deployment a buffering reverse proxy (HAProxy, infra/haproxy-web.cfg) is in front and gunicorn
  listens on a private address only: the proxy passes a request on only once its headers and body are
  complete, and cuts a client that takes longer than its `timeout http-request`, so a slow client never
  reaches a thread at all.
`timeout` is the heartbeat after which the arbiter restarts a stuck worker, `keepalive` how long an idle
kept-alive connection (the proxy's) stays open in the poller.

Configuration only: it imports nothing of the project and starts nothing; `--bind` and `--workers` come from
the command line of each deployment.
"""

from __future__ import annotations

import os


def _threads(raw: str) -> int:
    if not raw.strip().isdigit() or int(raw) < 1:
        raise SystemExit(f"CARAVANSERAI_WEB_THREADS must be a whole number of at least 1, not {raw!r}")
    return int(raw)


worker_class = "gthread"
threads = _threads(os.environ.get("CARAVANSERAI_WEB_THREADS", "4"))
timeout = 60
graceful_timeout = 20
keepalive = 5
accesslog = "-"
