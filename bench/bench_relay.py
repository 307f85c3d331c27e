"""Relay benchmark: a decision round trip through the gateway relay vs a raw grpc.aio bidi ping-pong.

Measured side by side in one run, on this machine, with real processes on loopback:
- raw: a grpc.aio bidirectional stream (bench process -> echo server process), one message each way, the
  request carrying the serialized `DecisionRequest` of a real Expedition decision, the reply a `Decision`;
- relay: `RemoteSeat.decide` (the worker side, synchronous gRPC) -> gateway process (relay, then the bot's
  stream) -> a bot process answering at once -> back: two hops each way;
- relay + SDK: the same with the Python SDK's random example bot (JSON decoding, a worker thread per call);
- throughput: 50 bots connected at once (one swarm process holding 50 streams), 25 matches between them
  played concurrently by 25 referee threads; decisions per second over the run.
Blocks of raw and relay round trips alternate so machine noise hits both alike. Prints a table and writes
bench/results/bench_relay.json. Run: `python -m bench relay` (or `make bench`).
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GAME = "expedition-v1"
BLOCKS = 10
PER_BLOCK = 200
SWARM = 50
ECHO_METHOD = "/bench.Echo/PingPong"


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


def main() -> int:
    from bench.common import print_table, write_results
    from engine_service.gateway.protocol import bot_pb2, dumps, legal_actions_to_proto
    from engine_service.gateway.registry import SqliteRegistry, sessions_for_bot
    from engine_service.gateway.remote_seat import RemoteSeat
    from engine_service.referee import HouseSeat, TimeControl, run_match  # noqa: F401

    request = _sample_request()
    payload = bot_pb2.ServerMessage(
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

    work = Path(tempfile.mkdtemp(prefix="bench-relay-"))
    tokens = [{"token": "bench-sdk", "bot_id": "sdk", "name": "sdk", "games": [GAME], "max_concurrent": 4}]
    tokens += [
        {"token": f"bench-{i}", "bot_id": f"b{i}", "name": f"b{i}", "games": [GAME], "max_concurrent": 4}
        for i in range(SWARM)
    ]
    (work / "tokens.json").write_text(json.dumps(tokens))
    registry_path = work / "registry.sqlite3"
    env = {
        "CARAVANSERAI_GATEWAY_ADDR": "127.0.0.1:0",
        "CARAVANSERAI_RELAY_ADDR": "127.0.0.1:0",
        "CARAVANSERAI_GATEWAY_AUTH": f"file:{work / 'tokens.json'}",
        "CARAVANSERAI_REGISTRY_PATH": str(registry_path),
        "CARAVANSERAI_GATEWAY_MAX_SESSIONS_PER_BOT": "4",
    }
    env.pop("REDIS_URL", None)
    os.environ.pop("REDIS_URL", None)
    processes: list[subprocess.Popen[str]] = []
    try:
        gateway = _spawn(["-m", "engine_service.gateway.server"], env)
        processes.append(gateway)
        ready = _wait_ready(gateway)
        target = f"127.0.0.1:{ready['bot_port']}"
        port_file = work / "raw.port"
        processes.append(_spawn(["-m", "bench.bench_relay", "--serve-raw", str(port_file)]))
        swarm = _spawn(["-m", "bench.bench_relay", "--swarm", target, str(SWARM), "bench-"])
        processes.append(swarm)
        sdk_bot = _spawn(
            [str(ROOT / "clients/python/examples/random_bot.py"), "--target", target, "--token", "bench-sdk"],
            {"PYTHONPATH": f"{ROOT / 'clients/python'}{os.pathsep}{ROOT}"},
        )
        processes.append(sdk_bot)
        registry = SqliteRegistry(registry_path)
        deadline = time.monotonic() + 60
        while not port_file.exists() or len({s.bot_id for s in registry.sessions()}) < SWARM + 1:
            if time.monotonic() > deadline:
                raise RuntimeError("helpers did not come up")
            time.sleep(0.1)
        assert sessions_for_bot(registry, "b0")

        raw = RawPingPong(int(port_file.read_text()), payload)
        proto_seat = RemoteSeat("b0", "b0", registry)
        _bind(proto_seat, "bench-proto")
        sdk_seat = RemoteSeat("sdk", "sdk", registry)
        _bind(sdk_seat, "bench-sdk")
        proto_request = dataclasses.replace(request, match_id="bench-proto", request_id="bench-proto:40")
        sdk_request = dataclasses.replace(request, match_id="bench-sdk", request_id="bench-sdk:40")
        raw.rounds(100)
        _relay_rounds(proto_seat, proto_request, 100)
        _relay_rounds(sdk_seat, sdk_request, 100)
        raw_times: list[float] = []
        relay_times: list[float] = []
        sdk_times: list[float] = []
        for _ in range(BLOCKS):
            raw_times += raw.rounds(PER_BLOCK)
            relay_times += _relay_rounds(proto_seat, proto_request, PER_BLOCK)
            sdk_times += _relay_rounds(sdk_seat, sdk_request, PER_BLOCK // 2)
        raw.close()

        # throughput: 25 matches at once between the 50 swarm bots
        records: list[Any] = []
        lock = threading.Lock()

        def play(i: int) -> None:
            seats = [
                RemoteSeat(f"b{2 * i}", f"b{2 * i}", registry),
                RemoteSeat(f"b{2 * i + 1}", f"b{2 * i + 1}", registry),
            ]
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
        faults = sum(len(r.faults) for r in records)
    finally:
        for proc in reversed(processes):
            _stop(proc)

    raw_s, relay_s, sdk_s = _summary(raw_times), _summary(relay_times), _summary(sdk_times)
    ratio_p50 = relay_s["p50_ms"] / raw_s["p50_ms"]
    ratio_p99 = relay_s["p99_ms"] / raw_s["p99_ms"]
    print(
        f"payload: {len(payload)} bytes (an Expedition decision at step {request.step}, {len(request.legal_actions)} legal)"
    )
    print_table(
        ["path", "n", "p50 ms", "p99 ms", "mean ms", "p50 vs raw", "p99 vs raw"],
        [
            [
                "raw grpc.aio bidi ping-pong",
                raw_s["n"],
                f"{raw_s['p50_ms']:.3f}",
                f"{raw_s['p99_ms']:.3f}",
                f"{raw_s['mean_ms']:.3f}",
                "1.00x",
                "1.00x",
            ],
            [
                "relay (protocol-level bot)",
                relay_s["n"],
                f"{relay_s['p50_ms']:.3f}",
                f"{relay_s['p99_ms']:.3f}",
                f"{relay_s['mean_ms']:.3f}",
                f"{ratio_p50:.2f}x",
                f"{ratio_p99:.2f}x",
            ],
            [
                "relay (Python SDK bot)",
                sdk_s["n"],
                f"{sdk_s['p50_ms']:.3f}",
                f"{sdk_s['p99_ms']:.3f}",
                f"{sdk_s['mean_ms']:.3f}",
                f"{sdk_s['p50_ms'] / raw_s['p50_ms']:.2f}x",
                f"{sdk_s['p99_ms'] / raw_s['p99_ms']:.2f}x",
            ],
        ],
    )
    print(
        f"\n{SWARM} bots connected, {len(records)} matches at once: {decisions} decisions in {wall:.2f}s = "
        f"{decisions / wall:.0f} decisions/s through the relay ({faults} faults)"
    )
    write_results(
        "bench_relay",
        {
            "payload_bytes": len(payload),
            "raw": raw_s,
            "relay": relay_s,
            "relay_sdk": sdk_s,
            "ratio_p50": ratio_p50,
            "ratio_p99": ratio_p99,
            "throughput": {
                "bots": SWARM,
                "matches": len(records),
                "decisions": decisions,
                "seconds": wall,
                "decisions_per_second": decisions / wall,
                "faults": faults,
            },
        },
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--serve-raw":
        asyncio.run(_serve_raw(sys.argv[2]))
    elif len(sys.argv) >= 5 and sys.argv[1] == "--swarm":
        asyncio.run(_swarm(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
    else:
        raise SystemExit(main())
