"""Every command of infra/compose.yaml and infra/Procfile started once as written, on this machine, with the
environment the files give, pointed at test-local ports, databases and directories by stated rules:

- **ports**: every port a file names (`0.0.0.0:8000`, `gateway1:50051`, `--port=5555`) becomes a free
  local port, one per (container, port) for compose and one per port for the Procfile (one host), and the
  names of compose services become 127.0.0.1. A gateway address the files leave to the code's default (any
  `*_ADDR` setting of GatewayConfig) gets a free port through its variable, as two containers would not
  collide on it and two processes on one host would.
- **databases**: compose's `postgres` service runs its command with the machine's PostgreSQL binaries, as
  the postgres user, on a data directory of the run that the image's entrypoint would have made (initdb
  with POSTGRES_USER and POSTGRES_PASSWORD, then POSTGRES_DB created once it answers). Only where that
  cannot be (not root, no PostgreSQL server binaries) does the machine's PostgreSQL stand in (a database
  of this run, when DATABASE_URL is set; else the embedded SQLite file), and the test says so. The
  Procfile runs `manage.py migrate` first, as its header says, on its own database (the machine's
  PostgreSQL when DATABASE_URL is set, else SQLite).
- **order**: compose's `depends_on` as compose applies it (started, healthy: its check passed, completed
  successfully); the Procfile's processes after its migrate.
- **images**: the project's image (infra/Dockerfile) is the checkout: its ENV applies, `python`,
  `gunicorn` and `celery` are the venv's, /var/lib/caravanserai is the run's var directory and the working
  directory /app is the project root. Third-party images run the machine's program with the image's
  defaults made explicit: HAProxy with the official image's entrypoint (`-W -db`) and the file its volume
  mounts; Redis on its port with its data directory; Flower with the venv's `celery` (flower pinned in the
  dev extras at the image's version).

Test helper only: it starts and stops processes of its own and touches nothing outside its directory,
its database and its Redis instance.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse, urlunparse

from tests.infra.deployment import (
    COMPOSE,
    ROOT,
    Process,
    command_listen_ports,
    compose_processes,
    gateway_address_variables,
    host_port,
    load_compose,
    load_procfile,
    procfile_processes,
)
from tests.ports import free_port
from tests.scale.cluster import haproxy
from tests.workers.stack import Proc

VENV_BIN = Path(os.environ.get("VIRTUAL_ENV") or ROOT / ".venv") / "bin"
IMAGE_VAR = "/var/lib/caravanserai"
IMAGE_WORKDIR = "/app"
ONE_SHOTS = {"migrate"}


def postgres_bindir() -> Path | None:
    """The PostgreSQL server binaries, when this process may run them as the postgres user."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return None
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"))
    return found[-1].parent if found else None


def not_started() -> dict[str, str]:
    """Compose services this machine cannot start as written, with the stand-in used instead."""
    if postgres_bindir():
        return {}
    return {"postgres": "not root or no PostgreSQL server binaries: the machine's PostgreSQL or SQLite"}


_ADDRESS = re.compile(r"(?P<host>\$\([^)]*\)|[A-Za-z0-9_.\-]*):(?P<port>\d{2,5})\b")
_PORT_OPTION = re.compile(r"^(--port[= ])(\d{2,5})$")


@dataclass
class Launch:
    """One process to start: the file's process, the argv and environment after the rules, and how to tell
    that it came up."""

    process: Process
    argv: list[str]
    env: dict[str, str]
    ports: dict[int, int] = field(default_factory=dict)  # the file's port -> the port it got here
    after: dict[str, str] = field(default_factory=dict)  # launch name -> Compose condition to wait for
    proc: Proc | None = None
    started: float = 0.0

    @property
    def name(self) -> str:
        return _launch_name(self.process.source)

    @property
    def one_shot(self) -> bool:
        return self.process.role in ONE_SHOTS

    def port(self, written: int) -> int:
        return self.ports[written]


class PortMap:
    """A free local port for each (namespace, port) a file names."""

    def __init__(self) -> None:
        self.ports: dict[tuple[str, int], int] = {}

    def get(self, namespace: str, port: int) -> int:
        if (namespace, port) not in self.ports:
            self.ports[(namespace, port)] = free_port()
        return self.ports[(namespace, port)]

    def of(self, namespace: str) -> dict[int, int]:
        return {port: local for (ns, port), local in self.ports.items() if ns == namespace}


def _map_addresses(text: str, own: str, services: set[str], ports: PortMap) -> str:
    def one(m: re.Match[str]) -> str:
        host, port = m.group("host"), int(m.group("port"))
        if host in services:
            return f"127.0.0.1:{ports.get(host, port)}"
        local_host = "127.0.0.1" if host in ("0.0.0.0", "", "localhost") else host
        return f"{local_host}:{ports.get(own, port)}"

    return _ADDRESS.sub(one, text)


def _map_text(text: str, own: str, services: set[str], ports: PortMap, paths: dict[str, str]) -> str:
    for written, local in paths.items():
        text = text.replace(written, local)
    if m := _PORT_OPTION.match(text):
        return f"{m.group(1)}{ports.get(own, int(m.group(2)))}"
    return _map_addresses(text, own, services, ports)


def _default_gateway_addresses(env: dict[str, str], own: str, ports: PortMap) -> None:
    """Give each gateway address the files leave to the code's default a free port through its variable."""
    from engine_service.gateway.config import GatewayConfig

    defaults = GatewayConfig.from_env({})
    for name, field_name in gateway_address_variables().items():
        if field_name.endswith("_address") and name not in env:
            address = host_port(str(getattr(defaults, field_name)))
            if address:
                env[name] = f"127.0.0.1:{ports.get(own, address[1])}"


class DeploymentRun:
    """Both files' processes in one directory: build the launches, start them, check, stop."""

    def __init__(self, tmp: Path, *, database_url: str = "", secret: str = "") -> None:
        self.tmp = tmp
        self.uid = uuid.uuid4().hex[:10]
        self.logs = tmp / "logs"
        self.logs.mkdir(parents=True)
        self.server_url = database_url
        self.secret = secret or f"deployment-files-{self.uid}-not-a-production-secret-0123456789"
        self.databases: list[str] = []
        self.directories: list[Path] = []  # outside `tmp`, which the postgres user cannot reach
        self.ports = PortMap()
        self.launches: list[Launch] = []

    # --- databases -----------------------------------------------------------------------------------------
    def database(self, name: str) -> str:
        """A fresh PostgreSQL database of this run (its URL), or '' for the embedded SQLite."""
        if not self.server_url:
            return ""
        db = f"deploy_{self.uid}_{name}"
        self._admin(f'CREATE DATABASE "{db}"')
        self.databases.append(db)
        return urlunparse(urlparse(self.server_url)._replace(path=f"/{db}"))

    def _admin(self, sql: str) -> None:
        import psycopg

        url = urlunparse(urlparse(self.server_url)._replace(path="/postgres"))
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql)

    def _base_env(self, var: Path) -> dict[str, str]:
        return {
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.tmp),
            "LANG": "C.UTF-8",
            "CARAVANSERAI_REGISTRY_PATH": str(var / "gateway-registry.sqlite3"),
        }

    # --- compose -------------------------------------------------------------------------------------------
    def compose_launches(self) -> list[Launch]:
        data = load_compose()
        services = set(data["services"])
        var = self.tmp / "compose-var"
        var.mkdir()
        skipped = not_started()
        database_url = self.database("compose") if "postgres" in skipped else None
        launches = []
        for p in compose_processes(data, {"DJANGO_SECRET_KEY": self.secret}):
            if p.name in skipped:
                continue
            paths = {IMAGE_VAR: str(var), IMAGE_WORKDIR: str(ROOT), **_volume_paths(data["services"][p.name])}
            env = {**self._base_env(var)}
            for name, value in p.env.items():
                env[name] = _map_text(value, p.name, services, self.ports, paths)
            if "DATABASE_URL" in p.env and database_url is not None:  # the stand-in for the postgres service
                env.pop("DATABASE_URL")
                if database_url:
                    env["DATABASE_URL"] = database_url
            argv = [_map_text(a, p.name, services, self.ports, paths) for a in p.argv]
            if p.shell:  # run the wrapper as written: the mapped script in sh -c
                argv = ["sh", "-c", _map_text(p.shell, p.name, services, self.ports, paths)]
            if p.role == "gateway":
                _default_gateway_addresses(env, p.name, self.ports)
            argv = self._image_defaults(p, argv, var)
            after = {
                _launch_name(f"compose service {d}"): c for d, c in p.depends_on.items() if d not in skipped
            }
            launches.append(Launch(p, argv, env, self.ports.of(p.name), after))
        return launches

    def _image_defaults(self, p: Process, argv: list[str], var: Path) -> list[str]:
        if p.role in ("lb", "web-proxy"):
            binary = haproxy()
            assert binary, "HAProxy is not installed (make install puts Debian's package in)"
            return [binary, "-W", "-db", *argv[1:]]  # the official image's entrypoint adds -W -db
        if p.role == "redis":
            data = var / "redis"
            data.mkdir()
            port = self.ports.get(p.name, 6379)
            return [*argv, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data), "--save", ""]
        if p.role == "postgres":
            return self._postgres(p, argv)
        return argv

    def _postgres(self, p: Process, argv: list[str]) -> list[str]:
        """The command as written, after the image entrypoint's initdb, as the postgres user."""
        bindir = postgres_bindir()
        assert bindir
        owner = pwd.getpwnam("postgres")
        home = Path(tempfile.mkdtemp(prefix="deploy-pg-"))
        self.directories.append(home)
        (home / "pw").write_text(p.env["POSTGRES_PASSWORD"])
        for path in (home, home / "pw"):
            os.chown(path, owner.pw_uid, owner.pw_gid)
        script = (
            f'{bindir}/initdb -D "$0/data" -U "$POSTGRES_USER" --pwfile="$0/pw" --auth-local=trust'
            f' --auth-host=scram-sha-256 >/dev/null && exec {bindir}/postgres -D "$0/data" "$@"'
        )
        port = self.ports.get(p.name, 5432)
        return [
            "setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", "sh", "-c", script,
            str(home), *argv[1:], "-p", str(port), "-c", "listen_addresses=127.0.0.1", "-k", str(home),
        ]  # fmt: skip

    # --- Procfile ------------------------------------------------------------------------------------------
    def procfile_launches(self, redis_url: str = "") -> list[Launch]:
        var = self.tmp / "procfile-var"
        var.mkdir()
        env = {
            **self._base_env(var),
            "DJANGO_SECRET_KEY": self.secret,
            "CARAVANSERAI_VAR_DIR": str(var),
            "PYTHONUNBUFFERED": "1",
        }
        if database_url := self.database("procfile"):
            env["DATABASE_URL"] = database_url
        if redis_url:
            env.update(
                REDIS_URL=redis_url,
                CARAVANSERAI_BROKER_PREFIX=f"deploy:{self.uid}:",
                CARAVANSERAI_LEASE_PREFIX=f"deploy:{self.uid}:lease:",
                CARAVANSERAI_REGISTRY_PREFIX=f"deploy:{self.uid}:gw",
                LADDER_CACHE_PREFIX=f"deploy-{self.uid}",
            )
        launches = []
        migrate = Process("migrate", [str(VENV_BIN / "python"), "manage.py", "migrate", "--noinput"], {},
                          "Procfile migrate, from its header")  # fmt: skip
        for p in [migrate, *procfile_processes(load_procfile())]:
            full = {**env, **{k: _map_addresses(v, "procfile", set(), self.ports) for k, v in p.env.items()}}
            if p.role == "gateway":
                _default_gateway_addresses(full, "procfile", self.ports)
            argv = [_map_text(a, "procfile", set(), self.ports, {}) for a in p.argv]
            after = {} if p is migrate else {_launch_name(migrate.source): "service_completed_successfully"}
            launches.append(Launch(p, argv, full, {}, after))
        for launch in launches:
            launch.ports = self.ports.of("procfile")
        return launches

    # --- running -------------------------------------------------------------------------------------------
    def start(self, launch: Launch) -> Launch:
        launch.proc = Proc(launch.name, launch.argv, launch.env, self.logs)
        launch.started = time.monotonic()
        return launch

    def stop(
        self, launches: list[Launch], grace: Callable[[Launch], float]
    ) -> dict[str, tuple[int | None, float]]:
        """SIGTERM to each of `launches` at once (one signal, as compose and honcho send), then wait for each
        up to its `grace` seconds: name -> (exit status, or None if still running; seconds after SIGTERM)."""
        started = time.monotonic()
        for launch in launches:
            assert launch.proc is not None
            with contextlib.suppress(ProcessLookupError):
                launch.proc.popen.send_signal(signal.SIGTERM)
        stopped: dict[str, tuple[int | None, float]] = {}
        while len(stopped) < len(launches) and time.monotonic() < started + max(map(grace, launches)):
            for launch in launches:
                assert launch.proc is not None
                if launch.name not in stopped and launch.proc.popen.poll() is not None:
                    stopped[launch.name] = (
                        launch.proc.popen.returncode,
                        round(time.monotonic() - started, 2),
                    )
            time.sleep(0.05)
        for launch in launches:  # still running after the longest grace: no status
            stopped.setdefault(launch.name, (None, round(time.monotonic() - started, 2)))
        return stopped

    def cleanup(self) -> None:
        for launch in self.launches:
            if launch.proc is not None:
                launch.proc.kill()
                launch.proc.log.close()
        for db in self.databases:
            self._admin(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        for directory in self.directories:
            shutil.rmtree(directory, ignore_errors=True)
        urls = {x.env.get("REDIS_URL", "") for x in self.launches if x.process.source.startswith("Procfile")}
        for url in urls - {""}:
            self._drop_redis_keys(url)

    def _drop_redis_keys(self, url: str) -> None:
        import redis

        client = redis.Redis.from_url(url)
        for pattern in (f"deploy:{self.uid}:*", f"*deploy-{self.uid}*"):
            keys = list(client.scan_iter(match=pattern, count=500))
            if keys:
                client.delete(*keys)
        client.close()


def _launch_name(source: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "-", source)


def _volume_paths(service: dict) -> dict[str, str]:
    """Bind mounts of files in the repository (`./haproxy.cfg:/usr/local/etc/...:ro`): container -> checkout."""
    paths = {}
    for volume in service.get("volumes") or []:
        parts = str(volume).split(":")
        if parts[0].startswith("."):
            paths[parts[1]] = str((COMPOSE.parent / parts[0]).resolve())
    return paths


# --- coming up -----------------------------------------------------------------------------------------------
def _http_ok(url: str, expect: str = "") -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200 and expect in response.read().decode(errors="replace")
    except OSError:
        return False


def _grpc_serving(address: str) -> bool:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
        except grpc.RpcError:
            return False
    return reply.status == health_pb2.HealthCheckResponse.SERVING


def _redis_pong(port: int) -> bool:
    import redis

    try:
        return bool(redis.Redis(port=port, socket_timeout=2).ping())
    except redis.RedisError:
        return False


def _postgres_ready(port: int, env: dict[str, str]) -> bool:
    """The server answers with the image's user and password; POSTGRES_DB is created then, as the image's
    entrypoint does before it reports ready."""
    import psycopg

    user, password, db = env["POSTGRES_USER"], env["POSTGRES_PASSWORD"], env["POSTGRES_DB"]
    try:
        with psycopg.connect(
            host="127.0.0.1", port=port, user=user, password=password, dbname="postgres", autocommit=True,
            connect_timeout=2,
        ) as conn:  # fmt: skip
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,)).fetchone():
                conn.execute(f'CREATE DATABASE "{db}"')
        return True
    except psycopg.OperationalError:
        return False


def _address_port(value: str) -> int:
    address = host_port(value)
    assert address, f"not host:port: {value!r}"
    return address[1]


def up_check(launch: Launch) -> tuple[str, Callable[[], bool]]:
    """What shows `launch` came up, and a probe for it (None-free: one-shots are waited for apart)."""
    p, env = launch.process, launch.env
    log = launch.proc.output if launch.proc else (lambda: "")
    if p.role == "web":
        port = command_listen_ports(launch.argv)[0]
        return f"GET :{port}/healthz", lambda: _http_ok(f"http://127.0.0.1:{port}/healthz")
    if p.role == "web-proxy":  # up once it passes /healthz on to a web server that answers it
        port = _address_port(env["CARAVANSERAI_WEB_BIND"])
        return f"GET :{port}/healthz through the proxy", lambda: _http_ok(f"http://127.0.0.1:{port}/healthz")
    if p.role in ("gateway", "lb"):
        name = "CARAVANSERAI_GATEWAY_ADDR" if p.role == "gateway" else "CARAVANSERAI_LB_BIND"
        address = f"127.0.0.1:{_address_port(env[name])}"
        return f"grpc.health.v1 SERVING on {address}", lambda: _grpc_serving(address)
    if p.role == "worker":
        return "log line 'ready.'", lambda: re.search(r"@\S+ ready\.", log()) is not None
    if p.role == "beat":
        return "log line 'beat: Starting...'", lambda: "beat: Starting..." in log()
    if p.role == "redis":
        port = int(launch.argv[launch.argv.index("--port") + 1])
        return f"PING on :{port}", lambda: _redis_pong(port)
    if p.role == "postgres":
        port = int(launch.argv[launch.argv.index("-p") + 1])
        return f"SELECT 1 on :{port} as {env['POSTGRES_USER']}", lambda: _postgres_ready(port, env)
    if p.role == "flower":
        port = command_listen_ports(launch.argv)[0]
        return f"GET :{port}/healthcheck", lambda: _http_ok(f"http://127.0.0.1:{port}/healthcheck", "OK")
    if p.role == "module":  # the project's convention: one `READY ...` line once a server is up
        return "log line 'READY'", lambda: re.search(r"^READY ", log(), re.M) is not None
    raise AssertionError(f"{p.source}: no way to tell that {p.argv} came up")
