"""Bot authentication behind a small interface: a token in, a `BotIdentity` (or None) out.

Layer: gateway; the interface is the gateway's own, and it imports no Django and nothing of `ladder`.
`InMemoryVerifier` serves tests and local runs (tokens kept only as SHA-256 digests); deployments plug a
verifier in by configuration (`verifiers.load_verifier`, CARAVANSERAI_GATEWAY_VERIFIER: the ladder's bot
records by default, `ladder.bots.gateway_auth`). A verifier never raises for a bad token: it returns None and
the gateway refuses with UNAUTHENTICATED.

Revocations reach the gateway two ways: pushed in-process (a verifier calls the listeners registered with
`on_revoke`, and the gateway drops the bot's streams at once), and through the session registry's
revocation feed (`publish_revocation` where the revocation is made, `revocations_since` polled by every
gateway's hub, which then calls the verifier's optional `forget(bot_id)`). A verifier may also have a
blocking `warm_up()`, which the gateway runs off its event loop once it serves.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

METADATA_KEY = "authorization"
SCHEME = "bearer "


@dataclass(frozen=True)
class BotIdentity:
    """Who a token belongs to: the registered bot, its owner, the games it may play and its capacity."""

    bot_id: str
    name: str
    owner: str
    games: tuple[str, ...]
    max_concurrent: int = 1

    @staticmethod
    def of(obj: Any) -> BotIdentity:
        """Convert any object with the ladder's BotIdentity fields (bot_id may be an int)."""
        return BotIdentity(
            bot_id=str(obj.bot_id),
            name=str(obj.name),
            owner=str(obj.owner),
            games=tuple(str(g) for g in obj.games),
            max_concurrent=max(1, int(obj.max_concurrent)),
        )


class TokenVerifier(Protocol):
    async def verify(self, token: str) -> BotIdentity | None:
        """The identity of a valid, unrevoked token, else None."""
        ...

    def on_revoke(self, listener: Callable[[str], None]) -> None:
        """Call `listener(bot_id)` whenever a bot's token is revoked or rotated."""
        ...


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_from_metadata(metadata: Iterable[tuple[str, Any]] | None) -> str | None:
    """The bearer token of `authorization: Bearer <token>` metadata, else None."""
    for key, value in metadata or ():
        if key.lower() == METADATA_KEY and isinstance(value, str) and value.lower().startswith(SCHEME):
            token = value[len(SCHEME) :].strip()
            return token or None
    return None


@dataclass
class InMemoryVerifier:
    """Tokens held as digests in memory; `add` returns nothing secret, `revoke` tells the listeners."""

    _by_digest: dict[str, BotIdentity] = field(default_factory=dict)
    _listeners: list[Callable[[str], None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, token: str, identity: BotIdentity) -> None:
        with self._lock:
            self._by_digest[hash_token(token)] = identity

    async def verify(self, token: str) -> BotIdentity | None:
        with self._lock:
            return self._by_digest.get(hash_token(token))

    def forget(self, bot_id: str) -> None:
        """Invalidate a bot's tokens without telling the listeners (a revocation heard from elsewhere)."""
        with self._lock:
            for digest in [d for d, ident in self._by_digest.items() if ident.bot_id == bot_id]:
                del self._by_digest[digest]

    def revoke(self, bot_id: str) -> None:
        self.forget(bot_id)
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(bot_id)

    def on_revoke(self, listener: Callable[[str], None]) -> None:
        with self._lock:
            self._listeners.append(listener)

    @staticmethod
    def from_file(path: str | Path) -> InMemoryVerifier:
        """Dev tokens from a JSON list of {"token", "bot_id", "name", "owner", "games", "max_concurrent"}."""
        try:
            entries = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read dev tokens from {path}: {exc}") from exc
        if not isinstance(entries, list):
            raise ValueError(f"{path}: expected a JSON list of token entries")
        verifier = InMemoryVerifier()
        for i, entry in enumerate(entries):
            try:
                verifier.add(
                    str(entry["token"]),
                    BotIdentity(
                        bot_id=str(entry["bot_id"]),
                        name=str(entry.get("name", entry["bot_id"])),
                        owner=str(entry.get("owner", "local")),
                        games=tuple(entry.get("games", ())),
                        max_concurrent=int(entry.get("max_concurrent", 1)),
                    ),
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{path}: entry {i} is malformed ({exc!r})") from exc
        return verifier
