"""Celery's broker transports: the embedded one (kombu's SQLAlchemy transport on a SQLite file, polling every
0.2 s) and kombu's Redis transport with one guard for a lost connection.

Embedded: registered as the kombu transport alias `cvsqlite` (URL `cvsqlite+sqlite:///var/celery-broker.sqlite3`).
It is kombu's own transport (each fetch takes SQLite's write lock with BEGIN IMMEDIATE, so several worker
processes, beat and the web process share one file safely) with a shorter poll than kombu's 1 s default,
which would otherwise add up to a second of latency to every task, and a queue declared by two processes at
once (kombu guards its look-then-insert with a lock of its own process only: the second insert fails on the
unique name, and kombu leaves its session unusable) is found, not failed. Unacknowledged tasks of a pool child
that dies are requeued by its worker (reject_on_worker_lost); tasks held by a worker that dies entirely are
recovered by `workers.matches.sweep_stale`.

Redis (`RedisTransport`, Celery's `broker_transport` when REDIS_URL is a redis:// or rediss:// URL): kombu's
transport, whose channel keeps its connection pool once its broker connection has let go of the transport
(see `RedisChannel`). Without it a Redis restart made every worker with a task in flight exit with
"Unrecoverable error: AttributeError('NoneType' object has no attribute 'hostname')".

Layer: worker infrastructure; no Django, no tasks.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis
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


class RedisChannel(kombu_redis.Channel):
    """kombu's Redis channel, whose pools survive a close made after its transport was let go.

    The crash it prevents (celery 5.7.0, kombu 5.7.0, redis-py 8.1.0; no release fixes it): on a lost broker
    connection the worker's consumer (`Consumer.on_connection_error_after_connected`) calls
    `connection.collect()` and then `connection.close()`. `collect()` closes the default channel, whose close
    first drains the BRPOP in progress: that read fails (Redis is gone) and the close stops there, caught as a
    connection error, with the channel still open; `collect()` then detaches the transport
    (`transport.client = None`). `close()` closes the same channel again: it drops its pools and requeues its
    unacknowledged messages (the tasks in flight, acks_late), which needs a new pool, built from
    `transport.client.hostname`: AttributeError, which is no connection error, so the worker's main process
    exits. celery 5.6 called `collect()` only.

    Here the pools are disconnected but kept once the transport is detached. The requeue goes through the
    kept pool: Redis still down, it is a connection error, which Celery ignores there (the messages stay in
    Redis's unacked set until the visibility timeout, or are gone with Redis's data); Redis back already,
    they are requeued as kombu means to (a match's lease keeps a second delivery from playing it twice). A
    task still running on the old channel acknowledges its message through the same pool once Redis is back
    (redis-py reconnects it) instead of failing on the same AttributeError.
    """

    def _disconnect_pools(self) -> None:
        if self.connection.client is not None:
            super()._disconnect_pools()  # type: ignore[misc]  # not in kombu's stubs
            return
        for pool in (self._pool, self._async_pool):  # type: ignore[attr-defined]  # not in kombu's stubs
            if pool is not None:
                pool.disconnect()


class RedisTransport(kombu_redis.Transport):
    Channel = RedisChannel


REDIS_TRANSPORT = f"{__name__}:RedisTransport"  # Celery's `broker_transport` for a Redis broker URL


def register() -> None:
    TRANSPORT_ALIASES.setdefault(ALIAS, "workers.broker:Transport")
