"""Leases: short-lived, renewed ownership of a key ("match:42"), shared by every worker process.

Layer: worker infrastructure. A running match holds `match:<id>` and a background thread renews it every
third of its time to live; a process killed with SIGKILL stops renewing, so its match is free again within one
lease period, and no two processes ever play the same match at once. Two backends, same semantics: Redis
(`SET NX PX` plus compare-and-renew scripts) when REDIS_URL is set, else a SQLite file under var/
(`BEGIN IMMEDIATE` per operation). It must not import Django models or know about matches.

Renewal: one thread per process renews all the leases held in it (a worker process holds one per match in
flight). A renewal that finds the key gone or owned by another marks the lease `lost`; its holder stops.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Protocol

from engine_service.settings_env import env_str

LEASE_PREFIX = "cvs:lease:"  # the Redis key prefix of leases; CARAVANSERAI_LEASE_PREFIX overrides it
_RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


class LeaseStore(Protocol):
    def acquire(self, key: str, owner: str, ttl: float) -> bool: ...
    def renew_many(self, held: list[tuple[str, str]], ttl: float) -> list[bool]: ...
    def release(self, key: str, owner: str) -> None: ...
    def holder(self, key: str) -> str | None: ...


class RedisLeases:
    def __init__(self, url: str, prefix: str = LEASE_PREFIX) -> None:
        import redis

        self.client = redis.Redis.from_url(
            url, decode_responses=True, socket_timeout=5, socket_connect_timeout=5
        )
        self.prefix = prefix
        self._renew = self.client.register_script(_RENEW)
        self._release = self.client.register_script(_RELEASE)

    def acquire(self, key: str, owner: str, ttl: float) -> bool:
        return bool(self.client.set(self.prefix + key, owner, nx=True, px=max(1, int(ttl * 1000))))

    def renew_many(self, held: list[tuple[str, str]], ttl: float) -> list[bool]:
        """Renew many (key, owner) leases in one round trip."""
        pipe = self.client.pipeline(transaction=False)
        for key, owner in held:
            self._renew(keys=[self.prefix + key], args=[owner, max(1, int(ttl * 1000))], client=pipe)
        return [bool(done) for done in pipe.execute()]

    def release(self, key: str, owner: str) -> None:
        self._release(keys=[self.prefix + key], args=[owner])

    def holder(self, key: str) -> str | None:
        value = self.client.get(self.prefix + key)  # str: the client decodes responses
        return value.decode() if isinstance(value, bytes) else value


class SqliteLeases:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._conn().execute(
            "CREATE TABLE IF NOT EXISTS leases (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)"
        )

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.conn = conn
        return conn

    def _write(self, held: list[tuple[str, str]], ttl: float, *, must_own: bool) -> list[bool]:
        """Take or renew each (key, owner) in one write transaction."""
        conn = self._conn()
        now = time.time()
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = [self._write_one(conn, key, owner, now, ttl, must_own=must_own) for key, owner in held]
            conn.execute("COMMIT")
            return done
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @staticmethod
    def _write_one(
        conn: sqlite3.Connection, key: str, owner: str, now: float, ttl: float, *, must_own: bool
    ) -> bool:
        row = conn.execute("SELECT owner, expires FROM leases WHERE key = ?", (key,)).fetchone()
        held_by_other = row is not None and row[1] > now and row[0] != owner
        if held_by_other or (must_own and (row is None or row[0] != owner)):
            return False
        conn.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (key, owner, now + ttl))
        return True

    def acquire(self, key: str, owner: str, ttl: float) -> bool:
        return self._write([(key, owner)], ttl, must_own=False)[0]

    def renew_many(self, held: list[tuple[str, str]], ttl: float) -> list[bool]:
        return self._write(held, ttl, must_own=True)

    def release(self, key: str, owner: str) -> None:
        self._conn().execute("DELETE FROM leases WHERE key = ? AND owner = ?", (key, owner))

    def holder(self, key: str) -> str | None:
        row = (
            self._conn()
            .execute("SELECT owner FROM leases WHERE key = ? AND expires > ?", (key, time.time()))
            .fetchone()
        )
        return None if row is None else str(row[0])


_store: LeaseStore | None = None
_store_pid: int | None = None
_lock = threading.Lock()


def store() -> LeaseStore:
    """This process's lease store (rebuilt after a fork)."""
    global _store, _store_pid
    with _lock:
        if _store is None or _store_pid != os.getpid():
            url = env_str(os.environ, "REDIS_URL", "")
            if url:
                _store = RedisLeases(
                    url, prefix=env_str(os.environ, "CARAVANSERAI_LEASE_PREFIX", LEASE_PREFIX)
                )
            else:
                from workers.config import var_dir

                _store = SqliteLeases(var_dir() / "worker-leases.sqlite3")
            _store_pid = os.getpid()
        return _store


def reset_after_fork() -> None:
    global _store
    with _lock:
        _store = None


def new_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class _Renewer:
    """One thread per process renews every lease held in it, each every third of its time to live, in one
    round trip per store: a process playing hundreds of matches runs one renewal thread, not hundreds, and
    a busy interpreter delays it by one wait for the GIL, not one per lease."""

    def __init__(self) -> None:
        self._held: dict[int, tuple[Lease, float]] = {}  # id(lease) -> (lease, next renewal, monotonic)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pid = 0

    def add(self, lease: Lease) -> None:
        with self._lock:
            if self._pid != os.getpid():  # first use in this process (or after a fork)
                self._pid, self._held = os.getpid(), {}
                threading.Thread(target=self._run, name="lease-renewer", daemon=True).start()
            self._held[id(lease)] = (lease, time.monotonic() + lease.ttl / 3)
        self._wake.set()

    def remove(self, lease: Lease) -> None:
        with self._lock:
            self._held.pop(id(lease), None)

    def _due(self) -> tuple[list[Lease], float]:
        now = time.monotonic()
        with self._lock:
            due = [lease for lease, at in self._held.values() if at <= now]
            for lease in due:
                self._held[id(lease)] = (lease, now + lease.ttl / 3)
            upcoming = min((at for _, at in self._held.values()), default=now + 1.0)
        return due, max(0.01, upcoming - now)

    def _run(self) -> None:
        while True:
            due, wait = self._due()
            batches: dict[tuple[int, float], list[Lease]] = {}
            for lease in due:
                batches.setdefault((id(lease.leases), lease.ttl), []).append(lease)
            for batch in batches.values():
                _renew_batch(batch)
            self._wake.wait(wait)
            self._wake.clear()


def _renew_batch(batch: list[Lease]) -> None:
    """Renew leases of one store and ttl in one round trip; mark the ones found gone or taken as lost."""
    try:
        renewed = batch[0].leases.renew_many([(lease.key, lease.owner) for lease in batch], batch[0].ttl)
    except Exception:  # a store hiccup: try again next period; a lease lasts three of them
        return
    for lease, ok in zip(batch, renewed, strict=True):
        if not ok:
            lease.mark_lost()


_RENEWER = _Renewer()


class Lease:
    """`with Lease(key, ttl) as lease:` holds `key` while the block runs (renewed by the process's renewal
    thread); `acquired` says whether it was free. `lost` turns True if a renewal found the key gone or owned
    by another: the holder must stop (`run_match` abandons the match at its next decision)."""

    def __init__(
        self, key: str, ttl: float, leases: LeaseStore | None = None, owner: str | None = None
    ) -> None:
        self.key = key
        self.ttl = ttl
        self.leases = leases or store()
        self.owner = owner or new_owner()
        self.acquired = False
        self.lost = False

    def acquire(self) -> bool:
        """Take the key if it is free (renewed from then on); whether it was. The store's errors propagate."""
        self.acquired = self.leases.acquire(self.key, self.owner, self.ttl)
        if self.acquired:
            _RENEWER.add(self)
        return self.acquired

    def release(self) -> None:
        """Stop renewing and give the key back if still held (an unreachable store lets it expire)."""
        _RENEWER.remove(self)
        if self.acquired and not self.lost:
            with contextlib.suppress(Exception):  # if the store is unreachable the lease expires by itself
                self.leases.release(self.key, self.owner)

    def __enter__(self) -> Lease:
        self.acquire()
        return self

    def mark_lost(self) -> None:
        self.lost = True
        _RENEWER.remove(self)

    def __exit__(self, *exc: object) -> None:
        self.release()
