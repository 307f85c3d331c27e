"""Test harness: a real gateway process on loopback, bot processes (Python SDK, Node), and a raw bot client
driven from the test (for misbehaviour: stale ids, wrong seats, garbage, slowness, disconnects).

Everything talks over real sockets; the referee runs in the test process with `RemoteSeat`s. Nothing here
depends on how busy the machine is: every wait is for an event, capped by `WAIT` (generous, and a met
condition returns at once); bots that answer play under `PATIENT` (or `TOLERANT`), whose deadlines a loaded
machine never reaches; a session outlives its gateway's heartbeats by `SESSION_TTL`, far more than a
loaded machine delays one; a wait the seat would sit out to a deadline (a bot that left for good) is skipped
on the seat's `SeatClock` instead of being slept through.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from engine_service.gateway.local import LocalSettings
from engine_service.gateway.protocol import bot_pb2, bot_pb2_grpc
from engine_service.gateway.registry import SessionRegistry, sessions_for_bot
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.referee import DecisionRequest, TimeControl
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[3]
PYTHON = sys.executable
SDK_PATH = ROOT / "clients" / "python"
EXAMPLES = SDK_PATH / "examples"
NODE_DIR = ROOT / "clients" / "node"
GAME = "expedition-v1"
WAIT = 120.0  # seconds: the cap on any wait for something to happen (a process to start, a message)
# Deadlines a bot answering at once keeps on any machine (a deadline only bounds a wait that ends with the
# answer); one fault is allowed, a second forfeits.
PATIENT = TimeControl(decision_seconds=30.0, time_bank_seconds=60.0, max_faults=1)
TOLERANT = dataclasses.replace(PATIENT, max_faults=3)  # three faults before a forfeit
SESSION_TTL = 10.0  # seconds a session outlives its gateway's last heartbeat (every 0.5 s)


@dataclass
class Token:
    token: str
    bot_id: str
    name: str
    games: tuple[str, ...] = (GAME,)
    max_concurrent: int = 4

    def to_json(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "bot_id": self.bot_id,
            "name": self.name,
            "owner": "tester",
            "games": list(self.games),
            "max_concurrent": self.max_concurrent,
        }


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


class GatewayProcess:
    """`python -m engine_service.gateway.server` with dev tokens from a file and a given registry."""

    def __init__(
        self,
        tokens: list[Token],
        workdir: Path,
        registry_path: Path,
        *,
        bot_port: int = 0,
        relay_port: int = 0,
        env: dict[str, str] | None = None,
    ) -> None:
        self.tokens_file = workdir / "tokens.json"
        self.tokens_file.write_text(json.dumps([t.to_json() for t in tokens]))
        self.registry_path = registry_path
        self.bot_port = bot_port
        self.relay_port = relay_port
        self.extra_env = env or {}
        self.proc: subprocess.Popen[str] | None = None
        self.ready: dict[str, Any] = {}
        self.log = workdir / "gateway.log"

    def start(self) -> GatewayProcess:
        defaults = {
            "CARAVANSERAI_GATEWAY_ADDR": f"127.0.0.1:{self.bot_port}",
            "CARAVANSERAI_RELAY_ADDR": f"127.0.0.1:{self.relay_port}",
            "CARAVANSERAI_GATEWAY_AUTH": f"file:{self.tokens_file}",
            "CARAVANSERAI_REGISTRY_PATH": str(self.registry_path),
            "CARAVANSERAI_GATEWAY_HEARTBEAT": "0.5",
            "CARAVANSERAI_GATEWAY_SESSION_TTL": str(SESSION_TTL),
        }
        env = base_env(**{**defaults, **self.extra_env})
        with self.log.open("a") as log:
            self.proc = subprocess.Popen(
                [PYTHON, "-m", "engine_service.gateway.server"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.5)
            if ready:
                line = self.proc.stdout.readline()
                if line.startswith("READY "):
                    self.ready = json.loads(line[6:])
                    self.bot_port = int(self.ready["bot_port"])
                    self.relay_port = int(str(self.ready["relay_address"]).rsplit(":", 1)[1])
                    return self
                if not line and self.proc.poll() is not None:
                    break
        raise RuntimeError(f"gateway did not start: {self.log.read_text()[-2000:]}")

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.bot_port}"

    @property
    def gateway_id(self) -> str:
        return str(self.ready["gateway_id"])

    def stop(self) -> None:
        """SIGTERM: the gateway closes bot streams with UNAVAILABLE and leaves the registry."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(WAIT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> GatewayProcess:
        self.stop()
        return self.start()


class BotProcess:
    """An example bot as an external process (Python SDK example or the Node example)."""

    def __init__(self, kind: str, target: str, token: str, workdir: Path, *args: str) -> None:
        self.log = workdir / f"bot-{kind}-{token}.log"
        if kind == "node":
            command = ["node", str(NODE_DIR / "bot.js"), "--target", target, "--token", token, *args]
            env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")}
        else:
            command = [PYTHON, str(EXAMPLES / f"{kind}_bot.py"), "--target", target, "--token", token, *args]
            env = base_env(PYTHONPATH=f"{SDK_PATH}{os.pathsep}{ROOT}")
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    def output(self) -> str:
        return self.log.read_text()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def wait_for(predicate: Callable[[], Any], timeout: float = WAIT, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def wait_for_bot(registry: SessionRegistry, bot_id: str, timeout: float = WAIT, count: int = 1) -> None:
    wait_for(lambda: len(sessions_for_bot(registry, bot_id)) >= count, timeout, f"bot {bot_id} to connect")


Behaviour = Callable[["RawBot", bot_pb2.DecisionRequest], None]


@dataclass
class RawBot:
    """A bot speaking the protocol by hand over a sync gRPC stream, with a pluggable decision behaviour."""

    target: str
    token: str
    behaviour: Behaviour | None = None
    games: tuple[str, ...] = (GAME,)
    capacity: int = 1
    received: list[bot_pb2.ServerMessage] = field(default_factory=list)
    status: grpc.StatusCode | None = None
    details: str = ""
    requests: list[bot_pb2.DecisionRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._out: queue.Queue[bot_pb2.BotMessage | None] = queue.Queue()
        self._channel = grpc.insecure_channel(self.target)
        self._done = threading.Event()
        self._welcome = threading.Event()
        self._lock = threading.Lock()

    def _requests(self) -> Iterator[bot_pb2.BotMessage]:
        while True:
            item = self._out.get()
            if item is None:
                return
            yield item

    def connect(
        self, hello: bot_pb2.Hello | None = None, *, wait: bool = True, send_hello: bool = True
    ) -> RawBot:
        hello = hello or bot_pb2.Hello(
            bot_name="raw", sdk="test-raw/1", games=list(self.games), max_concurrent_matches=self.capacity
        )
        if send_hello:
            self.send(bot_pb2.BotMessage(hello=hello))
        stub = bot_pb2_grpc.BotServiceStub(self._channel)
        self._call = stub.Connect(self._requests(), metadata=(("authorization", f"Bearer {self.token}"),))
        threading.Thread(target=self._read, daemon=True).start()
        if wait:
            wait_for(lambda: self._welcome.is_set() or self._done.is_set(), what="Welcome")
        return self

    def _read(self) -> None:
        try:
            for message in self._call:
                with self._lock:
                    self.received.append(message)
                kind = message.WhichOneof("message")
                if kind == "welcome":
                    self._welcome.set()
                elif kind == "decision_request":
                    self.requests.append(message.decision_request)
                    if self.behaviour is not None:
                        threading.Thread(
                            target=self.behaviour, args=(self, message.decision_request), daemon=True
                        ).start()
            self.status = grpc.StatusCode.OK
        except grpc.RpcError as exc:
            self.status = exc.code()
            self.details = exc.details() or ""
        finally:
            self._done.set()

    def send(self, message: bot_pb2.BotMessage) -> None:
        self._out.put(message)

    def answer(
        self, request: bot_pb2.DecisionRequest, action_id: str | None = None, **overrides: str
    ) -> None:
        decision = bot_pb2.Decision(
            match_id=overrides.get("match_id", request.match_id),
            request_id=overrides.get("request_id", request.request_id),
            action_id=request.legal_actions[0].id if action_id is None else action_id,
        )
        self.send(bot_pb2.BotMessage(decision=decision))

    def messages(self, kind: str) -> list[Any]:
        with self._lock:
            return [getattr(m, kind) for m in self.received if m.WhichOneof("message") == kind]

    def errors(self) -> list[bot_pb2.Error]:
        return self.messages("error")

    def wait_closed(self, timeout: float = WAIT) -> grpc.StatusCode | None:
        self._done.wait(timeout)
        return self.status

    def close(self) -> None:
        self._out.put(None)
        if hasattr(self, "_call"):
            self._call.cancel()
        self._channel.close()


def first_legal(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
    bot.answer(request)


class SeatClock:
    """A remote seat's clock: the machine's, which the test moves ahead, at once (`skip`) or by `stride`
    seconds at every reading while that is set, or stops. A seat whose bot left for good waits for it until
    the decision's deadline: a skip past it ends that wait at once, however long the deadline (the bot's
    earlier answers keep `PATIENT` deadlines). A stride makes a wait the seat is in seem as long as wanted; a
    stopped clock makes what follows take no time (a grace cannot run out while a loaded machine brings the
    bot back)."""

    def __init__(self) -> None:
        self.ahead = 0.0
        self.stride = 0.0
        self.stopped: float | None = None

    def __call__(self) -> float:
        if self.stopped is not None:
            return self.stopped
        self.ahead += self.stride
        return time.monotonic() + self.ahead

    def skip(self, seconds: float = 10 * WAIT) -> None:
        self.ahead += seconds

    def stop(self) -> None:
        self.stopped = self()


class TimedSeat(RemoteSeat):
    """A remote seat that keeps the bot seconds the gateway reported for each decision, unrounded."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bot_seconds: list[float] = []

    def decide(self, request: DecisionRequest) -> str:
        try:
            return super().decide(request)
        finally:
            self.bot_seconds.append(float(request.extra["bot_seconds"]))


TOKENS = [
    Token("tok-alpha", "alpha", "py-random"),
    Token("tok-beta", "beta", "py-greedy"),
    Token("tok-gamma", "gamma", "node-random"),
    Token("tok-raw1", "raw1", "raw-one"),
    Token("tok-raw2", "raw2", "raw-two"),
    Token("tok-raw3", "raw3", "raw-three"),
    Token("tok-limit", "limit", "limited"),
    Token("tok-revoke", "revoke", "to-be-revoked"),
    Token("tok-sdk", "sdk", "sdk-in-tests"),
]
LIMIT_ENV = {
    "CARAVANSERAI_GATEWAY_MAX_SESSIONS_PER_BOT": "2",
    "CARAVANSERAI_GATEWAY_MAX_MESSAGE_BYTES": "65536",
    "CARAVANSERAI_GATEWAY_HELLO_TIMEOUT": "10",  # a Hello sent with the stream arrives well within it
}


@dataclass
class Stack:
    """A gateway process, the registry the test's remote seats read, and the gateway's metrics port (0:
    none)."""

    gateway: GatewayProcess
    registry: SessionRegistry
    workdir: Path
    metrics_port: int = 0

    def metrics(self) -> dict[str, float]:
        return scrape_metrics(self.metrics_port)


def start_stack(workdir: Path, *, env: dict[str, str] | None = None, metrics: bool = False) -> Stack:
    from engine_service.gateway.registry import SqliteRegistry

    workdir.mkdir(parents=True, exist_ok=True)
    registry_path = workdir / "registry.sqlite3"
    metrics_port = free_port() if metrics else 0
    extra = {"CARAVANSERAI_GATEWAY_METRICS_PORT": str(metrics_port)} if metrics else {}
    gateway = GatewayProcess(
        TOKENS, workdir, registry_path, env={**LIMIT_ENV, **extra, **(env or {})}
    ).start()
    return Stack(gateway, SqliteRegistry(registry_path, ttl=SESSION_TTL), workdir, metrics_port)


def local_settings(out: Path, **changes: Any) -> LocalSettings:
    """A local runner on a free port against random house bots, with `PATIENT` deadlines and `WAIT` for the
    bot between matches; `changes` to these."""
    base: dict[str, Any] = dict(
        port=0,
        house="random",
        decision_seconds=PATIENT.decision_seconds,
        bank_seconds=PATIENT.time_bank_seconds,
        wait=WAIT,
        out=out,
    )
    return LocalSettings(**{**base, **changes})


def scrape_metrics(port: int) -> dict[str, float]:
    """A Prometheus endpoint on this machine: each sample's value summed over its labels, by sample name."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=WAIT) as response:
        text = response.read().decode()
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
    return totals


def ensure_node_modules() -> None:
    """`npm ci` for the Node example (from the registry), once."""
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=NODE_DIR,
            check=True,
            timeout=300,
            capture_output=True,
        )
