"""The Django-backed token verifier: asks the ladder's bot records, and forwards revocations to gateways.

Layer: gateway adapter to the ladder. Django is imported only here, lazily: `warm_up()` runs `django.setup()`
with `ladder.settings.base` (or DJANGO_SETTINGS_MODULE) and loads the selector, off the event loop; the
gateway binds and serves first and warms the verifier up next (a bot connecting meanwhile waits for it), so a
restarted gateway accepts connections without waiting for Django.

Token checks never run on the event loop: one lookup thread of the verifier's own takes every token waiting
at that moment as one batch, on one database connection closed after the batch (none is left open in the
thread: stale after a database restart, or blocking a test database drop), so a hundred bots reconnecting at
once cost a few connections, not a hundred, and never queue behind other `sync_to_async` work. A token found
is remembered for `CACHE_SECONDS` (by its SHA-256 digest, never the token); a revocation heard (the signal in
this process, or `forget()` when the gateway polls one published elsewhere) drops the bot's entries at once,
and a lookup that raced with it is not remembered.

Revocation crosses processes: the ladder sends `ladder.bots.signals.bot_token_revoked(bot_id=)` in its own
process; `connect_revocation_publisher()` (called once in the ladder process, e.g. from the bots app's
`ready()`) publishes each one to the session registry, which every gateway polls twice a second and then
drops the bot's streams with UNAUTHENTICATED. In a process that runs both (tests, the demo), the verifier
also hears the signal directly.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from engine_service.gateway.auth import BotIdentity, hash_token

CACHE_SECONDS = 30.0  # a checked token is trusted this long (a revocation drops it at once)
BATCH_MAX = 256  # tokens looked up on one database connection, at most

_publisher_lock = threading.Lock()
_publisher_connected = False


def setup_django(settings_module: str = "ladder.settings.base") -> None:
    import django
    from django.apps import apps

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", settings_module)
    if not apps.ready:
        django.setup()


class DjangoVerifier:
    """`TokenVerifier` over `ladder.bots.selectors.bot_identity_for_token` (tokens are stored hashed there)."""

    def __init__(self, settings_module: str = "ladder.settings.base", *, warm: bool = True) -> None:
        """`warm=False` leaves Django's setup to `warm_up()` (or the first lookup): the gateway's start."""
        self.settings_module = settings_module
        self._listeners: list[Callable[[str], None]] = []
        self._lock = threading.Lock()
        self._warm_lock = threading.Lock()
        self._warm = False
        self._cache: dict[str, tuple[BotIdentity, float]] = {}
        self._generation = 0  # bumped by every revocation heard: a lookup that raced with one is not cached
        self._queue: queue.SimpleQueue[tuple[str, Future[BotIdentity | None]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        if warm:
            self.warm_up()

    def warm_up(self) -> None:
        """Set Django up and listen for revocations (blocking, idempotent, thread-safe)."""
        with self._warm_lock:
            if self._warm:
                return
            setup_django(self.settings_module)
            from ladder.bots import selectors  # noqa: F401  (imported once here, not on the first lookup)
            from ladder.bots.signals import bot_token_revoked

            bot_token_revoked.connect(self._revoked, weak=False, dispatch_uid=f"gateway-verifier-{id(self)}")
            self._warm = True

    async def verify(self, token: str) -> BotIdentity | None:
        digest = hash_token(token) if isinstance(token, str) else ""
        with self._lock:
            cached = self._cache.get(digest)
        if cached is not None and cached[1] > time.monotonic():
            return cached[0]
        future: Future[BotIdentity | None] = Future()
        self._queue.put((token, future))
        self._ensure_thread()
        return await asyncio.wrap_future(future)

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="token-lookups", daemon=True)
                self._thread.start()

    def _serve(self) -> None:
        """The lookup thread: every token waiting now, as one batch, then the next."""
        while True:
            batch = [self._queue.get()]
            while len(batch) < BATCH_MAX:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            self._lookup_batch(batch)

    def _lookup_batch(self, batch: list[tuple[str, Future[BotIdentity | None]]]) -> None:
        with self._lock:
            generation = self._generation
        try:
            self.warm_up()
            found = _lookup_many([token for token, _ in batch])
        except Exception as exc:  # the database is down: each waiting check fails, nothing is cached
            for _, future in batch:
                future.set_exception(exc)
            return
        until = time.monotonic() + CACHE_SECONDS
        with self._lock:
            for token, _ in batch:
                identity = found.get(token)
                if identity is not None and generation == self._generation:
                    self._cache[hash_token(token)] = (identity, until)
        for token, future in batch:
            future.set_result(found.get(token))

    def forget(self, bot_id: str) -> None:
        """Trust no remembered token of this bot (a revocation heard from elsewhere): the next check asks."""
        with self._lock:
            self._generation += 1
            for digest in [d for d, (identity, _) in self._cache.items() if identity.bot_id == bot_id]:
                del self._cache[digest]

    def on_revoke(self, listener: Callable[[str], None]) -> None:
        with self._lock:
            self._listeners.append(listener)

    def _revoked(self, sender: Any = None, *, bot_id: Any, **kwargs: Any) -> None:
        self.forget(str(bot_id))
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(str(bot_id))


def _lookup_many(tokens: list[str]) -> dict[str, BotIdentity]:
    """The identities of the valid tokens among `tokens`, on one database connection closed afterwards."""
    from django.db import connection

    from ladder.bots.selectors import bot_identity_for_token

    found: dict[str, BotIdentity] = {}
    try:
        for token in dict.fromkeys(tokens):
            identity = bot_identity_for_token(token=token)
            if identity is not None:
                found[token] = BotIdentity.of(identity)
    finally:
        connection.close()
    return found


def connect_revocation_publisher() -> None:
    """In the ladder's process: publish every `bot_token_revoked` to the session registry (idempotent)."""
    global _publisher_connected
    with _publisher_lock:
        if _publisher_connected:
            return
        from ladder.bots.signals import bot_token_revoked

        bot_token_revoked.connect(_publish, weak=False, dispatch_uid="gateway-revocation-publisher")
        _publisher_connected = True


def _publish(sender: Any = None, *, bot_id: Any, **kwargs: Any) -> None:
    from engine_service.gateway.config import GatewayConfig
    from engine_service.gateway.registry import open_registry

    config = GatewayConfig.from_env()
    registry = open_registry(
        redis_url=config.redis_url,
        path=config.registry_path,
        prefix=config.registry_prefix,
        ttl=config.session_ttl,
    )
    try:
        registry.publish_revocation(str(bot_id))
    finally:
        registry.close()


def disconnect_revocation_publisher() -> None:
    """Undo `connect_revocation_publisher` (tests)."""
    global _publisher_connected
    with _publisher_lock:
        from ladder.bots.signals import bot_token_revoked

        bot_token_revoked.disconnect(dispatch_uid="gateway-revocation-publisher")
        _publisher_connected = False
