"""The gateway's token checks off the event loop, over a token source plugged in by configuration.

Layer: gateway. It knows no Django and nothing of `ladder`: a deployment names its verifier in
CARAVANSERAI_GATEWAY_VERIFIER (`module:attribute` of a factory called with no arguments, the ladder's
`ladder.bots.gateway_auth:gateway_verifier` by default), which `load_verifier` resolves with importlib when
the gateway starts. The factory must return quickly (no database, no Django setup): slow setup belongs in
the verifier's `warm_up()`, which the gateway runs off the loop once it serves, so a restarted gateway
accepts connections without waiting for it (a bot connecting meanwhile waits).

`BatchVerifier` is the verifier such a factory usually returns, over a `TokenSource` (the bot records): one
lookup thread of its own takes every token waiting at that moment as one batch and hands it to
`TokenSource.lookup_many`, so a hundred bots reconnecting at once cost a few lookups, not a hundred, and never
queue behind other `to_thread` work. A token found is remembered for `CACHE_SECONDS` (by its SHA-256 digest,
never the token); a revocation heard (the source's `on_revoke` in this process, or `forget()` when the hub
polls one published elsewhere through the session registry's revocation feed) drops the bot's entries at
once, and a lookup that raced with it is not remembered.
"""

from __future__ import annotations

import asyncio
import importlib
import queue
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol

from engine_service.gateway.auth import BotIdentity, TokenVerifier, hash_token

CACHE_SECONDS = 30.0  # a checked token is trusted this long (a revocation drops it at once)
BATCH_MAX = 256  # tokens looked up in one batch, at most
SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")  # module.path:attribute


class TokenSource(Protocol):
    """The bot records a `BatchVerifier` asks; every method blocks and runs off the event loop."""

    def warm_up(self) -> None:
        """Get ready to look tokens up (idempotent, thread-safe); a failure fails the gateway's start."""
        ...

    def lookup_many(self, tokens: list[str]) -> dict[str, BotIdentity]:
        """The identities of the valid, unrevoked tokens among `tokens` (a failure fails each check)."""
        ...

    def on_revoke(self, listener: Callable[[str], None]) -> None:
        """Call `listener(bot_id)` for every revocation made in this process (others reach the registry)."""
        ...


class BatchVerifier:
    """A `TokenVerifier` over a `TokenSource`: batched lookups on its own thread, found tokens remembered."""

    def __init__(self, source: TokenSource, *, warm: bool = False) -> None:
        """`warm=True` warms up at once (blocking); the gateway leaves it to `warm_up()` once it serves."""
        self.source = source
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
        """Warm the source up and listen for its revocations (blocking, idempotent, thread-safe)."""
        with self._warm_lock:
            if self._warm:
                return
            self.source.warm_up()
            self.source.on_revoke(self._revoked)
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
            found = self.source.lookup_many(list(dict.fromkeys(token for token, _ in batch)))
        except Exception as exc:  # the records are unreachable: each waiting check fails, nothing is cached
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

    def _revoked(self, bot_id: str) -> None:
        self.forget(bot_id)
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(bot_id)


def load_verifier(spec: str, *, variable: str = "CARAVANSERAI_GATEWAY_VERIFIER") -> TokenVerifier:
    """The verifier the factory `module:attribute` makes; a `ValueError` naming `variable` if it cannot."""
    if not SPEC.match(spec):
        raise ValueError(f"{variable} must be module.path:factory, not {spec!r}")
    module_name, attribute = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"{variable}={spec!r}: cannot import {module_name} ({exc})") from exc
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ValueError(f"{variable}={spec!r}: {module_name} has no callable {attribute}")
    verifier = factory()
    missing = [m for m in ("verify", "on_revoke") if not callable(getattr(verifier, m, None))]
    if missing:
        raise ValueError(
            f"{variable}={spec!r} made a {type(verifier).__name__}, lacking {', '.join(missing)}"
        )
    return verifier  # type: ignore[no-any-return]
