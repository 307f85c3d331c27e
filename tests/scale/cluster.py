"""Several nodes on one machine, as real processes: HAProxy (infra/haproxy.cfg, as deployed) in front of two
or more gateways, two or more workers, beat, the web server, PostgreSQL and Redis (the machine's, with this
cluster's own database and key prefixes, as `Stack` does), and Python SDK and Node bots that connect through
the load balancer only. Each gateway's relay (its gRPC control port and its decision port) is reached
through TCP proxies of the test (`cut_relay` cuts both): the network between the workers and that gateway
can be lost while its bots stay connected.

It also reads the figures the rehearsal reports: which gateway held each bot in each match (the gateways'
and bots' logs), which worker recorded each match, the streams HAProxy sent to each gateway, and the
matches lost, rated twice or rated against a bot (the database)."""

from __future__ import annotations

import contextlib
import csv
import json
import re
import shutil
import socket
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.ports import free_port
from tests.workers.db_proxy import TcpProxy
from tests.workers.stack import PYTHON, ROOT, Proc, Stack, wait_for

HAPROXY_CFG = ROOT / "infra" / "haproxy.cfg"
NODE_BOT = ROOT / "clients" / "node" / "bot.js"
PY_BOT = ROOT / "tests" / "workers" / "slow_bot.py"  # with --log: the SDK says which session it holds

_SESSION_OPENED = re.compile(r"session ([0-9a-f]{32}) opened: bot (\d+)")
_CONNECTED = re.compile(r"connected as .*?\(session ([0-9a-f]{32})")
_MATCH = re.compile(r"match (\d+) (started|resumed)")
_RECORDED = re.compile(r"match (\d+): recorded in")


def haproxy() -> str | None:
    return shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)


class RelayProxies:
    """The proxies in front of one gateway's two relay ports (control calls, decisions): cut and restored
    together, as a network between the workers and that gateway would be."""

    def __init__(self, relay_port: int, decisions_port: int) -> None:
        self.control = TcpProxy(("127.0.0.1", relay_port))
        self.decisions = TcpProxy(("127.0.0.1", decisions_port))

    def cut(self) -> None:
        self.control.cut()
        self.decisions.cut()

    def restore(self) -> None:
        self.control.restore()
        self.decisions.restore()


@dataclass
class Node:
    """One gateway's ports: bots (behind HAProxy), its relay and decision ports, the proxies workers reach
    them through, metrics."""

    name: str
    bot_port: int
    relay_port: int
    decisions_port: int
    metrics_port: int
    relay: RelayProxies


class Cluster(Stack):
    def __init__(
        self,
        tmp: Path,
        *,
        gateways: int = 2,
        workers: int = 2,
        python_bots: int = 4,
        node_bots: int = 2,
        bot_delay: float = 0.01,
        bot_concurrency: int = 2,
        drain_seconds: float = 30.0,
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            tmp,
            workers=workers,
            bots=python_bots + node_bots,
            bot_delay=bot_delay,
            bot_concurrency=bot_concurrency,
            env=env,
        )
        self.n_python, self.n_node = python_bots, node_bots
        self.drain_seconds = drain_seconds
        self.lb_port = free_port()
        self.lb_stats = str(self.var / "haproxy.sock")
        self.nodes: dict[str, Node] = {}
        for i in range(1, gateways + 1):
            relay_port, decisions_port = free_port(), free_port()
            self.nodes[f"gateway{i}"] = Node(
                f"gateway{i}",
                free_port(),
                relay_port,
                decisions_port,
                free_port(),
                RelayProxies(relay_port, decisions_port),
            )
        self.gateway_names: dict[str, str] = {}  # gateway id -> node name, every process that ran
        self.registry_prefix = self.env["CARAVANSERAI_REGISTRY_PREFIX"]

    @property
    def bot_target(self) -> str:
        return f"127.0.0.1:{self.lb_port}"

    # --- processes -----------------------------------------------------------------------------------------
    def start(self) -> Cluster:
        assert self.server_url and self.redis_url, "the cluster runs on PostgreSQL and Redis"
        self.prepare_database()
        for node in self.nodes.values():
            node.relay.restore()
            self.start_gateway(node.name)
        self.start_balancer()
        self.wait_balanced(set(self.nodes))
        self.start_workers()
        self.start_web()
        tokens = sorted(self.info["tokens"].items(), key=lambda kv: int(kv[0]))
        for i, (bot_id, token) in enumerate(tokens):
            if i < self.n_python:
                self.start_python_bot(bot_id, token, seed=i)
            else:
                self.start_node_bot(bot_id, token, seed=i)
        wait_for(self._web_up, 30, "the web server")
        wait_for(lambda: len(self.sessions()) >= self.n_bots, 60, "every bot to connect")
        return self

    def gateway_env(self, name: str) -> dict[str, str]:
        node = self.nodes[name]
        return {
            "CARAVANSERAI_GATEWAY_ADDR": f"127.0.0.1:{node.bot_port}",
            "CARAVANSERAI_RELAY_ADDR": f"127.0.0.1:{node.relay_port}",
            "CARAVANSERAI_RELAY_ADVERTISE": f"127.0.0.1:{node.relay.control.port}",
            "CARAVANSERAI_RELAY_DECISIONS_ADDR": f"127.0.0.1:{node.decisions_port}",
            "CARAVANSERAI_RELAY_DECISIONS_ADVERTISE": f"127.0.0.1:{node.relay.decisions.port}",
            "CARAVANSERAI_GATEWAY_METRICS_PORT": str(node.metrics_port),
            "CARAVANSERAI_GATEWAY_DRAIN_SECONDS": str(self.drain_seconds),
        }

    def start_gateway(self, name: str = "gateway1", env: dict[str, str] | None = None) -> Proc:
        proc = super().start_gateway(name, {**self.gateway_env(name), **(env or {})})
        ready = [line for line in proc.output().splitlines() if line.startswith("READY ")][-1]
        self.gateway_names[json.loads(ready[6:])["gateway_id"]] = name
        return proc

    def start_balancer(self) -> Proc:
        binary = haproxy()
        assert binary, "HAProxy is not installed (make install puts Debian's package in)"
        env = {"CARAVANSERAI_LB_BIND": self.bot_target, "CARAVANSERAI_LB_STATS": self.lb_stats}
        for i, node in enumerate(self.nodes.values(), start=1):
            env[f"CARAVANSERAI_GATEWAY_{i}"] = f"127.0.0.1:{node.bot_port}"
        return self.spawn("haproxy", [binary, "-db", "-f", str(HAPROXY_CFG)], env)

    def start_python_bot(self, bot_id: Any, token: str, seed: int) -> Proc:
        return self.spawn(
            f"bot{bot_id}",
            [PYTHON, str(PY_BOT), "--target", self.bot_target, "--token", token, "--seed", str(seed),
             "--delay", str(self.bot_delay), "--concurrent", str(self.bot_concurrency), "--log"],
        )  # fmt: skip

    def start_node_bot(self, bot_id: Any, token: str, seed: int) -> Proc:
        return self.spawn(
            f"bot{bot_id}",
            ["node", str(NODE_BOT), "--target", self.bot_target, "--token", token, "--seed", str(seed),
             "--concurrent", str(self.bot_concurrency)],
        )  # fmt: skip

    def stop(self) -> None:
        for node in self.nodes.values():
            node.relay.cut()
        super().stop()

    # --- the load balancer ---------------------------------------------------------------------------------
    def lb_stat(self) -> dict[str, dict[str, str]]:
        """HAProxy's `show stat` for the gateways backend, by server name."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(self.lb_stats)
            sock.sendall(b"show stat\n")
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        rows = csv.DictReader(data.decode().lstrip("# ").splitlines())
        return {r["svname"]: r for r in rows if r["pxname"] == "gateways" and r["svname"] != "BACKEND"}

    def lb_up(self) -> set[str]:
        try:
            return {name for name, row in self.lb_stat().items() if row["status"] == "UP"}
        except OSError:
            return set()

    def wait_balanced(self, up: set[str], timeout: float = 30) -> None:
        wait_for(lambda: self.lb_up() == up, timeout, f"HAProxy to see {sorted(up)} up")

    # --- the registry --------------------------------------------------------------------------------------
    def sessions(self) -> list[Any]:
        from engine_service.gateway.registry import RedisRegistry

        registry = RedisRegistry(self.redis_url, prefix=self.registry_prefix)
        try:
            return registry.sessions()
        finally:
            registry.close()

    def bots_by_gateway(self) -> dict[str, set[str]]:
        """The bots each gateway holds now (registry), by node name."""
        held: dict[str, set[str]] = defaultdict(set)
        for s in self.sessions():
            held[self.gateway_names.get(s.gateway_id, s.gateway_id)].add(s.bot_id)
        return dict(held)

    # --- figures from the logs -----------------------------------------------------------------------------
    def _logs(self, prefix: str) -> dict[str, str]:
        return {p.stem: p.read_text(errors="replace") for p in sorted(self.logs.glob(f"{prefix}*.log"))}

    def placements(self) -> dict[int, dict[str, list[str]]]:
        """For each match, the gateways that held each registered bot in it (first start, then resumes)."""
        session_gateway: dict[str, str] = {}
        for name, text in self._logs("gateway").items():
            for session_id, _bot in _SESSION_OPENED.findall(text):
                session_gateway[session_id] = name
        placed: dict[int, dict[str, list[str]]] = defaultdict(dict)
        for name, text in self._logs("bot").items():
            session = ""
            for line in text.splitlines():
                if m := _CONNECTED.search(line):
                    session = m.group(1)
                elif m := _MATCH.search(line):
                    where = placed[int(m.group(1))].setdefault(name.removeprefix("bot"), [])
                    where.append(session_gateway.get(session, "?"))
        return dict(placed)

    def recorded_by_worker(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for name, text in self._logs("worker").items():
            counts[name] += len(_RECORDED.findall(text))
        return counts

    def spread(self) -> dict[str, Any]:
        """Matches per gateway (a match counts for each gateway that held one of its bots at its start),
        matches whose bots were on different gateways, matches recorded per worker, streams per gateway."""
        placed = self.placements()
        done = {r[0] for r in self.query("SELECT id FROM matches_match WHERE status = 'DONE'")}
        per_gateway: Counter[str] = Counter()
        cross = 0
        for match_id, bots in placed.items():
            if match_id not in done:
                continue
            first = {where[0] for where in bots.values()}
            per_gateway.update(first)
            cross += len(first) > 1
        try:
            streams = {name: int(row["stot"]) for name, row in self.lb_stat().items()}
        except OSError:
            streams = {}
        return {
            "matches_done": len(done),
            "matches_per_gateway": dict(sorted(per_gateway.items())),
            "matches_across_gateways": cross,
            "matches_per_worker": dict(sorted(self.recorded_by_worker().items())),
            "streams_per_gateway_lb": streams,
        }

    # --- figures from the database -------------------------------------------------------------------------
    def outcomes(self, ids: list[int]) -> dict[str, int]:
        """For `ids`: how many ended DONE, CANCELLED (of them, called off before they began: a bot not
        there when they were to start), ERROR, are still unfinished, and how many DONE rated matches hold a
        forfeit or a disconnect fault of a registered bot (rated against it)."""
        if not ids:
            zero = ("done", "cancelled", "called_off", "error", "unfinished", "rated_against_a_bot")
            return dict.fromkeys(zero, 0)
        marks = ",".join(str(int(i)) for i in ids)
        rows = self.query(f"SELECT status, error FROM matches_match WHERE id IN ({marks})")
        status = Counter(r[0] for r in rows)
        called_off = sum(s == "CANCELLED" and "called off before it began" in (e or "") for s, e in rows)
        return {
            "done": status["DONE"],
            "cancelled": status["CANCELLED"],
            "called_off": called_off,
            "error": status["ERROR"],
            "unfinished": sum(status.values()) - status["DONE"] - status["CANCELLED"] - status["ERROR"],
            "rated_against_a_bot": len(self.rated_against(ids)),
        }

    def rated_against(self, ids: list[int] | None = None) -> list[tuple[int, int, str]]:
        """(match, bot, why) for every rated DONE match where a registered bot forfeited or disconnected."""
        where = f" AND m.id IN ({','.join(str(int(i)) for i in ids)})" if ids else ""
        rows = self.query(
            "SELECT m.id, s.bot_id, s.forfeited, s.faults FROM matches_seat s"
            " JOIN matches_match m ON m.id = s.match_id JOIN bots_bot b ON b.id = s.bot_id"
            f" WHERE m.status = 'DONE' AND m.rated AND NOT b.is_house{where}"
        )
        found = []
        for match_id, bot_id, forfeited, raw in rows:
            faults = json.loads(raw) if isinstance(raw, str) else raw or []
            kinds = sorted({f["kind"] for f in faults if f["kind"] in ("disconnect", "timeout")})
            if forfeited or kinds:
                found.append((match_id, bot_id, "forfeit" if forfeited else ",".join(kinds)))
        return found

    def rated_twice(self) -> int:
        rows = self.query(
            "SELECT m.id, (SELECT COUNT(*) FROM matches_seat s WHERE s.match_id = m.id),"
            " (SELECT COUNT(*) FROM ratings_ratingledger l WHERE l.match_id = m.id) FROM matches_match m"
        )
        return sum(1 for _, seats, ledger in rows if ledger > seats)

    def running_on(self, gateway: str) -> list[int]:
        """RUNNING matches with a registered bot held by `gateway` now (registry)."""
        bots = self.bots_by_gateway().get(gateway, set())
        running = self.running()
        if not running or not bots:
            return []
        marks = ",".join(str(i) for i in running)
        rows = self.query(f"SELECT match_id, bot_id FROM matches_seat WHERE match_id IN ({marks})")
        return sorted({m for m, b in rows if str(b) in bots})

    def settle(self, ids: list[int], timeout: float) -> float:
        """Wait until none of `ids` is QUEUED or RUNNING; the seconds it took."""
        started = time.monotonic()
        marks = ",".join(str(int(i)) for i in ids) or "0"
        wait_for(
            lambda: (
                not self.query(
                    f"SELECT id FROM matches_match WHERE id IN ({marks}) AND status IN ('NEW', 'QUEUED', 'RUNNING')"
                )
            ),
            timeout,
            f"matches {ids} to end",
        )
        return round(time.monotonic() - started, 2)

    def metrics(self, name: str) -> dict[str, float]:
        """A gateway's Prometheus figures (decisions relayed, streams), {} if it is not running."""
        import urllib.request

        node = self.nodes[name]
        figures: dict[str, float] = {}
        with contextlib.suppress(OSError):
            url = f"http://127.0.0.1:{node.metrics_port}/metrics"
            with urllib.request.urlopen(url, timeout=5) as response:
                text = response.read().decode()
            for line in text.splitlines():
                if line.startswith("caravanserai_gateway_decisions_total{"):
                    figures["decisions"] = figures.get("decisions", 0.0) + float(line.rsplit(" ", 1)[1])
                elif line.startswith("caravanserai_gateway_sessions "):
                    figures["sessions"] = float(line.rsplit(" ", 1)[1])
        return figures
