"""Relay benchmark: a decision round trip through the gateway relay vs a raw grpc.aio bidi ping-pong.

Measured side by side in one run, on this machine, with real processes on loopback:
- raw: a grpc.aio bidirectional stream (bench process -> echo server process), one message each way, the
  request carrying the serialized `DecisionRequest` of a real Expedition decision, the reply a `Decision`;
- bare proxy: the same bytes from a synchronous gRPC stream (as the worker's relay once called) through a
  grpc.aio process that only forwards them to the echo server and back: the floor for any relay that adds
  one grpc.aio process in Python between worker and bot with gRPC on both legs (two hops each way, nothing
  decoded, no bookkeeping);
- relay: `RemoteSeat.decide` (the worker side: the process's shared decision connection, a blocking TCP
  socket speaking `relay_frames`) -> gateway process (its decision port, an asyncio Protocol; then the
  bot's gRPC stream) -> a bot process answering at once -> back: two hops each way, only the bot's one
  gRPC, the request encoded in the worker and passed through the gateway undecoded;
- relay + SDK: the same with the Python SDK's random example bot (JSON decoding, a worker thread per call);
- relay, asyncio loop: the relay through a second gateway process on the standard library's event loop
  (CARAVANSERAI_GATEWAY_EVENT_LOOP=asyncio) to a bot of its own, against the default gateway on uvloop;
- multiplexed: `MUX_SEATS` seats in as many threads of this process, all on its one decision connection to
  the gateway, each deciding as fast as its bot answers (50 protocol-level bots in one swarm process);
- matches: 25 matches between those bots played concurrently by 25 referee threads (engine included).
CPU time per decision is read from /proc/<pid>/stat for the gateway, echo and bot processes and from
`time.process_time` for this (worker) process. Blocks of raw and relay round trips alternate so machine
noise hits both alike. Prints a table and writes bench/results/bench_relay.json. Run: `python -m bench relay`
(or `make bench`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GAME = "expedition-v1"
BLOCKS = 10
PER_BLOCK = 200
SWARM = 50
MUX_SEATS = 100
MUX_DECISIONS = 40  # per seat
ECHO_METHOD = "/bench.Echo/PingPong"
PROXY_METHOD = "/bench.Proxy/PingPong"


# --- helper processes ---------------------------------------------------------------------------------
async def _serve_raw(port_file: str) -> None:
    import grpc

    from engine_service.gateway.protocol import bot_pb2

    reply = bot_pb2.BotMessage(
        decision=bot_pb2.Decision(
            match_id="m" * 32, request_id="m" * 32 + ":123", action_id="move:p0:blue-fruit"
        )
    ).SerializeToString()

    async def ping_pong(requests: Any, context: Any) -> Any:
        async for request in requests:
            bot_pb2.ServerMessage.FromString(request)  # decode, as a bot would
            yield reply

    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "bench.Echo", {"PingPong": grpc.stream_stream_rpc_method_handler(ping_pong)}
            )
        ]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    Path(port_file).write_text(str(port))
    await server.wait_for_termination()


async def _serve_proxy(upstream: str, port_file: str) -> None:
    """A gateway that only forwards bytes: each stream gets its own stream to the echo server at `upstream`,
    and every message goes on as it came, both ways."""
    import grpc

    async def forward(requests: Any, context: Any) -> None:
        async with grpc.aio.insecure_channel(upstream) as channel:
            call = channel.stream_stream(ECHO_METHOD)()

            async def back() -> None:
                while (reply := await call.read()) is not grpc.aio.EOF:
                    await context.write(reply)

            replies = asyncio.ensure_future(back())
            try:
                while (request := await context.read()) is not grpc.aio.EOF:
                    await call.write(request)
            finally:
                replies.cancel()

    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "bench.Proxy", {"PingPong": grpc.stream_stream_rpc_method_handler(forward)}
            )
        ]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    Path(port_file).write_text(str(port))
    await server.wait_for_termination()


async def _swarm(target: str, count: int, prefix: str) -> None:
    """`count` protocol-level bots on one event loop, each answering the first legal action at once."""
    import grpc

    from engine_service.gateway.protocol import bot_pb2, bot_pb2_grpc

    async def one(i: int) -> None:
        async with grpc.aio.insecure_channel(target) as channel:
            call = bot_pb2_grpc.BotServiceStub(channel).Connect(
                metadata=(("authorization", f"Bearer {prefix}{i}"),)
            )
            await call.write(
                bot_pb2.BotMessage(
                    hello=bot_pb2.Hello(bot_name=f"swarm{i}", games=[GAME], max_concurrent_matches=4)
                )
            )
            async for message in call:
                if message.WhichOneof("message") == "decision_request":
                    r = message.decision_request
                    await call.write(
                        bot_pb2.BotMessage(
                            decision=bot_pb2.Decision(
                                match_id=r.match_id, request_id=r.request_id, action_id=r.legal_actions[0].id
                            )
                        )
                    )

    await asyncio.gather(*(one(i) for i in range(count)))


def _spawn(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _wait_ready(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line = proc.stdout.readline()
            if line.startswith("READY "):
                return dict(json.loads(line[6:]))
    raise RuntimeError("gateway did not start")


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- measurements -------------------------------------------------------------------------------------
def _sample_request() -> Any:
    """A real mid-game Expedition decision, as the referee builds it."""
    from engine_service.games import make
    from engine_service.policies import make_policy
    from engine_service.referee import DecisionRequest

    state = make(GAME, 2, 7)
    policy = make_policy("random", 1)
    while state.step < 40 or len(state.legal_actions(state.current_seats()[0])) < 8:
        seat = state.current_seats()[0]
        state.apply(seat, policy.choose(state.observation(seat), state.legal_actions(seat)))
    seat = state.current_seats()[0]
    return DecisionRequest(
        match_id="m" * 32,
        game_id=GAME,
        seat=seat,
        step=state.step,
        request_id="m" * 32 + f":{state.step}",
        observation=state.observation(seat),
        legal_actions=state.legal_actions(seat),
        deadline_seconds=10.0,
        time_bank_seconds=5.0,
    )


class RawPingPong:
    def __init__(self, port: int, payload: bytes) -> None:
        self.port = port
        self.payload = payload
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self._open())

    async def _open(self) -> None:
        import grpc

        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.port}")
        self.call = self.channel.stream_stream(ECHO_METHOD)()
        await self.call.write(self.payload)
        await self.call.read()

    async def _rounds(self, n: int) -> list[float]:
        times = []
        for _ in range(n):
            started = time.perf_counter()
            await self.call.write(self.payload)
            await self.call.read()
            times.append(time.perf_counter() - started)
        return times

    def rounds(self, n: int) -> list[float]:
        return self.loop.run_until_complete(self._rounds(n))

    def close(self) -> None:
        self.call.cancel()
        self.loop.run_until_complete(self.channel.close())
        self.loop.close()


class ProxyPingPong:
    """Round trips through the bare proxy from a synchronous gRPC stream, the worker's kind of call."""

    def __init__(self, port: int, payload: bytes) -> None:
        import queue

        import grpc

        self.payload = payload
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.call = self.channel.stream_stream(PROXY_METHOD)(iter(self.outbox.get, None))

    def rounds(self, n: int) -> list[float]:
        times = []
        for _ in range(n):
            started = time.perf_counter()
            self.outbox.put(self.payload)
            next(self.call)
            times.append(time.perf_counter() - started)
        return times

    def close(self) -> None:
        self.outbox.put(None)
        self.call.cancel()
        self.channel.close()


def _relay_rounds(seat: Any, request: Any, n: int) -> list[float]:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        seat.decide(request)
        times.append(time.perf_counter() - started)
    return times


def _bind(seat: Any, match_id: str) -> None:
    from engine_service.referee import MatchInfo

    seat.start(MatchInfo(match_id, GAME, 2, {}, 0, ["bench"], 10.0, 5.0))


def _summary(times: list[float]) -> dict[str, float]:
    from bench.common import percentile

    return {
        "n": len(times),
        "p50_ms": percentile(times, 50) * 1000,
        "p99_ms": percentile(times, 99) * 1000,
        "mean_ms": sum(times) / len(times) * 1000,
    }


def _process_cpu(pid: int) -> float:
    """User plus system CPU seconds of a process, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU seconds spent by this process and by other processes (by name) over the measured phases."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.spent = {"worker": 0.0, **{name: 0.0 for name in pids}}

    def run(self, work: Callable[[], Any]) -> Any:
        before = self._now()
        result = work()
        after = self._now()
        for name in self.spent:
            self.spent[name] += after[name] - before[name]
        return result

    def _now(self) -> dict[str, float]:
        return {"worker": time.process_time(), **{n: _process_cpu(p) for n, p in self.pids.items()}}

    def per_decision_us(self, decisions: int) -> dict[str, float]:
        return {name: seconds / decisions * 1e6 for name, seconds in self.spent.items()}


def _payload(request: Any) -> bytes:
    from engine_service.gateway.protocol import bot_pb2, dumps, legal_actions_to_proto

    return bot_pb2.ServerMessage(
        decision_request=bot_pb2.DecisionRequest(
            match_id=request.match_id,
            request_id=request.request_id,
            seat=request.seat,
            step=request.step,
            observation_json=dumps(request.observation),
            legal_actions=legal_actions_to_proto(request.legal_actions),
            time_limit_ms=10000,
            time_bank_ms=5000,
        )
    ).SerializeToString()


def _setup(work: Path) -> dict[str, str]:
    tokens = [{"token": "bench-sdk", "bot_id": "sdk", "name": "sdk", "games": [GAME], "max_concurrent": 4}]
    tokens += [
        {"token": f"bench-{i}", "bot_id": f"b{i}", "name": f"b{i}", "games": [GAME], "max_concurrent": 4}
        for i in range(SWARM)
    ]
    tokens.append({"token": "bench-a0", "bot_id": "a0", "name": "a0", "games": [GAME], "max_concurrent": 4})
    (work / "tokens.json").write_text(json.dumps(tokens))
    os.environ.pop("REDIS_URL", None)
    return {
        "CARAVANSERAI_GATEWAY_ADDR": "127.0.0.1:0",
        "CARAVANSERAI_RELAY_ADDR": "127.0.0.1:0",
        "CARAVANSERAI_GATEWAY_AUTH": f"file:{work / 'tokens.json'}",
        "CARAVANSERAI_REGISTRY_PATH": str(work / "registry.sqlite3"),
        "CARAVANSERAI_GATEWAY_MAX_SESSIONS_PER_BOT": "4",
    }


def _start_helpers(work: Path, processes: list[subprocess.Popen[str]]) -> dict[str, int]:
    """Gateway, echo server, bot swarm and SDK bot; returns their pids once every bot is connected."""
    from engine_service.gateway.registry import SqliteRegistry

    env = _setup(work)
    gateway = _spawn(["-m", "engine_service.gateway.server"], env)
    on_asyncio = _spawn(
        ["-m", "engine_service.gateway.server"], {**env, "CARAVANSERAI_GATEWAY_EVENT_LOOP": "asyncio"}
    )
    processes += [gateway, on_asyncio]
    target = f"127.0.0.1:{_wait_ready(gateway)['bot_port']}"
    asyncio_target = f"127.0.0.1:{_wait_ready(on_asyncio)['bot_port']}"
    port_file = work / "raw.port"
    echo = _spawn(["-m", "bench.bench_relay", "--serve-raw", str(port_file)])
    processes.append(echo)
    deadline = time.monotonic() + 30
    while not port_file.exists() or not port_file.read_text():
        if time.monotonic() > deadline:
            raise RuntimeError("echo server did not start")
        time.sleep(0.05)
    proxy_file = work / "proxy.port"
    proxy = _spawn(
        ["-m", "bench.bench_relay", "--serve-proxy", f"127.0.0.1:{port_file.read_text()}", str(proxy_file)]
    )
    swarm = _spawn(["-m", "bench.bench_relay", "--swarm", target, str(SWARM), "bench-"])
    asyncio_bot = _spawn(["-m", "bench.bench_relay", "--swarm", asyncio_target, "1", "bench-a"])
    sdk_bot = _spawn(
        [str(ROOT / "clients/python/examples/random_bot.py"), "--target", target, "--token", "bench-sdk"],
        {"PYTHONPATH": f"{ROOT / 'clients/python'}{os.pathsep}{ROOT}"},
    )
    processes += [proxy, swarm, asyncio_bot, sdk_bot]
    registry = SqliteRegistry(work / "registry.sqlite3")
    deadline = time.monotonic() + 60
    while (
        not proxy_file.exists()
        or not proxy_file.read_text()
        or len({s.bot_id for s in registry.sessions()}) < SWARM + 2
    ):
        if time.monotonic() > deadline:
            raise RuntimeError("helpers did not come up")
        time.sleep(0.1)
    return {
        "gateway": gateway.pid,
        "gateway_asyncio": on_asyncio.pid,
        "asyncio_bot": asyncio_bot.pid,
        "echo": echo.pid,
        "proxy": proxy.pid,
        "swarm": swarm.pid,
        "sdk": sdk_bot.pid,
    }


def _seat(registry: Any, bot_id: str, match_id: str, request: Any) -> tuple[Any, Any]:
    from engine_service.gateway.remote_seat import RemoteSeat

    seat = RemoteSeat(bot_id, bot_id, registry)
    _bind(seat, match_id)
    return seat, dataclasses.replace(request, match_id=match_id, request_id=f"{match_id}:40")


def _round_trips(
    registry: Any, request: Any, pids: dict[str, int], port: int, proxy_port: int
) -> dict[str, Any]:
    """Alternating blocks: raw ping-pong, the bare proxy, relay to a protocol-level bot (through the gateway
    on uvloop, then the one on asyncio's loop), relay to the SDK bot."""
    raw = RawPingPong(port, _payload(request))
    proxy = ProxyPingPong(proxy_port, _payload(request))
    proto_seat, proto_request = _seat(registry, "b0", "bench-proto", request)
    asyncio_seat, asyncio_request = _seat(registry, "a0", "bench-asyncio", request)
    sdk_seat, sdk_request = _seat(registry, "sdk", "bench-sdk", request)
    raw.rounds(100)
    proxy.rounds(100)
    _relay_rounds(proto_seat, proto_request, 100)
    _relay_rounds(asyncio_seat, asyncio_request, 100)
    _relay_rounds(sdk_seat, sdk_request, 100)
    names = ("raw", "bare_proxy", "relay", "relay_asyncio", "relay_sdk")
    times: dict[str, list[float]] = {name: [] for name in names}
    meters = {
        "raw": CpuMeter({"echo": pids["echo"]}),
        "bare_proxy": CpuMeter({"gateway": pids["proxy"], "bot": pids["echo"]}),
        "relay": CpuMeter({"gateway": pids["gateway"], "bot": pids["swarm"]}),
        "relay_asyncio": CpuMeter({"gateway": pids["gateway_asyncio"], "bot": pids["asyncio_bot"]}),
        "relay_sdk": CpuMeter({"gateway": pids["gateway"], "bot": pids["sdk"]}),
    }
    for _ in range(BLOCKS):
        times["raw"] += meters["raw"].run(lambda: raw.rounds(PER_BLOCK))
        times["bare_proxy"] += meters["bare_proxy"].run(lambda: proxy.rounds(PER_BLOCK))
        times["relay"] += meters["relay"].run(lambda: _relay_rounds(proto_seat, proto_request, PER_BLOCK))
        times["relay_asyncio"] += meters["relay_asyncio"].run(
            lambda: _relay_rounds(asyncio_seat, asyncio_request, PER_BLOCK)
        )
        times["relay_sdk"] += meters["relay_sdk"].run(
            lambda: _relay_rounds(sdk_seat, sdk_request, PER_BLOCK // 2)
        )
    raw.close()
    proxy.close()
    return {
        name: {**_summary(t), "cpu_us": meters[name].per_decision_us(len(t))} for name, t in times.items()
    }


def _multiplexed(registry: Any, request: Any, pids: dict[str, int]) -> dict[str, Any]:
    """`MUX_SEATS` threads deciding at once over this process's one decision connection."""
    seats = [_seat(registry, f"b{i % SWARM}", f"bench-mux-{i}", request) for i in range(MUX_SEATS)]
    times: list[list[float]] = [[] for _ in seats]
    start = threading.Barrier(len(seats) + 1)

    def one(i: int) -> None:
        start.wait()
        times[i] = _relay_rounds(*seats[i], MUX_DECISIONS)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(seats))]
    for t in threads:
        t.start()
    meter = CpuMeter({"gateway": pids["gateway"], "bot": pids["swarm"]})

    def run() -> float:
        start.wait()
        started = time.perf_counter()
        for t in threads:
            t.join()
        return time.perf_counter() - started

    wall = meter.run(run)
    flat = [x for t in times for x in t]
    return {
        "seats": len(seats),
        "decisions": len(flat),
        "seconds": wall,
        "decisions_per_second": len(flat) / wall,
        **_summary(flat),
        "cpu_us": meter.per_decision_us(len(flat)),
    }


def _matches(registry: Any) -> dict[str, Any]:
    """25 matches at once between the 50 swarm bots, played by referee threads."""
    from engine_service.gateway.remote_seat import RemoteSeat
    from engine_service.referee import TimeControl, run_match

    records: list[Any] = []
    lock = threading.Lock()

    def play(i: int) -> None:
        seats = [RemoteSeat(f"b{2 * i + k}", f"b{2 * i + k}", registry) for k in (0, 1)]
        record = run_match(GAME, 2, 100 + i, seats, time_control=TimeControl(10.0, 30.0, 3))
        with lock:
            records.append(record)

    started = time.perf_counter()
    threads = [threading.Thread(target=play, args=(i,)) for i in range(SWARM // 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    decisions = sum(r.steps for r in records)
    return {
        "bots": SWARM,
        "matches": len(records),
        "decisions": decisions,
        "seconds": wall,
        "decisions_per_second": decisions / wall,
        "faults": sum(len(r.faults) for r in records),
    }


def _row(name: str, s: dict[str, Any], raw: dict[str, Any] | None) -> list[Any]:
    """A table row; `raw` None for a load whose latencies are not round trips of one seat (multiplexed)."""
    cpu = s["cpu_us"]
    middle = cpu.get("gateway", cpu.get("echo", 0.0))
    return [
        name,
        s["n"],
        f"{s['p50_ms']:.3f}",
        f"{s['p99_ms']:.3f}",
        f"{s['p50_ms'] / raw['p50_ms']:.2f}x" if raw else "-",
        f"{s['p99_ms'] / raw['p99_ms']:.2f}x" if raw else "-",
        f"{cpu['worker']:.0f}",
        f"{middle:.0f}",
        f"{cpu.get('bot', 0.0):.0f}",
    ]


def _report(
    request: Any, payload_bytes: int, trips: dict[str, Any], mux: dict[str, Any], matches: dict[str, Any]
) -> None:
    from bench.common import print_table

    raw = trips["raw"]
    print(
        f"payload: {payload_bytes} bytes (an Expedition decision at step {request.step}, "
        f"{len(request.legal_actions)} legal); CPU in µs per decision: this (worker) process, the gateway "
        "(the echo server for raw, the proxy for the bare proxy), the bot (the echo server behind the proxy)"
    )
    print_table(
        ["path", "n", "p50 ms", "p99 ms", "p50 vs raw", "p99 vs raw", "cpu worker", "cpu gateway", "cpu bot"],
        [
            _row("raw grpc.aio bidi ping-pong", raw, raw),
            _row("bare proxy (bytes only)", trips["bare_proxy"], raw),
            _row("relay (protocol-level bot)", trips["relay"], raw),
            _row("relay, gateway on asyncio loop", trips["relay_asyncio"], raw),
            _row("relay (Python SDK bot)", trips["relay_sdk"], raw),
            _row(f"relay, {mux['seats']} seats multiplexed", mux, None),
        ],
    )
    print(
        f"\nmultiplexed: {mux['seats']} threads on one decision connection: {mux['decisions']} decisions in "
        f"{mux['seconds']:.2f}s = {mux['decisions_per_second']:.0f} decisions/s"
    )
    print(
        f"{matches['bots']} bots connected, {matches['matches']} matches at once: {matches['decisions']} "
        f"decisions in {matches['seconds']:.2f}s = {matches['decisions_per_second']:.0f} decisions/s through "
        f"the relay ({matches['faults']} faults)"
    )


def main() -> int:
    from bench.common import write_results
    from engine_service.gateway.registry import SqliteRegistry

    request = _sample_request()
    work = Path(tempfile.mkdtemp(prefix="bench-relay-"))
    processes: list[subprocess.Popen[str]] = []
    try:
        pids = _start_helpers(work, processes)
        registry = SqliteRegistry(work / "registry.sqlite3")
        trips = _round_trips(
            registry,
            request,
            pids,
            int((work / "raw.port").read_text()),
            int((work / "proxy.port").read_text()),
        )
        mux = _multiplexed(registry, request, pids)
        matches = _matches(registry)
    finally:
        for proc in reversed(processes):
            _stop(proc)
    payload_bytes = len(_payload(request))
    _report(request, payload_bytes, trips, mux, matches)
    raw, relay = trips["raw"], trips["relay"]
    write_results(
        "bench_relay",
        {
            "payload_bytes": payload_bytes,
            **trips,
            "ratio_p50": relay["p50_ms"] / raw["p50_ms"],
            "ratio_p99": relay["p99_ms"] / raw["p99_ms"],
            "ratio_p50_bare_proxy": trips["bare_proxy"]["p50_ms"] / raw["p50_ms"],
            "ratio_p50_asyncio_loop": trips["relay_asyncio"]["p50_ms"] / raw["p50_ms"],
            "multiplexed": mux,
            "throughput": matches,
        },
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--serve-raw":
        asyncio.run(_serve_raw(sys.argv[2]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "--serve-proxy":
        asyncio.run(_serve_proxy(sys.argv[2], sys.argv[3]))
    elif len(sys.argv) >= 5 and sys.argv[1] == "--swarm":
        asyncio.run(_swarm(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
    else:
        raise SystemExit(main())
