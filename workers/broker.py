"""The embedded Celery broker: kombu's SQLAlchemy transport on a SQLite file, polling every 0.2 s.

Registered as the kombu transport alias `cvsqlite` (URL `cvsqlite+sqlite:///var/celery-broker.sqlite3`).
It is kombu's own transport (each fetch takes SQLite's write lock with BEGIN IMMEDIATE, so several worker
processes, beat and the web process share one file safely) with a shorter poll than kombu's 1 s default,
which would otherwise add up to a second of latency to every task. Unacknowledged tasks of a pool child
that dies are requeued by its worker (reject_on_worker_lost); tasks held by a worker that dies entirely are
recovered by `workers.matches.sweep_stale`.

Layer: worker infrastructure; no Django, no tasks.
"""

from __future__ import annotations

from kombu.transport import TRANSPORT_ALIASES
from kombu.transport.sqlalchemy import Transport as SqlAlchemyTransport

ALIAS = "cvsqlite"


class Transport(SqlAlchemyTransport):
    polling_interval = 0.2


def register() -> None:
    TRANSPORT_ALIASES.setdefault(ALIAS, "workers.broker:Transport")
