"""Whether a bot is connected now: its live streams, read from the gateways' session registry.

Layer: a read-only adapter between the ladder and `engine_service.gateway.registry` (Redis when REDIS_URL
is set, else the gateway's SQLite file, as `GatewayConfig.from_env()` says). One registry object per
process, opened lazily and opened again after a fork or when the configuration changes (as
`workers/seats.py` does). A registry that cannot be opened or read gives a presence whose `known` is False
("unknown"), never an exception: a page must render while the store is down. It must not write to the
registry (no register, heartbeat or revocation) and must never hand out a gateway's relay address, which
is internal: `StreamPresence` has no field for it.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from engine_service.gateway.config import GatewayConfig
from engine_service.gateway.registry import SessionInfo, SessionRegistry, open_registry

log = logging.getLogger("caravanserai.bots")

_lock = threading.Lock()
_registry: SessionRegistry | None = None
_registry_key: tuple[object, ...] | None = None  # (pid, redis url, path, prefix, ttl) it was opened with


@dataclass(frozen=True)
class StreamPresence:
    """One live stream of a bot, as its owner sees it (no relay address)."""

    gateway_id: str
    capacity: int  # matches at once granted by the gateway
    asked: int  # matches at once the bot's Hello asked for (0: not recorded)
    matches: int  # matches playing on it now
    connected_at: dt.datetime
    bot_version: str

    @property
    def free(self) -> int:
        return max(0, self.capacity - self.matches)


@dataclass(frozen=True)
class Presence:
    """A bot's streams now. `known` is False when the registry could not be read (then nothing else is
    meaningful and pages say "unknown")."""

    known: bool
    streams: tuple[StreamPresence, ...] = ()

    @property
    def connected(self) -> bool | None:
        return bool(self.streams) if self.known else None

    @property
    def state(self) -> str:
        if not self.known:
            return "unknown"
        return "connected" if self.streams else "offline"

    @property
    def free(self) -> int | None:
        return sum(s.free for s in self.streams) if self.known else None

    @property
    def capacity(self) -> int | None:
        return sum(s.capacity for s in self.streams) if self.known else None

    @property
    def matches(self) -> int | None:
        return sum(s.matches for s in self.streams) if self.known else None


UNKNOWN = Presence(known=False)


def _stream(session: SessionInfo) -> StreamPresence:
    return StreamPresence(
        gateway_id=session.gateway_id,
        capacity=session.capacity,
        asked=session.asked,
        matches=session.matches,
        connected_at=dt.datetime.fromtimestamp(session.connected_at, tz=dt.UTC),
        bot_version=session.bot_version,
    )


def registry() -> SessionRegistry:
    """This process's registry reader (opened on first use, again after a fork or a configuration change)."""
    global _registry, _registry_key
    config = GatewayConfig.from_env()
    key = (
        os.getpid(),
        config.redis_url,
        str(config.registry_path),
        config.registry_prefix,
        config.session_ttl,
    )
    with _lock:
        if _registry is None or _registry_key != key:
            _registry = open_registry(
                redis_url=config.redis_url,
                path=config.registry_path,
                prefix=config.registry_prefix,
                ttl=config.session_ttl,
            )
            _registry_key = key
        return _registry


def _forget_registry() -> None:
    """Drop the registry object after a failure, so the next read opens a fresh one."""
    global _registry, _registry_key
    with _lock:
        _registry, _registry_key = None, None


def bots_presence(*, bot_ids: Iterable[int]) -> dict[int, Presence]:
    """The presence of each bot in `bot_ids`, from one read of the registry (all UNKNOWN if it fails)."""
    wanted = {str(bot_id): int(bot_id) for bot_id in bot_ids}
    if not wanted:
        return {}
    try:
        sessions = registry().sessions()
    except Exception as exc:  # any store failure (file, permissions, Redis down) means "unknown", not a 500
        log.warning("session registry unreadable, presence unknown: %s", exc)
        _forget_registry()
        return {bot_id: UNKNOWN for bot_id in wanted.values()}
    found: dict[int, list[StreamPresence]] = {bot_id: [] for bot_id in wanted.values()}
    for session in sorted(sessions, key=lambda s: (s.connected_at, s.session_id)):
        bot_id = wanted.get(session.bot_id)
        if bot_id is not None:
            found[bot_id].append(_stream(session))
    return {bot_id: Presence(known=True, streams=tuple(streams)) for bot_id, streams in found.items()}


def bot_presence(*, bot_id: int) -> Presence:
    """Whether the bot is connected now, with its streams (UNKNOWN if the registry cannot be read)."""
    return bots_presence(bot_ids=[bot_id])[bot_id]
