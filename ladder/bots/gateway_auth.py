"""The ladder's implementation of the gateway's verifier interface, and its half of the revocation feed.

Layer: an adapter from the ladder to `engine_service.gateway` (the ladder may import the gateway's
interfaces; the gateway imports nothing of the ladder). The gateway reaches this module only through
configuration: CARAVANSERAI_GATEWAY_VERIFIER names `gateway_verifier` by default, resolved with importlib at
its start (`engine_service.gateway.verifiers.load_verifier`).

- `LadderTokenSource` is the `TokenSource` of a `BatchVerifier`: `warm_up()` runs `django.setup()` with
  `ladder.settings.base` (or DJANGO_SETTINGS_MODULE) and loads the selector, off the gateway's event loop;
  each batch of tokens is looked up with `ladder.bots.selectors.bot_identity_for_token` on one database
  connection closed after the batch (none is left open in the lookup thread: stale after a database
  restart, or blocking a test database drop). Importing this module imports no Django.
- Revocations cross processes: the ladder sends `ladder.bots.signals.bot_token_revoked(bot_id=)` in its own
  process; `connect_revocation_publisher()` (called once from the bots app's `ready()`) publishes each one
  to the session registry (`SessionRegistry.publish_revocation`), which every gateway polls
  (`revocations_since`) and then drops the bot's streams with UNAUTHENTICATED. In a process that runs both
  (tests, the demo), the verifier also hears the signal directly (`LadderTokenSource.on_revoke`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from engine_service.gateway.auth import BotIdentity
from engine_service.gateway.verifiers import BatchVerifier

_publisher_lock = threading.Lock()
_publisher_connected = False


def setup_django(settings_module: str = "ladder.settings.base") -> None:
    import django
    from django.apps import apps

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", settings_module)
    if not apps.ready:
        django.setup()


class LadderTokenSource:
    """Tokens checked against the ladder's bot records (stored hashed there); revocations from its signal."""

    def __init__(self, settings_module: str = "ladder.settings.base") -> None:
        self.settings_module = settings_module

    def warm_up(self) -> None:
        setup_django(self.settings_module)
        from ladder.bots import selectors  # noqa: F401  (imported once here, not on the first lookup)

    def lookup_many(self, tokens: list[str]) -> dict[str, BotIdentity]:
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

    def on_revoke(self, listener: Callable[[str], None]) -> None:
        from ladder.bots.signals import bot_token_revoked

        def heard(sender: Any = None, *, bot_id: Any, **kwargs: Any) -> None:
            listener(str(bot_id))

        bot_token_revoked.connect(heard, weak=False, dispatch_uid=f"gateway-verifier-{id(listener)}")


def gateway_verifier(*, warm: bool = False) -> BatchVerifier:
    """The gateway's verifier over the ladder's records (the default CARAVANSERAI_GATEWAY_VERIFIER): made
    cold, so the gateway binds first and sets Django up in `warm_up()`."""
    return BatchVerifier(LadderTokenSource(), warm=warm)


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
