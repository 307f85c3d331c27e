"""Gateway restart under load: SIGKILL the gateway with many matches in flight, start it again at once, and
measure what the bots and their matches see.

One gateway process (`python -m engine_service.gateway.server`, the SQLite registry, or Redis when REDIS_URL
is set, under a key prefix of its own), RESTART_BOTS Python SDK bots in one fleet
process (`Client`s on one event loop, each answering a random legal action after RESTART_THINK seconds),
and RESTART_MATCHES two-player Expedition matches played by `RemoteSeat`s in threads of this process, as a
match worker does. Once every match has played a few decisions, the gateway is killed (SIGKILL) and started
again on the same ports. Reported, per round: seconds from the new process's start to accepting TCP
connections and to its READY line, seconds from its start until every bot holds a session on it again
(full readmission) and from its first accepted connection to that (the SDK's reconnect backoff, 0.25 s
doubling to 4 s with jitter, is in it), and the seats forfeited or faulted for `disconnect` (goal 0). Before the
rounds, every bot opens its stream at once against the gateway that is up, three times (`burst`): seconds
from the first Hello to the last Welcome, the admission path alone (token check, registry, Welcome).
The bots' tokens are the ladder's (Django auth, as deployed): a fresh database next to DATABASE_URL's
(PostgreSQL) or a SQLite one, made by tests/workers/stack.py.
Results: bench/results/restart.json. Environment: RESTART_BOTS (100), RESTART_MATCHES (80), RESTART_THINK
(0.1), RESTART_ROUNDS (3).

`python -m bench.bench_restart fleet TARGET TOKENS_FILE THINK` is the fleet process (the bench starts it).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import load_average, percentile, write_results

ROOT = Path(__file__).resolve().parents[1]
GAME = "expedition-v1"
CAPACITY = 4


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- the fleet process ---------------------------------------------------------------------------------
def fleet(target: str, tokens_file: str, think: float) -> None:
    """One SDK bot per token in TOKENS_FILE (a JSON list), on one event loop, until stdin closes."""
    sys.path.insert(0, str(ROOT / "clients" / "python"))
    import logging

    from caravanserai_bot import Bot, Client

    logging.basicConfig(level=logging.INFO, format="%(created).3f %(name)s %(message)s")

    class Thinker(Bot):
        name = "restart-bench"
        version = "1"
        games = (GAME,)
        max_concurrent_matches = CAPACITY

        def __init__(self, seed: int) -> None:
            self.rng = random.Random(seed)

        def decide(self, observation: Any, legal_actions: Sequence[Any]) -> str:
            time.sleep(think)
            return str(self.rng.choice(legal_actions).id)

    async def main() -> None:
        tokens = json.loads(Path(tokens_file).read_text())
        clients = [Client(Thinker(i), target, token) for i, token in enumerate(tokens)]
        plays = [asyncio.ensure_future(c.play()) for c in clients]
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        for c in clients:
            c.stop()
        await asyncio.wait(plays, timeout=10)

    asyncio.run(main())


# --- the gateway process -------------------------------------------------------------------------------
@dataclass
class GatewayRun:
    """One gateway process and what it took to come up."""

    proc: subprocess.Popen[str]
    started: float
    accept_s: float = -1.0
    ready_s: float = -1.0
    gateway_id: str = ""
    log_lines: list[str] = field(default_factory=list)


class GatewayUnderTest:
    """The gateway process of the bench, started again on the same ports after each kill."""

    def __init__(self, env: dict[str, str]) -> None:
        self.bot_port, self.relay_port, self.decisions_port = free_port(), free_port(), free_port()
        self.env = {
            **env,
            "CARAVANSERAI_GATEWAY_ADDR": f"127.0.0.1:{self.bot_port}",
            "CARAVANSERAI_RELAY_ADDR": f"127.0.0.1:{self.relay_port}",
            "CARAVANSERAI_RELAY_DECISIONS_ADDR": f"127.0.0.1:{self.decisions_port}",
            "CARAVANSERAI_GATEWAY_AUTH": "django",
            "PYTHONUNBUFFERED": "1",
        }
        self.run: GatewayRun | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.bot_port}"

    def start(self) -> GatewayRun:
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "engine_service.gateway.server"],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        run = self.run = GatewayRun(proc, started)
        threading.Thread(target=self._read, args=(run,), daemon=True).start()
        while run.accept_s < 0:
            if proc.poll() is not None:
                raise RuntimeError("gateway exited: " + "".join(run.log_lines[-20:]))
            try:
                socket.create_connection(("127.0.0.1", self.bot_port), timeout=0.5).close()
                run.accept_s = time.monotonic() - started
            except OSError:
                time.sleep(0.005)
        until = time.monotonic() + 120
        while run.ready_s < 0 and time.monotonic() < until:
            time.sleep(0.005)
        return run

    def _read(self, run: GatewayRun) -> None:
        assert run.proc.stdout is not None
        for line in run.proc.stdout:
            if line.startswith("READY ") and run.ready_s < 0:
                run.gateway_id = json.loads(line[6:])["gateway_id"]
                run.ready_s = time.monotonic() - run.started
            run.log_lines.append(line)

    def kill(self) -> None:
        if self.run is not None and self.run.proc.poll() is None:
            self.run.proc.send_signal(signal.SIGKILL)
            self.run.proc.wait(30)

    def stop(self) -> None:
        if self.run is not None and self.run.proc.poll() is None:
            self.run.proc.terminate()
            try:
                self.run.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.run.proc.kill()
                self.run.proc.wait()


# --- a burst of bots connecting at once -------------------------------------------------------------------
def burst(target: str, tokens: list[str]) -> dict[str, float]:
    """Every token's bot opens its stream at once (one process, one event loop, a channel each) against a
    gateway that is up: seconds from the first Hello sent to the last Welcome read, and each Hello-to-Welcome."""
    import grpc

    from engine_service.gateway.protocol import bot_pb2, bot_pb2_grpc

    async def one(token: str, gate: asyncio.Event) -> tuple[float, float, Any, Any]:
        channel = grpc.aio.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        await channel.channel_ready()
        call = bot_pb2_grpc.BotServiceStub(channel).Connect(metadata=(("authorization", f"Bearer {token}"),))
        await gate.wait()
        sent = time.monotonic()
        hello = bot_pb2.Hello(bot_name="burst", sdk="bench/1", games=[GAME], max_concurrent_matches=1)
        await call.write(bot_pb2.BotMessage(hello=hello))
        message = await call.read()
        assert message.WhichOneof("message") == "welcome", message
        return sent, time.monotonic(), call, channel

    async def run() -> dict[str, float]:
        gate = asyncio.Event()
        tasks = [asyncio.ensure_future(one(token, gate)) for token in tokens]
        await asyncio.sleep(0.5)  # every channel connected
        gate.set()
        done = await asyncio.gather(*tasks)
        first, last = min(d[0] for d in done), max(d[1] for d in done)
        latencies = [d[1] - d[0] for d in done]
        for _, _, call, channel in done:
            call.cancel()
            await channel.close()
        return {
            "all_welcomed_s": round(last - first, 4),
            "hello_to_welcome_p50_s": round(percentile(latencies, 50), 4),
            "hello_to_welcome_max_s": round(max(latencies), 4),
        }

    return asyncio.run(run())


# --- matches in flight ---------------------------------------------------------------------------------
@dataclass
class Outcome:
    forfeits: int = 0
    disconnects: int = 0
    other_faults: int = 0
    aborted: int = 0
    finished: int = 0
    errors: list[str] = field(default_factory=list)


def play_matches(
    registry: Any, pairs: list[tuple[str, str]], outcome: Outcome, started: threading.Event
) -> list[threading.Thread]:
    from engine_service.gateway.remote_seat import RemoteSeat
    from engine_service.referee import TimeControl, run_match
    from engine_service.referee.seats import MatchAborted, SeatUnavailable

    lock = threading.Lock()

    def one(index: int, a: str, b: str) -> None:
        seats = [RemoteSeat(bot_id, f"bot {bot_id}", registry) for bot_id in (a, b)]

        def on_step(state: Any, record: Any) -> None:
            if record.steps >= 4:
                started.set()

        try:
            record = run_match(
                GAME, 2, 1000 + index, seats, time_control=TimeControl(3.0, 20.0), on_step=on_step
            )
        except (MatchAborted, SeatUnavailable) as exc:
            with lock:
                outcome.aborted += 1
                outcome.errors.append(f"match {index}: {exc}")
            return
        with lock:
            outcome.finished += 1
            outcome.forfeits += len(record.forfeits)
            outcome.disconnects += sum(1 for f in record.faults if f.kind == "disconnect")
            outcome.other_faults += sum(1 for f in record.faults if f.kind != "disconnect")
            for f in record.faults:
                outcome.errors.append(f"match {index}: {f.kind} {f.reason}")

    threads = [threading.Thread(target=one, args=(i, a, b), daemon=True) for i, (a, b) in enumerate(pairs)]
    for t in threads:
        t.start()
    return threads


def bots_on(registry: Any, gateway_id: str) -> int:
    return len({s.bot_id for s in registry.sessions() if s.gateway_id == gateway_id})


def wait_until(predicate: Callable[[], bool], timeout: float, step: float = 0.01) -> float | None:
    """Seconds until `predicate()` held (polled every `step`), None if it did not within `timeout`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(step)
    return None


def one_round(gateway: GatewayUnderTest, registry: Any, bot_ids: list[str], matches: int) -> dict[str, Any]:
    count = len(bot_ids)
    pairs = [(bot_ids[(2 * i) % count], bot_ids[(2 * i + 1) % count]) for i in range(matches)]
    outcome, started = Outcome(), threading.Event()
    threads = play_matches(registry, pairs, outcome, started)  # type: ignore[arg-type]
    started.wait(120)
    time.sleep(2.0)  # every match under way
    in_flight = sum(t.is_alive() for t in threads)
    load_before = load_average()
    say(f"SIGKILL the gateway with {in_flight} matches in flight (load {load_before})")
    gateway.kill()
    run = gateway.start()
    readmitted = wait_until(lambda: bots_on(registry, run.gateway_id) >= count, 120, 0.02)
    full = -1.0 if readmitted is None else time.monotonic() - run.started
    say(
        f"restarted: accepting after {run.accept_s:.2f}s, READY after {run.ready_s:.2f}s, "
        f"all {count} bots back after {full:.2f}s"
    )
    for t in threads:
        t.join(600)
    return {
        "matches_in_flight": in_flight,
        "load_average_at_kill": load_before,
        "accept_s": round(run.accept_s, 3),
        "ready_s": round(run.ready_s, 3),
        "full_readmission_s": round(full, 3),
        "readmission_after_accept_s": round(full - run.accept_s, 3),
        "finished": outcome.finished,
        "aborted_unrated": outcome.aborted,
        "seats_forfeited": outcome.forfeits,
        "disconnect_faults": outcome.disconnects,
        "other_faults": outcome.other_faults,
        "notes": outcome.errors[:10],
    }


def main() -> int:
    from engine_service.gateway.registry import open_registry
    from tests.workers.stack import Stack

    count = int(os.environ.get("RESTART_BOTS", "100"))
    matches = int(os.environ.get("RESTART_MATCHES", "80"))
    think = float(os.environ.get("RESTART_THINK", "0.1"))
    rounds = int(os.environ.get("RESTART_ROUNDS", "3"))
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        stack = Stack(Path(tmp), bots=count)
        stack.prepare_database()  # the ladder's bots: the gateway checks their tokens there (Django)
        try:
            data = run_bench(
                stack,
                open_registry(
                    redis_url=stack.redis_url or None,
                    path=stack.env["CARAVANSERAI_REGISTRY_PATH"],
                    prefix=stack.env["CARAVANSERAI_REGISTRY_PREFIX"],
                ),
                matches,
                think,
                rounds,
            )
        finally:
            if os.environ.get("RESTART_KEEP_LOG"):  # the fleet's log, for a look at the bots' reconnections
                (Path(os.environ["RESTART_KEEP_LOG"])).write_text((stack.tmp / "fleet.log").read_text())
            stack.stop()
    write_results("restart", data)
    results = data["rounds"]
    return 0 if all(r["seats_forfeited"] == 0 and r["disconnect_faults"] == 0 for r in results) else 1


def run_bench(stack: Any, registry: Any, matches: int, think: float, rounds: int) -> dict[str, Any]:
    tokens_by_bot = {str(bot_id): str(token) for bot_id, token in stack.info["tokens"].items()}
    bot_ids, tokens = list(tokens_by_bot), list(tokens_by_bot.values())
    tokens_file = stack.tmp / "tokens.json"
    tokens_file.write_text(json.dumps(tokens))
    gateway = GatewayUnderTest(stack.env)
    first = gateway.start()
    say(f"gateway up: accepting after {first.accept_s:.2f}s, READY after {first.ready_s:.2f}s")
    bursts = [burst(gateway.target, tokens) for _ in range(3)]
    say(f"{len(tokens)} bots connecting at once: {bursts}")
    wait_until(lambda: bots_on(registry, first.gateway_id) == 0, 30, 0.05)
    bots = subprocess.Popen(
        [sys.executable, "-m", "bench.bench_restart", "fleet", gateway.target, str(tokens_file), str(think)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stderr=(stack.tmp / "fleet.log").open("w"),
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'clients' / 'python'}{os.pathsep}{ROOT}"},
    )
    results = []
    try:
        joined = wait_until(lambda: bots_on(registry, first.gateway_id) >= len(tokens), 120, 0.02)
        say(f"{len(tokens)} SDK bots connected after {joined}s")
        for index in range(rounds):
            say(f"round {index + 1}: {matches} matches")
            results.append(one_round(gateway, registry, bot_ids, matches))
            say(json.dumps(results[-1]))
    finally:
        assert bots.stdin is not None
        bots.stdin.close()
        bots.wait(30)
        gateway.stop()
        registry.close()
    return {
        "bots": len(tokens),
        "matches": matches,
        "think_s": think,
        "registry": "redis" if stack.redis_url else "sqlite",
        "load_average_at_start": load_average(),
        "database": "postgresql" if stack.server_url else "sqlite",
        "start": {"accept_s": round(first.accept_s, 3), "ready_s": round(first.ready_s, 3)},
        "burst_admission": bursts,
        "rounds": results,
    }


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "fleet":
        fleet(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        raise SystemExit(main())
