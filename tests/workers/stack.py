"""An end-to-end stack of real processes for the worker tests: a fresh database (a new PostgreSQL database
next to DATABASE_URL's, or SQLite under a temporary var/ when it is unset), then the gateway, Celery workers,
beat, the web server (gunicorn) and SDK bots, all with one environment whose Redis keys (broker, leases,
registry, cache) carry a unique prefix so parallel runs never meet. `stop()` kills everything it started."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

from tests.ports import free_port
from tests.workers.template_db import create_postgres_database, create_sqlite_database

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable

SETUP = """
import json, sys, django
django.setup()
from django.contrib.auth import get_user_model
from ladder.bots.services import bot_create, house_bot_ensure
from ladder.ladders.services import ladder_create
ladders = {n: ladder_create(game_id="expedition-v1", num_players=n).pk for n in (2, 3)}
house = [house_bot_ensure(policy=p).pk for p in ("random", "greedy")]
owner = get_user_model().objects.create_user("e2e", password="e2e-password-1")
tokens = {}
count, capacity = json.loads(sys.argv[1])
for i in range(count):
    bot, token = bot_create(owner=owner, name=f"e2e-{i}", games=["expedition-v1"], max_concurrent=capacity)
    tokens[bot.pk] = token
print(json.dumps({"ladders": ladders, "house": house, "tokens": tokens}))
"""

PRACTICE = """
import json, sys, django
django.setup()
from ladder.bots.models import Bot
from ladder.matches.practice import practice_match_request
bot = Bot.objects.get(pk=json.loads(sys.argv[1]))
match = practice_match_request(
    user=bot.owner, bot_id=bot.pk, game_id="expedition-v1", options={"strategic_two_player": True},
    opponents=["greedy"],
)
print(json.dumps(match.pk))
"""

QUEUE = """
import json, sys, django
django.setup()
from ladder.matches.services import match_create
from workers.matches import run_match
ladder, seatings, first_seed = json.loads(sys.argv[1])
ids = [match_create(ladder_id=ladder, bot_ids=bots, seed=first_seed + i).pk for i, bots in enumerate(seatings)]
for match_id in ids:
    run_match.delay(match_id)
print(json.dumps(ids))
"""


def wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


class Proc:
    def __init__(self, name: str, argv: list[str], env: dict[str, str], logs: Path) -> None:
        self.name = name
        self.log_path = logs / f"{name}.log"
        self.log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.popen = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(10)

    def stop(self, timeout: float = 15.0) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout)
        self.kill()
        self.log.close()


class Stack:
    def __init__(
        self,
        tmp: Path,
        *,
        workers: int = 2,
        beat: bool = True,
        bot_delay: float = 0.01,
        bot_concurrency: int = 2,
        bots: int = 3,
        env: dict[str, str] | None = None,
    ) -> None:
        self.tmp = tmp
        self.uid = uuid.uuid4().hex[:10]
        self.var = tmp / "var"
        self.logs = tmp / "logs"
        self.var.mkdir(parents=True)
        self.logs.mkdir()
        self.procs: dict[str, Proc] = {}
        self.redis_url = os.environ.get("REDIS_URL", "").strip()
        self.server_url = os.environ.get("DATABASE_URL", "").strip()
        self.db_name = f"workers_e2e_{self.uid}" if self.server_url else ""
        self.bot_port, self.relay_port, self.web_port = free_port(), free_port(), free_port()
        self.env = {**self._env(), **(env or {})}
        self.n_bots = bots
        self.n_workers = workers
        self.beat = beat
        self.bot_delay = bot_delay
        self.bot_concurrency = bot_concurrency
        self.info: dict[str, Any] = {}

    # --- environment and database --------------------------------------------------------------------------
    def _db_url(self, name: str) -> str:
        return urlunparse(urlparse(self.server_url)._replace(path=f"/{name}"))

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        if self.server_url:
            env["DATABASE_URL"] = self._db_url(self.db_name)
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
        env.update(
            DJANGO_SETTINGS_MODULE="ladder.settings.base",
            DJANGO_SECRET_KEY=f"e2e-stack-{self.uid}-not-a-production-secret-0123456789",
            CARAVANSERAI_VAR_DIR=str(self.var),
            CARAVANSERAI_REGISTRY_PATH=str(self.var / "gateway-registry.sqlite3"),
            CARAVANSERAI_REGISTRY_PREFIX=f"cvs:e2e:{self.uid}",
            CARAVANSERAI_BROKER_PREFIX=f"e2e:{self.uid}:",
            CARAVANSERAI_LEASE_PREFIX=f"cvs:e2e-lease:{self.uid}:",
            LADDER_CACHE_PREFIX=f"e2e-{self.uid}",
            CARAVANSERAI_GATEWAY_ADDR=f"127.0.0.1:{self.bot_port}",
            CARAVANSERAI_RELAY_ADDR=f"127.0.0.1:{self.relay_port}",
            CARAVANSERAI_RELAY_DECISIONS_ADDR=f"127.0.0.1:{free_port()}",
            CARAVANSERAI_GATEWAY_AUTH="django",
            CARAVANSERAI_MATCHMAKING_SECONDS="1",
            CARAVANSERAI_SWEEP_SECONDS="2",
            CARAVANSERAI_LEASE_SECONDS="3",
            CARAVANSERAI_RETRY_BACKOFF="0.5",
            CARAVANSERAI_MAX_QUEUED_PER_LADDER="2",
            CARAVANSERAI_RECONNECT_GRACE="10",
            LADDER_LOG_LEVEL="INFO",
            PYTHONUNBUFFERED="1",
            PYTHONPATH=os.pathsep.join([str(ROOT / "clients" / "python"), str(ROOT)]),
        )
        return env

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self._db_url("postgres"), autocommit=True) as conn:
            conn.execute(sql)

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        if self.server_url:
            import psycopg

            with psycopg.connect(self.env["DATABASE_URL"], autocommit=True) as conn:
                return list(conn.execute(sql.replace("?", "%s"), params).fetchall())
        with contextlib.closing(sqlite3.connect(self.var / "ladder.sqlite3", timeout=30)) as conn:
            return list(conn.execute(sql, params).fetchall())

    def rest(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}{path}", timeout=10) as response:
            return json.loads(response.read())

    # --- processes -----------------------------------------------------------------------------------------
    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Proc:
        """Start a process in this stack's environment (with `env` over it), logging to logs/<name>.log."""
        proc = self.procs[name] = Proc(name, argv, {**self.env, **(env or {})}, self.logs)
        return proc

    @property
    def bot_target(self) -> str:
        """Where the bots connect: the gateway (a subclass may put a load balancer there)."""
        return f"127.0.0.1:{self.bot_port}"

    def start_gateway(self, name: str = "gateway", env: dict[str, str] | None = None) -> Proc:
        log = self.logs / f"{name}.log"
        before = log.read_text(errors="replace").count("READY ") if log.exists() else 0  # a restart appends
        gateway = self.spawn(name, [PYTHON, "-m", "engine_service.gateway.server"], env)
        wait_for(
            lambda: gateway.output().count("READY ") > before or gateway.popen.poll() is not None,
            30,
            f"the {name}",
        )
        assert gateway.popen.poll() is None, gateway.output()
        return gateway

    def start_worker(self, name: str, queues: str = "matches,matchmaking,tournaments") -> Proc:
        """A worker process (Celery's threads pool, CARAVANSERAI_MATCHES_PER_WORKER matches at once)."""
        return self.spawn(
            name,
            [
                PYTHON, "-m", "celery", "-A", "workers.celery_app", "worker", "-Q", queues,
                "-n", f"{name}-{self.uid}@%h", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
            ],
        )  # fmt: skip

    def start(self) -> Stack:
        self.prepare_database()
        self.start_gateway()
        self.start_workers()
        self.start_web()
        for i, (bot_id, token) in enumerate(sorted(self.info["tokens"].items())):
            self.start_python_bot(bot_id, token, seed=i)
        wait_for(self._web_up, 30, "the web server")
        return self

    def prepare_database(self) -> None:
        """A fresh database, migrated (a copy of the run's template), with the ladders, house bots and `bots`
        registered bots."""
        if self.server_url:
            create_postgres_database(self.server_url, self.db_name, self.env)
        else:
            create_sqlite_database(self.var / "ladder.sqlite3", self.env)
        self.info = self.run_script(SETUP, [self.n_bots, 16])  # the ladder's most; the bots say less

    def start_workers(self) -> None:
        """`workers` worker processes (every queue) and beat, if the stack has it."""
        for i in range(self.n_workers):
            self.start_worker(f"worker{i + 1}")
        if self.beat:
            self.spawn(
                "beat",
                [PYTHON, "-m", "celery", "-A", "workers.celery_app", "beat", "-s", str(self.var / "beat")],
            )

    def start_web(self) -> None:
        self.spawn(
            "web",
            [
                PYTHON,
                "-m",
                "gunicorn",
                "ladder.wsgi:application",
                "-c",
                "python:ladder.gunicorn_conf",
                "-b",
                f"127.0.0.1:{self.web_port}",
                "-w",
                "1",
            ],
        )

    def start_python_bot(self, bot_id: Any, token: str, seed: int) -> Proc:
        """A Python SDK bot (slow_bot.py) connecting to `bot_target`."""
        slow_bot = str(Path(__file__).with_name("slow_bot.py"))
        return self.spawn(
            f"bot{bot_id}",
            [PYTHON, slow_bot, "--target", self.bot_target, "--token", token, "--seed", str(seed),
             "--delay", str(self.bot_delay), "--concurrent", str(self.bot_concurrency)],
        )  # fmt: skip

    def run_script(self, script: str, args: Any) -> Any:
        """Run `script` with Django set up in this stack's environment; its last line of output, as JSON."""
        out = subprocess.run(
            [PYTHON, "-c", script, json.dumps(args)],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return json.loads(out.strip().splitlines()[-1])

    def queue_matches(self, ladder_id: int, seatings: list[list[int]], first_seed: int) -> list[int]:
        """Create one match per seating (bot ids in seat order) and send its `run_match`; the match ids."""
        return list(self.run_script(QUEUE, [ladder_id, seatings, first_seed]))

    def request_practice(self, bot_id: int) -> int:
        """Ask for a practice match of `bot_id` against the greedy house bot (its owner asking); its id."""
        return int(self.run_script(PRACTICE, bot_id))

    def count(self, status: str, ids: list[int]) -> int:
        marks = ",".join(str(int(i)) for i in ids)
        sql = f"SELECT COUNT(*) FROM matches_match WHERE status = ? AND id IN ({marks})"
        return int(self.query(sql, (status,))[0][0])

    def _web_up(self) -> bool:
        try:
            self.rest("/healthz")
            return True
        except OSError:
            return False

    def lease_holder_pid(self, match_id: int) -> int | None:
        from workers.leases import RedisLeases, SqliteLeases

        if self.redis_url:
            holder = RedisLeases(self.redis_url, prefix=self.env["CARAVANSERAI_LEASE_PREFIX"]).holder(
                f"match:{match_id}"
            )
        else:
            holder = SqliteLeases(self.var / "worker-leases.sqlite3").holder(f"match:{match_id}")
        return int(holder.split(":")[1]) if holder else None

    def stop(self) -> None:
        for proc in list(self.procs.values()):
            proc.stop(timeout=5.0 if proc.name.startswith("worker") else 3.0)
        self.procs.clear()
        if self.server_url:
            self._admin(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
        if self.redis_url:
            import redis

            client = redis.Redis.from_url(self.redis_url)
            for pattern in (
                f"e2e:{self.uid}:*",
                f"cvs:e2e-lease:{self.uid}:*",
                f"cvs:e2e:{self.uid}*",
                f"*e2e-{self.uid}*",
            ):
                keys = list(client.scan_iter(match=pattern, count=500))
                if keys:
                    client.delete(*keys)
            client.close()

    # --- checks --------------------------------------------------------------------------------------------
    def done_count(self) -> int:
        return int(self.query("SELECT COUNT(*) FROM matches_match WHERE status = 'DONE'")[0][0])

    def running(self) -> list[int]:
        return [r[0] for r in self.query("SELECT id FROM matches_match WHERE status = 'RUNNING' ORDER BY id")]

    def status(self, match_id: int) -> tuple[str, int]:
        row = self.query("SELECT status, attempts FROM matches_match WHERE id = ?", (match_id,))[0]
        return str(row[0]), int(row[1])

    def assert_rated_exactly_once(self) -> None:
        """Every DONE rated match has one ledger row per seat; no other match (practice ones included) has
        any."""
        rows = self.query(  # one statement, one snapshot: matches may finish while this runs
            "SELECT m.id, m.status, (SELECT COUNT(*) FROM matches_seat s WHERE s.match_id = m.id),"
            " (SELECT COUNT(*) FROM ratings_ratingledger l WHERE l.match_id = m.id), m.rated,"
            " (SELECT COALESCE(SUM(games), 0) FROM ratings_rating) FROM matches_match m"
        )
        for match_id, status, seats, ledger, is_rated, _ in rows:
            expected = seats if status == "DONE" and is_rated else 0
            assert ledger == expected, (
                f"match {match_id} ({status}) has {ledger} ledger rows, expected {expected}"
            )
        games = rows[0][5] if rows else 0
        assert games == sum(seats for _, status, seats, _, rated, _ in rows if status == "DONE" and rated)
