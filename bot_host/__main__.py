"""`python -m bot_host`: the bot host service (one per machine). Configured by the ladder's settings
(`ladder/settings/base.py`, "Hosted bots"): its sandboxes reach the gateway's Unix-domain socket
(CARAVANSERAI_GATEWAY_UDS, served by a gateway on this machine) or, with CARAVANSERAI_BOT_HOST_GATEWAY_ADDR,
its own socket there relayed to that gateway or balancer. CARAVANSERAI_BOT_HOST_ID names it (default: the
machine's name), CARAVANSERAI_BOT_HOST_METRICS_PORT serves its Prometheus metrics. SIGTERM stops every sandbox and
lets go of its bots at once.

Layer: entry point. It must run as root (each bot is dropped to its own uid); it refuses otherwise, and it
refuses to host at all on a machine that cannot give each bot its own control group (cgroup v2 with the
memory, pids and cpu controllers delegated, or cgroup v1's hierarchies), the system-call filter (libseccomp)
or a bubblewrap that loads it: never weaker limits than configured.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from bot_host.cgroups import CgroupUnavailable, detect
from bot_host.seccomp_filter import SeccompUnavailable, bot_filter

if TYPE_CHECKING:
    from bot_host.forward import SocketForwarder
    from bot_host.host import BotHost
    from bot_host.ladder_source import LadderSource
    from engine_service.gateway.registry import SessionRegistry

ROOT = Path(__file__).resolve().parents[1]


class HostingRefused(RuntimeError):
    """This machine cannot sandbox bots as configured (the message says what is missing)."""


def check_machine(bwrap: str) -> str:
    """What this machine sandboxes bots with (the cgroup backend's name); `HostingRefused` otherwise."""
    try:
        backend = detect()
        bot_filter()
    except (CgroupUnavailable, SeccompUnavailable) as exc:
        raise HostingRefused(str(exc)) from exc
    try:
        usage = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=30).stdout
    except OSError as exc:
        raise HostingRefused(f"bubblewrap {bwrap} cannot run: {exc}") from exc
    if "--seccomp" not in usage:
        raise HostingRefused(f"bubblewrap {bwrap} cannot load a system-call filter (no --seccomp)")
    return backend.name


def check_only() -> int:
    """`--check`: root, control groups, the filter and bubblewrap, as `main` would need them."""
    if os.geteuid() != 0:
        print(
            "bot_host: run as root: each hosted bot is dropped to its own unprivileged uid", file=sys.stderr
        )
        return 2
    try:
        backend = check_machine(os.environ.get("CARAVANSERAI_BOT_HOST_SANDBOX") or "/usr/bin/bwrap")
    except HostingRefused as exc:
        print(f"bot_host: this machine cannot host bots: {exc}", file=sys.stderr)
        return 2
    print(f"bot_host: this machine can host bots (control groups: {backend})")
    return 0


def build_host(host_id: str) -> tuple[BotHost, LadderSource, SocketForwarder | None]:
    """The host, its ladder source and, with CARAVANSERAI_BOT_HOST_GATEWAY_ADDR, the forwarder serving its
    gateway socket, from the Django settings (Django is set up here, in the host only)."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings.base")
    django.setup()
    from django.conf import settings as s

    from bot_host.forward import SocketForwarder
    from bot_host.host import BotHost, HostSettings
    from bot_host.ladder_source import LadderSource
    from bot_host.runtimes import available_runtimes
    from bot_host.sandbox import Limits
    from ladder.hosting.services import archive_limits

    backend = check_machine(s.BOT_HOST_SANDBOX)
    logging.getLogger("caravanserai.bot_host").info("each bot gets its own %s group", backend)
    state_dir = Path(s.BOT_HOST_STATE_DIR)
    limits = Limits(
        cpu_seconds=s.BOT_HOST_CPU_SECONDS,
        memory_bytes=s.BOT_HOST_MEMORY_MB << 20,
        cpu_cores=s.BOT_HOST_CPU_CORES,
        processes=s.BOT_HOST_PROCESS_LIMIT,
        file_bytes=s.BOT_HOST_FILE_MB << 20,
        tmp_bytes=s.BOT_HOST_TMP_MB << 20,
    )
    host_settings = HostSettings(
        host_id=host_id,
        state_dir=state_dir,
        socket_path=Path(s.BOT_HOST_GATEWAY_SOCKET),
        max_processes=s.BOT_HOST_PROCESSES,
        uid_base=s.BOT_HOST_UID_BASE,
        limits=limits,
        archive_limits=archive_limits(),
        bwrap=s.BOT_HOST_SANDBOX,
    )
    forwarder = None
    if s.BOT_HOST_GATEWAY_ADDR:
        host, port = SocketForwarder.parse(s.BOT_HOST_GATEWAY_ADDR)
        forwarder = SocketForwarder(host_settings.socket_path, host, port).start()
    source = LadderSource(state_dir=state_dir)
    runtimes = available_runtimes(state_dir, ROOT)
    return BotHost(host_settings, source, runtimes, presence=gateway_registry()), source, forwarder


def gateway_registry() -> SessionRegistry:
    """The gateways' session registry (Redis with REDIS_URL, else the SQLite file), where the host says it is
    up and which bots it runs."""
    from engine_service.gateway.config import GatewayConfig
    from engine_service.gateway.registry import open_registry

    config = GatewayConfig.from_env()
    registry: SessionRegistry = open_registry(
        redis_url=config.redis_url,
        path=config.registry_path,
        prefix=config.registry_prefix,
        ttl=config.session_ttl,
    )
    return registry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the Caravanserai bot host (hosted bots in sandboxes).")
    parser.add_argument(
        "--host-id", default=os.environ.get("CARAVANSERAI_BOT_HOST_ID") or socket.gethostname()
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only say whether this machine can host bots (exit 0) or what it lacks (exit 2)",
    )
    args = parser.parse_args(argv)
    if args.check:
        return check_only()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if os.geteuid() != 0:
        print(
            "bot_host: run as root: each hosted bot is dropped to its own unprivileged uid", file=sys.stderr
        )
        return 1
    try:
        host, source, forwarder = build_host(args.host_id)
    except HostingRefused as exc:
        print(f"bot_host: this machine cannot host bots: {exc}", file=sys.stderr)
        return 2
    port = os.environ.get("CARAVANSERAI_BOT_HOST_METRICS_PORT", "").strip()
    if port not in ("", "0"):
        from prometheus_client import start_http_server

        start_http_server(int(port), addr=os.environ.get("CARAVANSERAI_BOT_HOST_METRICS_ADDR", "127.0.0.1"))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"READY bot host {args.host_id}: {host.settings.max_processes} slots", flush=True)
    try:
        host.run(stop)
    finally:
        source.release(host_id=args.host_id)
        if forwarder is not None:
            forwarder.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
