"""The engine gateway process: the public bot server, the internal relay server and its decision port.

Layer: gateway entry point (`python -m engine_service.gateway.server`). It wires configuration, the token
verifier, the session registry and the hub into two grpc.aio servers and one asyncio TCP server: bots
connect to the bot address (public), workers make the relay's control calls on the relay address and send
decisions to the decision address (both internal; the decision port speaks `relay_frames`, one connection
per worker process). Both gRPC servers serve grpc.health.v1 and server reflection, so `grpcurl` and other
generic clients can explore them. It holds no match loop. All three run on one event loop, uvloop's unless
CARAVANSERAI_GATEWAY_EVENT_LOOP=asyncio (`python -m bench relay` measures both side by side).

Starting: the servers bind and serve first; the token verifier warms up next (Django's setup, off the loop),
and a bot connecting meanwhile waits for its token check. The gateway tells the registry it is not admitting
before its first heartbeat and claims admission (admission.py) only once warm; READY is printed then.

Stopping: SIGINT, or SIGTERM when CARAVANSERAI_GATEWAY_DRAIN_SECONDS is 0 (the default), closes every bot
stream at once with UNAVAILABLE: the bots reconnect and their matches resume elsewhere, excused. With
CARAVANSERAI_GATEWAY_DRAIN_SECONDS=N (the deployment files set 30), SIGTERM drains the gateway for a rolling
restart instead: the bot server's health turns NOT_SERVING (the load balancer sends no more bots here), new
streams and new matches are refused, each stream closes with UNAVAILABLE as soon as it plays no match (its
bot reconnects to another gateway), and the process exits once no stream is left, or after N seconds, when
the matches still playing move as above. A second SIGTERM stops at once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterable

import grpc
import uvloop
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from engine_service.gateway import metrics
from engine_service.gateway.admission import report_loop
from engine_service.gateway.auth import InMemoryVerifier, TokenVerifier
from engine_service.gateway.config import (
    MIN_CLIENT_PING_INTERVAL_MS,
    SERVER_KEEPALIVE_TIME_MS,
    SERVER_KEEPALIVE_TIMEOUT_MS,
    GatewayConfig,
)
from engine_service.gateway.hub import Hub
from engine_service.gateway.protocol import BOT_SERVICE, RELAY_SERVICE, relay_pb2_grpc
from engine_service.gateway.registry import SessionRegistry, open_registry
from engine_service.gateway.servicers import BotServicer, DecisionLink, RelayServicer, bot_service_handler
from engine_service.gateway.verifiers import load_verifier

log = logging.getLogger("caravanserai.gateway")

RELAY_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
SWITCH_INTERVAL_SECONDS = 0.0005  # the gateway process's GIL switch interval (Python's default: 0.005)


def transport_max_message_bytes(config: GatewayConfig) -> int:
    """The largest message gRPC reads from a bot at all: twice the limit the gateway enforces itself."""
    return 2 * config.max_message_bytes


def bot_server_options(config: GatewayConfig) -> list[tuple[str, int]]:
    return [
        # gRPC itself refuses only what is over the transport cap; the servicer refuses anything over
        # max_message_bytes with Error{fatal} first (BOTS.md)
        ("grpc.max_receive_message_length", transport_max_message_bytes(config)),
        ("grpc.max_send_message_length", RELAY_MAX_MESSAGE_BYTES),
        ("grpc.keepalive_time_ms", SERVER_KEEPALIVE_TIME_MS),
        ("grpc.keepalive_timeout_ms", SERVER_KEEPALIVE_TIMEOUT_MS),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_recv_ping_interval_without_data_ms", MIN_CLIENT_PING_INTERVAL_MS),
        ("grpc.http2.min_ping_interval_without_data_ms", MIN_CLIENT_PING_INTERVAL_MS),
        ("grpc.http2.max_ping_strikes", 2),
        ("grpc.so_reuseport", 0),
    ]


def relay_server_options() -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", RELAY_MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", RELAY_MAX_MESSAGE_BYTES),
        ("grpc.so_reuseport", 0),
    ]


def _health_and_reflection(server: grpc.aio.Server, services: Iterable[str]) -> health.HealthServicer:
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = [*services, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name]
    for name in ["", *services]:
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection([*names, reflection.SERVICE_NAME], server)
    return health_servicer


def _bind_unix(server: grpc.aio.Server, path: str) -> None:
    """Serve bots on the Unix-domain socket `path` too (a stale socket file is replaced)."""
    if os.path.exists(path):
        os.unlink(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if not server.add_insecure_port(f"unix:{path}"):
        raise OSError(f"cannot bind unix:{path}")


def build_verifier(config: GatewayConfig) -> TokenVerifier:
    if config.auth.startswith("file:"):
        return InMemoryVerifier.from_file(config.auth[len("file:") :])
    if config.auth == "django":  # the configured plug-in, made cold: it warms up once the gateway serves
        return load_verifier(config.verifier)
    raise ValueError(f"CARAVANSERAI_GATEWAY_AUTH must be 'django' or 'file:PATH', not {config.auth!r}")


class Gateway:
    """One gateway: hub, bot server, relay server, heartbeat. `start()` binds; `stop()` closes streams."""

    def __init__(
        self,
        config: GatewayConfig,
        verifier: TokenVerifier,
        registry: SessionRegistry | None = None,
        *,
        known_games: Iterable[str] | None = None,
    ) -> None:
        from engine_service.games import list_games

        self.config = config
        self.verifier = verifier
        self.registry = registry or open_registry(
            redis_url=config.redis_url,
            path=config.registry_path,
            prefix=config.registry_prefix,
            ttl=config.session_ttl,
        )
        self.known_games = (
            tuple(known_games) if known_games is not None else tuple(s.game_id for s in list_games())
        )
        self.hub: Hub | None = None
        self.bot_port = 0
        self.relay_port = 0
        self.decisions_port = 0
        self._servers: list[grpc.aio.Server] = []
        self._decisions: asyncio.Server | None = None
        self._links: set[DecisionLink] = set()
        self._health: list[health.HealthServicer] = []
        self._heartbeat: asyncio.Task[None] | None = None
        self._admission: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Bind and serve, then warm the verifier up (bots connecting meanwhile wait for it), then claim to be
        admitting (admission.py); returns once the gateway admits at normal speed or could."""
        hub = await self._serve()
        # the registry hears "not admitting" before this gateway's first heartbeat: never a gateway alive with
        # no admission state, which readers take for an older gateway that admits while alive
        await asyncio.to_thread(
            self.registry.report_admission, hub.gateway_id, self.config.advertised_relay, 0.0
        )
        await asyncio.to_thread(self.registry.heartbeat, hub.gateway_id, self.config.advertised_relay, [])
        self._heartbeat = asyncio.create_task(hub.heartbeat_loop())
        warm_up = getattr(self.verifier, "warm_up", None)
        if warm_up is not None:
            try:
                await asyncio.to_thread(warm_up)
            except BaseException:  # a verifier that cannot start (misconfigured): nothing stays bound
                await self.stop(0)
                raise
        hub.admission.serving = True
        self._admission = asyncio.create_task(
            report_loop(
                hub.admission,
                self.registry,
                hub.gateway_id,
                self.config.advertised_relay,
                stalled=hub.loop_lag.stalled,
                stopping=lambda: hub.shutting_down,
            )
        )
        log.info(
            "gateway %s: bots on %s (port %d), relay on %s (port %d), decisions on %s (port %d)",
            hub.gateway_id,
            self.config.bot_address,
            self.bot_port,
            self.config.advertised_relay,
            self.relay_port,
            self.config.decisions_advertise,
            self.decisions_port,
        )

    async def _serve(self) -> Hub:
        """Bind every port, make the hub and start the servers."""
        bot_server = grpc.aio.server(options=bot_server_options(self.config))
        relay_server = grpc.aio.server(options=relay_server_options())
        self.bot_port = bot_server.add_insecure_port(self.config.bot_address)
        self.relay_port = relay_server.add_insecure_port(self.config.relay_address)
        if not self.bot_port or not self.relay_port:
            raise OSError(f"cannot bind {self.config.bot_address} / {self.config.relay_address}")
        if self.config.bot_uds:
            _bind_unix(bot_server, self.config.bot_uds)
        if self.config.relay_address.endswith(":0"):  # tests: advertise the port actually bound
            host = self.config.relay_address.rsplit(":", 1)[0]
            self.config = self.config.with_(relay_address=f"{host}:{self.relay_port}")
        listener = self._bind_decisions()
        await asyncio.to_thread(self.registry.drop_gateway, relay_address=self.config.advertised_relay)
        hub = self.hub = Hub(self.config, self.verifier, self.registry, known_games=self.known_games)
        bot_server.add_generic_rpc_handlers(
            [bot_service_handler(BotServicer(hub), self.config.max_message_bytes)]
        )
        relay_pb2_grpc.add_RelayServiceServicer_to_server(RelayServicer(hub), relay_server)
        self._decisions = await asyncio.get_running_loop().create_server(
            lambda: DecisionLink(hub, self._links), sock=listener
        )
        self._health = [
            _health_and_reflection(bot_server, [BOT_SERVICE]),
            _health_and_reflection(relay_server, [RELAY_SERVICE]),
        ]
        await bot_server.start()
        await relay_server.start()
        if self.config.bot_uds:  # sandboxed bots run under other uids: any local user may connect
            os.chmod(self.config.bot_uds, 0o666)
        self._servers = [bot_server, relay_server]
        return hub

    def _bind_decisions(self) -> socket.socket:
        """The decision port's listening socket; the configuration then names the port bound and the address
        the gateway advertises for it."""
        host, port = self.config.decisions_bind()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            listener = socket.create_server((host, port), family=family, backlog=512)
        except OSError as exc:
            raise OSError(f"cannot bind the decision port {host}:{port}: {exc}") from exc
        self.decisions_port = int(listener.getsockname()[1])
        self.config = self.config.with_(
            decisions_address=f"{self.config.decisions_bind()[0]}:{self.decisions_port}",
            decisions_advertise=self.config.advertised_decisions(self.decisions_port),
        )
        return listener

    async def drain(self, timeout: float) -> int:
        """Take no new bots or matches and wait, up to `timeout` seconds, for every stream to leave as its
        matches end (`Hub.drain`); the streams still open then (their matches move in `stop()`)."""
        if self._health:
            self._health[0].enter_graceful_shutdown()  # the bot server's: the load balancer looks there
        if self.hub is None:
            return 0
        await self.hub.drain()
        until = asyncio.get_running_loop().time() + timeout
        while self.hub.sessions and asyncio.get_running_loop().time() < until:
            await asyncio.sleep(0.1)
        return len(self.hub.sessions)

    async def stop(self, grace: float = 1.0, *, final: str | None = None) -> None:
        """Close every stream: with `final`, for good (`Goodbye{final}`, status OK: do not reconnect), else
        UNAVAILABLE (reconnect: a restart)."""
        for servicer in self._health:
            servicer.enter_graceful_shutdown()
        if self.hub is not None:
            if final is not None:
                await self.hub.finish(final)
                for _ in range(50):  # the streams end OK as their servicers return
                    if not self.hub.sessions:
                        break
                    await asyncio.sleep(0.02)
            await self.hub.shutdown()
        self.stop_decisions()
        for task in (self._heartbeat, self._admission):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await asyncio.gather(*(server.stop(grace) for server in self._servers))
        self._servers = []

    def stop_decisions(self) -> None:
        """Close the decision port and every worker's connection (after the replies already written)."""
        if self._decisions is not None:
            self._decisions.close()
            self._decisions = None
        for link in list(self._links):
            link.close()

    async def wait(self) -> None:
        if self._servers:
            await self._servers[0].wait_for_termination()


class GatewayThread:
    """A gateway running on its own event loop in a background thread (tests, the local runner, benches)."""

    def __init__(
        self,
        config: GatewayConfig,
        verifier: TokenVerifier,
        registry: SessionRegistry | None = None,
        **kwargs: object,
    ) -> None:
        self.config = config
        self.verifier = verifier
        self.registry = registry
        self.kwargs = kwargs
        self.gateway: Gateway | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._stopped: asyncio.Event | None = None

    def start(self) -> GatewayThread:
        self._thread = threading.Thread(target=self._run, name="gateway", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        self.loop = new_event_loop(self.config)
        try:
            self.loop.run_until_complete(self._main())
        finally:
            self.loop.close()

    async def _main(self) -> None:
        self._stopped = asyncio.Event()
        try:
            self.gateway = Gateway(self.config, self.verifier, self.registry, **self.kwargs)  # type: ignore[arg-type]
            await self.gateway.start()
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        await self._stopped.wait()

    @property
    def hub(self) -> Hub:
        assert self.gateway is not None and self.gateway.hub is not None
        return self.gateway.hub

    @property
    def bot_target(self) -> str:
        assert self.gateway is not None
        return f"127.0.0.1:{self.gateway.bot_port}"

    @property
    def relay_target(self) -> str:
        assert self.gateway is not None
        return self.gateway.config.advertised_relay

    @property
    def decisions_target(self) -> str:
        assert self.gateway is not None
        return self.gateway.config.decisions_advertise

    def call(self, coro):  # type: ignore[no-untyped-def]
        """Run a coroutine on the gateway's loop and wait for its result."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def stop(self, grace: float = 0.5, *, final: str | None = None) -> None:
        if self.gateway is None or self.loop is None or self._thread is None:
            return
        gateway, stopped = self.gateway, self._stopped
        assert stopped is not None

        async def _stop() -> None:
            await gateway.stop(grace, final=final)
            stopped.set()

        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(_stop(), self.loop).result(30)
        self._thread.join(30)


def new_event_loop(config: GatewayConfig) -> asyncio.AbstractEventLoop:
    """The gateway's event loop, of the kind `config.event_loop` names. uvloop (libuv) is the default: every
    relayed decision is a few loop turns (the worker's frame read, the bot's write and read completions from
    grpc.aio's poller, the reply's write), and under uvloop the gateway spends less CPU on each
    (`python -m bench relay` runs a gateway on each loop side by side)."""
    if config.event_loop == "uvloop":
        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


async def serve(config: GatewayConfig) -> None:
    # grpc.aio hands each completion (a bot's answer read, a write done) from its poller thread to the loop,
    # which takes the GIL: with Python's default 5 ms switch interval, a loop busy with other streams and
    # decisions holds each of them back by up to 5 ms, time the bot's clock would count
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    gateway = Gateway(config, build_verifier(config))
    await gateway.start()
    assert gateway.hub is not None
    if config.metrics_port:
        metrics.serve(gateway.hub, config.metrics_port, config.metrics_addr)
    ready = {
        "gateway_id": gateway.hub.gateway_id,
        "bot_port": gateway.bot_port,
        "relay_address": gateway.config.advertised_relay,
        "decisions_address": gateway.config.decisions_advertise,
        "event_loop": type(asyncio.get_running_loop()).__module__.split(".")[0],  # uvloop or asyncio
    }
    print(f"READY {json.dumps(ready)}", flush=True)  # one machine-readable line for supervisors and tests
    drain, stop = asyncio.Event(), asyncio.Event()
    loop = asyncio.get_running_loop()

    seconds = config.drain_seconds

    def on_term() -> None:
        (stop if drain.is_set() or not seconds else drain).set()

    with contextlib.suppress(NotImplementedError):
        loop.add_signal_handler(signal.SIGTERM, on_term)
        loop.add_signal_handler(signal.SIGINT, stop.set)
    await asyncio.wait(
        [asyncio.ensure_future(drain.wait()), asyncio.ensure_future(stop.wait())],
        return_when=asyncio.FIRST_COMPLETED,
    )
    if not stop.is_set():
        log.info(
            "gateway draining: no new bots or matches; exiting when every stream has left (%gs at most)",
            seconds,
        )
        draining = asyncio.ensure_future(gateway.drain(seconds))
        await asyncio.wait(
            [draining, asyncio.ensure_future(stop.wait())], return_when=asyncio.FIRST_COMPLETED
        )
        left = draining.result() if draining.done() else len(gateway.hub.sessions)
        log.info("gateway drained: %d stream(s) still open move to other gateways", left)
    log.info("gateway stopping: closing bot streams with UNAVAILABLE")
    await gateway.stop(grace=2.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run a Caravanserai engine gateway (see config.py for env vars)."
    )
    parser.add_argument("--bot-address", help="override CARAVANSERAI_GATEWAY_ADDR")
    parser.add_argument("--relay-address", help="override CARAVANSERAI_RELAY_ADDR")
    parser.add_argument("--auth", help="override CARAVANSERAI_GATEWAY_AUTH (django or file:PATH)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = GatewayConfig.from_env()
    changes = {
        k: v
        for k, v in {
            "bot_address": args.bot_address,
            "relay_address": args.relay_address,
            "auth": args.auth,
        }.items()
        if v
    }
    config = config.with_(**changes)
    try:
        with asyncio.Runner(loop_factory=lambda: new_event_loop(config)) as runner:
            runner.run(serve(config))
    except (OSError, ValueError) as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
