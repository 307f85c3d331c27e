"""The Celery application, configured from the Django settings (`workers.config.celery_settings`, with any
`CELERY_<NAME>` Django setting taking precedence).

Run a worker: `celery -A workers.celery_app worker -Q matches,matchmaking,tournaments -c 2`; beat:
`celery -A workers.celery_app beat`; match analyses (CPU-bound, one at a time per process, on a worker of
their own): `celery -A workers.celery_app worker -Q analysis -P prefork -c 1`. With no REDIS_URL the broker
is the embedded SQLite one (see `workers.config`), so both run with no server at all.

gRPC channels and the session registry connection are per process and created after fork: the
`worker_process_init` hook drops anything inherited from the parent (`workers.seats.reset_after_fork`).

Layer: orchestration wiring. It must not run matches itself or import task modules before Django is set up
(they are listed in `include` and imported by the worker after the Django fixup).
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.contrib.django.task import DjangoTask
from celery.signals import worker_init, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings.base")

TASK_MODULES = ["workers.matches", "workers.matchmaking", "workers.tournaments", "workers.analysis"]


def _configure(app: Celery[Any]) -> None:
    import django
    from django.conf import settings

    django.setup()
    from workers.config import broker_transport, celery_settings

    conf = celery_settings()
    for name in list(conf):
        override = getattr(settings, f"CELERY_{name.upper()}", None)
        if override is not None:
            conf[name] = override
    if getattr(settings, "CELERY_BROKER_TRANSPORT", None) is None:  # the transport follows the final URL
        conf["broker_transport"] = broker_transport(conf["broker_url"])
    app.conf.update(conf)


# DjangoTask (what Celery's Django fixup would pick) named here so tasks type with `delay_on_commit`
app: Celery[DjangoTask[Any, Any]] = Celery("caravanserai", include=TASK_MODULES, task_cls=DjangoTask)
_configure(app)


@worker_process_init.connect
def _after_fork(**_: object) -> None:
    """A pool child starts: new gRPC channels, registry and lease connections (Celery's Django fixup already
    drops the database connections inherited from the parent)."""
    from workers import leases, seats

    seats.reset_after_fork()
    leases.reset_after_fork()


@worker_init.connect
def _serve_metrics(**_: object) -> None:
    """The worker's Prometheus endpoint, when CARAVANSERAI_WORKER_METRICS_PORT is set (`workers.metrics`)."""
    from workers import metrics

    metrics.serve_from_env()


@worker_init.connect
def _report_capacity(sender: Any = None, **_: object) -> None:
    """A worker that plays matches reports its measured room for matchmaking (`workers.capacity`)."""
    from workers import capacity, seats
    from workers.config import QUEUE_MATCHES

    consumed = app.amqp.queues.consume_from
    if consumed and QUEUE_MATCHES not in consumed:
        return  # the scheduler: it plays no match
    threads = int(getattr(sender, "concurrency", 0) or app.conf.worker_concurrency)
    capacity.start_reporting(seats.registry(), threads, seats.search_pool())
