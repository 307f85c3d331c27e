"""Gateway configuration from environment variables, each with a documented default.

Layer: gateway plumbing. Reads the environment only (through `engine_service.settings_env`, each default
written once, as a `GatewayConfig` field); no I/O beyond that.

| Variable | Default | Meaning |
|---|---|---|
| CARAVANSERAI_GATEWAY_ADDR | 0.0.0.0:50051 | where bots connect (public) |
| CARAVANSERAI_RELAY_ADDR | 127.0.0.1:50052 | where workers call the relay (internal) |
| CARAVANSERAI_RELAY_ADVERTISE | the relay address | the relay address workers are told (registry) |
| CARAVANSERAI_RELAY_DECISIONS_ADDR | the relay's host, port 0 | where workers send decisions (internal, framed TCP); port 0: any free port |
| CARAVANSERAI_RELAY_DECISIONS_ADVERTISE | the advertised relay's host, the port bound | the decision address workers are told (registry) |
| CARAVANSERAI_GATEWAY_AUTH | django | `django` (the verifier CARAVANSERAI_GATEWAY_VERIFIER names) or `file:PATH` (JSON dev tokens) |
| CARAVANSERAI_GATEWAY_VERIFIER | ladder.bots.gateway_auth:gateway_verifier | the `module:factory` that makes the verifier for `django` (resolved at start; the ladder's bot records by default) |
| REDIS_URL | unset | Redis session registry; unset: SQLite file |
| CARAVANSERAI_REGISTRY_PATH | var/gateway-registry.sqlite3 | the embedded registry (project root) |
| CARAVANSERAI_REGISTRY_PREFIX | cvs:gw | Redis key prefix |
| CARAVANSERAI_GATEWAY_MAX_MESSAGE_BYTES | 4194304 | largest message accepted from a bot |
| CARAVANSERAI_GATEWAY_MAX_SESSIONS_PER_BOT | 4 | streams per bot over all gateways |
| CARAVANSERAI_GATEWAY_MAX_MATCHES_PER_STREAM | 16 | matches at once on one stream |
| CARAVANSERAI_GATEWAY_HELLO_TIMEOUT | 10 | seconds to wait for Hello |
| CARAVANSERAI_GATEWAY_HEARTBEAT | 2 | seconds between registry heartbeats |
| CARAVANSERAI_GATEWAY_SESSION_TTL | 10 | seconds after which a silent gateway's sessions are stale |
| CARAVANSERAI_GATEWAY_METRICS_PORT | unset | serve Prometheus metrics on this port (`/metrics`); unset or 0: none |
| CARAVANSERAI_GATEWAY_METRICS_ADDR | 127.0.0.1 | the metrics server's address |
| CARAVANSERAI_GATEWAY_DRAIN_SECONDS | 0 | SIGTERM drains for up to this long (no new streams or matches, exit once idle); 0: close at once |
| CARAVANSERAI_GATEWAY_UDS | unset | also serve bots on this Unix-domain socket path (hosted bots' sandboxes); unset: none |
| CARAVANSERAI_GATEWAY_EVENT_LOOP | uvloop | the gateway's asyncio event loop: `uvloop` (libuv) or `asyncio` (the standard library's) |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from engine_service.gateway.verifiers import SPEC as VERIFIER_SPEC
from engine_service.settings_env import EnvError, env_float, env_int, env_str

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# HTTP/2 keepalive: the SDKs ping every 20 s without calls; the server tolerates pings every 5 s or more and
# pings idle clients every 30 s itself, dropping those that do not answer within 10 s.
MIN_CLIENT_PING_INTERVAL_MS = 5_000
SERVER_KEEPALIVE_TIME_MS = 30_000
SERVER_KEEPALIVE_TIMEOUT_MS = 10_000


ConfigError = EnvError  # a malformed variable: the message names it, its value and what is expected


def _host(address: str) -> str:
    """The host part of HOST:PORT, as written (an IPv6 host keeps its brackets)."""
    return address.rsplit(":", 1)[0] if ":" in address else address


def _port(address: str, name: str) -> int:
    host, sep, raw = address.rpartition(":")
    if not sep or not host or not raw.isdigit() or int(raw) > 65535:
        raise ConfigError(f"{name} must be HOST:PORT (port 0-65535), not {address!r}")
    return int(raw)


def _address(env: Mapping[str, str], name: str) -> str:
    """A HOST:PORT variable, checked here so a typo fails at start with the variable's name; unset: ""."""
    raw = env_str(env, name, "")
    if raw:
        _port(raw, name)
    return raw


# Named, never imported here: the gateway knows the ladder only through this configured plug-in
DEFAULT_VERIFIER = "ladder.bots.gateway_auth:gateway_verifier"


def _verifier(env: Mapping[str, str], default: str) -> str:
    name = "CARAVANSERAI_GATEWAY_VERIFIER"
    raw = env_str(env, name, default)
    if not VERIFIER_SPEC.match(raw):
        raise ConfigError(f"{name} must be module.path:factory, not {raw!r}")
    return raw


EVENT_LOOPS = ("uvloop", "asyncio")


def _event_loop(env: Mapping[str, str], default: str) -> str:
    name = "CARAVANSERAI_GATEWAY_EVENT_LOOP"
    raw = env_str(env, name, default)
    if raw not in EVENT_LOOPS:
        raise ConfigError(f"{name} must be one of {', '.join(EVENT_LOOPS)}, not {raw!r}")
    return raw


@dataclass(frozen=True)
class GatewayConfig:
    bot_address: str = "0.0.0.0:50051"
    relay_address: str = "127.0.0.1:50052"
    relay_advertise: str = ""
    decisions_address: str = ""
    decisions_advertise: str = ""
    auth: str = "django"
    verifier: str = DEFAULT_VERIFIER
    redis_url: str | None = None
    registry_path: Path = field(default_factory=lambda: PROJECT_ROOT / "var" / "gateway-registry.sqlite3")
    registry_prefix: str = "cvs:gw"
    max_message_bytes: int = 4 * 1024 * 1024
    max_sessions_per_bot: int = 4
    max_matches_per_stream: int = 16
    hello_timeout: float = 10.0
    heartbeat: float = 2.0
    session_ttl: float = 10.0
    metrics_port: int = 0
    metrics_addr: str = "127.0.0.1"
    drain_seconds: float = 0.0
    bot_uds: str = ""
    event_loop: str = "uvloop"

    @property
    def advertised_relay(self) -> str:
        return self.relay_advertise or self.relay_address

    def decisions_bind(self) -> tuple[str, int]:
        """Where the decision port listens: `decisions_address`, or the relay's host on any free port."""
        address = self.decisions_address or f"{_host(self.relay_address)}:0"
        return _host(address).strip("[]"), _port(address, "CARAVANSERAI_RELAY_DECISIONS_ADDR")

    def advertised_decisions(self, bound_port: int) -> str:
        """The decision address workers are told: `decisions_advertise`, or the advertised relay's host with
        the port the decision server bound."""
        return self.decisions_advertise or f"{_host(self.advertised_relay)}:{bound_port}"

    def with_(self, **changes: object) -> GatewayConfig:
        return replace(self, **changes)  # type: ignore[arg-type]

    @staticmethod
    def from_env(env: Mapping[str, str] | None = None) -> GatewayConfig:
        """The configuration from `env` (default `os.environ`): an unset or blank variable keeps the field's
        default, a malformed one raises `ConfigError` naming it."""
        env = os.environ if env is None else env
        d = GatewayConfig()
        return GatewayConfig(
            bot_address=env_str(env, "CARAVANSERAI_GATEWAY_ADDR", d.bot_address),
            relay_address=env_str(env, "CARAVANSERAI_RELAY_ADDR", d.relay_address),
            relay_advertise=env_str(env, "CARAVANSERAI_RELAY_ADVERTISE", d.relay_advertise),
            decisions_address=_address(env, "CARAVANSERAI_RELAY_DECISIONS_ADDR"),
            decisions_advertise=_address(env, "CARAVANSERAI_RELAY_DECISIONS_ADVERTISE"),
            auth=env_str(env, "CARAVANSERAI_GATEWAY_AUTH", d.auth),
            verifier=_verifier(env, d.verifier),
            redis_url=env_str(env, "REDIS_URL", "") or None,
            registry_path=Path(env_str(env, "CARAVANSERAI_REGISTRY_PATH", str(d.registry_path))),
            registry_prefix=env_str(env, "CARAVANSERAI_REGISTRY_PREFIX", d.registry_prefix),
            max_message_bytes=env_int(
                env, "CARAVANSERAI_GATEWAY_MAX_MESSAGE_BYTES", d.max_message_bytes, minimum=1024
            ),
            max_sessions_per_bot=env_int(
                env, "CARAVANSERAI_GATEWAY_MAX_SESSIONS_PER_BOT", d.max_sessions_per_bot, minimum=1
            ),
            max_matches_per_stream=env_int(
                env, "CARAVANSERAI_GATEWAY_MAX_MATCHES_PER_STREAM", d.max_matches_per_stream, minimum=1
            ),
            hello_timeout=env_float(
                env, "CARAVANSERAI_GATEWAY_HELLO_TIMEOUT", d.hello_timeout, positive=True
            ),
            heartbeat=env_float(env, "CARAVANSERAI_GATEWAY_HEARTBEAT", d.heartbeat, positive=True),
            session_ttl=env_float(env, "CARAVANSERAI_GATEWAY_SESSION_TTL", d.session_ttl, positive=True),
            metrics_port=env_int(env, "CARAVANSERAI_GATEWAY_METRICS_PORT", d.metrics_port, minimum=0),
            metrics_addr=env_str(env, "CARAVANSERAI_GATEWAY_METRICS_ADDR", d.metrics_addr),
            drain_seconds=env_float(env, "CARAVANSERAI_GATEWAY_DRAIN_SECONDS", d.drain_seconds, minimum=0),
            bot_uds=env_str(env, "CARAVANSERAI_GATEWAY_UDS", d.bot_uds),
            event_loop=_event_loop(env, d.event_loop),
        )
