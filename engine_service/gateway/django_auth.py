"""The Django-backed token verifier: asks the ladder's bot records, and forwards revocations to gateways.

Layer: gateway adapter to the ladder. Django is imported only here, lazily, after `django.setup()` with
`ladder.settings.base` (or DJANGO_SETTINGS_MODULE). The selector runs through asgiref's `sync_to_async` so the
gateway's event loop never blocks on the database.

Revocation crosses processes: the ladder sends `ladder.bots.signals.bot_token_revoked(bot_id=)` in its own
process; `connect_revocation_publisher()` (called once in the ladder process, e.g. from the bots app's
`ready()`) publishes each one to the session registry, which every gateway polls twice a second and then
drops the bot's streams with UNAUTHENTICATED. In a process that runs both (tests, the demo), the verifier
also hears the signal directly.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from engine_service.gateway.auth import BotIdentity

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

    def __init__(self, settings_module: str = "ladder.settings.base") -> None:
        setup_django(settings_module)
        from ladder.bots.signals import bot_token_revoked

        self._listeners: list[Callable[[str], None]] = []
        self._lock = threading.Lock()
        bot_token_revoked.connect(self._revoked, weak=False, dispatch_uid=f"gateway-verifier-{id(self)}")

    async def verify(self, token: str) -> BotIdentity | None:
        from asgiref.sync import sync_to_async

        identity = await sync_to_async(_lookup)(token)
        return BotIdentity.of(identity) if identity is not None else None

    def on_revoke(self, listener: Callable[[str], None]) -> None:
        with self._lock:
            self._listeners.append(listener)

    def _revoked(self, sender: Any = None, *, bot_id: Any, **kwargs: Any) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(str(bot_id))


def _lookup(token: str) -> Any:
    from django.db import connection

    from ladder.bots.selectors import bot_identity_for_token

    # Lookups happen once per connecting bot: a fresh database connection each time costs little, and none
    # is left open in the executor thread (stale after a database restart, or blocking a test database drop).
    try:
        return bot_identity_for_token(token=token)
    finally:
        connection.close()


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
