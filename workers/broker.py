"""The embedded Celery broker: kombu's SQLAlchemy transport on a SQLite file, polling every 0.2 s.

Registered as the kombu transport alias `cvsqlite` (URL `cvsqlite+sqlite:///var/celery-broker.sqlite3`).
It is kombu's own transport (each fetch takes SQLite's write lock with BEGIN IMMEDIATE, so several worker
processes, beat and the web process share one file safely) with a shorter poll than kombu's 1 s default,
which would otherwise add up to a second of latency to every task, and a queue declared by two processes at
once (kombu guards its look-then-insert with a lock of its own process only: the second insert fails on the
unique name, and kombu leaves its session unusable) is found, not failed. Unacknowledged tasks of a pool child
that dies are requeued by its worker (reject_on_worker_lost); tasks held by a worker that dies entirely are
recovered by `workers.matches.sweep_stale`.

Layer: worker infrastructure; no Django, no tasks.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import TRANSPORT_ALIASES
from kombu.transport.sqlalchemy import Channel as SqlAlchemyChannel
from kombu.transport.sqlalchemy import Transport as SqlAlchemyTransport
from sqlalchemy.exc import IntegrityError

ALIAS = "cvsqlite"


class Channel(SqlAlchemyChannel):
    def _get_or_create(self, queue: str) -> Any:
        try:
            return super()._get_or_create(queue)  # type: ignore[misc]  # not in kombu's stubs
        except IntegrityError:  # another process inserted the queue between kombu's look and its insert
            self.session.rollback()
            return self.session.query(self.queue_cls).filter(self.queue_cls.name == queue).one()


class Transport(SqlAlchemyTransport):
    Channel = Channel
    polling_interval = 0.2


def register() -> None:
    TRANSPORT_ALIASES.setdefault(ALIAS, "workers.broker:Transport")
