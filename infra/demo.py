"""The one-command demo (`make demo`): the whole ladder on this machine, on embedded defaults.

It migrates the SQLite database under var/, creates the Expedition 2-, 3- and 4-player ladders and the house
bots, registers demo bots through the ladder's services (a fresh token each run), then starts, each as its
own process with its log under var/demo/logs/: the gateway, a Celery worker, Celery beat, the web server
(gunicorn), and the bots (the Python SDK's random and greedy examples, and the Node example bot when Node.js
and its packages are present), which connect with their tokens and play real rated matches scheduled by
beat. It prints the URLs, one line per finished match, the leaderboards every minute, and stops everything
cleanly on Ctrl-C or SIGTERM (or after `--minutes N`).

No DATABASE_URL and no REDIS_URL: the demo unsets them, so it needs no server (SQLite database, the embedded
Celery broker and session registry, all under var/ or `--var-dir`).

Layer: tooling at the edge (a supervisor of processes); it writes to the database only through the ladder's
services and never runs a match itself.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
# Expedition at every table size, and each further registered game at 3 players.
FIRST_GAME = "expedition-v1"
FIRST_GAME_PLAYER_COUNTS = (2, 3, 4)
OTHER_GAMES_PLAYERS = 3
HOUSE_POLICIES = ("random", "greedy", "mcts:25")
DEMO_USER = "demo"
DEMO_PASSWORD = "caravanserai-demo"


def demo_ladders() -> list[tuple[str, int]]:
    """(game id, players) of the demo's ladders."""
    from engine_service.games import list_games

    ladders = [(FIRST_GAME, n) for n in FIRST_GAME_PLAYER_COUNTS]
    for spec in list_games():
        if spec.game_id != FIRST_GAME and spec.min_players <= OTHER_GAMES_PLAYERS <= spec.max_players:
            ladders.append((spec.game_id, OTHER_GAMES_PLAYERS))
    return ladders


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Child:
    name: str
    argv: list[str]
    log_path: Path
    env: dict[str, str]
    cwd: Path = ROOT
    proc: subprocess.Popen[bytes] | None = None
    log: IO[bytes] | None = field(default=None, repr=False)

    def start(self) -> Child:
        self.log = open(self.log_path, "ab")  # noqa: SIM115 - kept open for the child's life
        self.proc = subprocess.Popen(
            self.argv,
            cwd=self.cwd,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches the demo only; it stops the children in order
        )
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()  # the leader only: a Celery worker or gunicorn then stops its own children
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        # make sure nothing the child started is left behind
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.log is not None:
            self.log.close()


class Demo:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.var = Path(args.var_dir).resolve() if args.var_dir else ROOT / "var"
        self.logs = self.var / "demo" / "logs"
        self.web_port = args.web_port or free_port()
        self.bot_port = args.gateway_port or free_port()
        self.relay_port = args.relay_port or free_port()
        self.children: list[Child] = []
        self.stopping = False
        self.seen_match = 0
        self.started_at = time.monotonic()
        self.env = self._environment()

    # --- set-up --------------------------------------------------------------------------------------------
    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        for name in ("DATABASE_URL", "REDIS_URL"):
            if env.pop(name, None):
                self.say(f"note: {name} is ignored; the demo runs on the embedded defaults")
        env.update(
            DJANGO_SETTINGS_MODULE="ladder.settings.base",
            CARAVANSERAI_VAR_DIR=str(self.var),
            CARAVANSERAI_REGISTRY_PATH=str(self.var / "gateway-registry.sqlite3"),
            CARAVANSERAI_GATEWAY_ADDR=f"127.0.0.1:{self.bot_port}",
            CARAVANSERAI_RELAY_ADDR=f"127.0.0.1:{self.relay_port}",
            CARAVANSERAI_GATEWAY_AUTH="django",
            CARAVANSERAI_MATCHMAKING_SECONDS=env.get("CARAVANSERAI_MATCHMAKING_SECONDS", "3"),
            CARAVANSERAI_MAX_QUEUED_PER_LADDER=env.get("CARAVANSERAI_MAX_QUEUED_PER_LADDER", "2"),
            PYTHONUNBUFFERED="1",
            PYTHONPATH=os.pathsep.join([str(ROOT / "clients" / "python"), str(ROOT)]),
        )
        return env

    def say(self, text: str) -> None:
        print(text, flush=True)

    def prepare_database(self) -> list[tuple[str, str]]:
        """Migrate; ladders, house bots and the demo bots; returns (bot name, token) per demo bot."""
        os.environ.update({k: v for k, v in self.env.items() if k.startswith(("DJANGO", "CARAVANSERAI"))})
        for name in ("DATABASE_URL", "REDIS_URL"):
            os.environ.pop(name, None)
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        from django.contrib.auth import get_user_model
        from django.core.management import call_command

        from ladder.bots.models import Bot
        from ladder.bots.services import bot_create, bot_token_rotate, house_bot_ensure
        from ladder.ladders.models import Ladder
        from ladder.ladders.services import ladder_create

        self.say(f"database: SQLite under {self.var} (migrating)")
        call_command("migrate", verbosity=0, interactive=False)
        for game_id, n in demo_ladders():
            slug = f"{game_id}-{n}p"
            if not Ladder.objects.filter(slug=slug).exists():
                ladder_create(game_id=game_id, num_players=n, slug=slug)
        for policy in HOUSE_POLICIES:
            house_bot_ensure(policy=policy)
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(username=DEMO_USER)
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        tokens = []
        for name in self.bot_names():
            bot = Bot.objects.filter(name=name).first()
            if bot is None:
                bot, token = bot_create(
                    owner=user,
                    name=name,
                    games=sorted({game_id for game_id, _ in demo_ladders()}),
                    description="A demo bot started by `make demo`.",
                    max_concurrent=4,
                )
            else:
                bot, token = bot_token_rotate(bot_id=bot.pk, user=user)
            tokens.append((name, token))
        return tokens

    def node_available(self) -> bool:
        node_dir = ROOT / "clients" / "node"
        return (
            not self.args.no_node
            and shutil.which("node") is not None
            and (node_dir / "bot.js").exists()
            and (node_dir / "node_modules" / "@grpc" / "grpc-js").exists()
        )

    def bot_names(self) -> list[str]:
        names = ["demo-random-py", "demo-greedy-py"]
        if self.node_available():
            names.append("demo-random-node")
        return names

    # --- processes -----------------------------------------------------------------------------------------
    def spawn(self, name: str, argv: list[str], cwd: Path = ROOT) -> Child:
        child = Child(name, argv, self.logs / f"{name}.log", self.env, cwd).start()
        self.children.append(child)
        return child

    def wait_for(self, child: Child, predicate, what: str, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            if self.stopping:
                raise KeyboardInterrupt
            if not child.alive:
                raise RuntimeError(f"{child.name} exited before {what}:\n{child.tail()}")
            if predicate():
                return
            time.sleep(0.2)
        raise RuntimeError(f"{child.name}: no {what} after {timeout:.0f}s:\n{child.tail()}")

    def start_services(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        gateway = self.spawn("gateway", [PYTHON, "-m", "engine_service.gateway.server"])
        self.wait_for(gateway, lambda: "READY " in gateway.log_path.read_text(errors="replace"), "READY line")
        self.spawn(
            "worker",
            [
                PYTHON, "-m", "celery", "-A", "workers.celery_app", "worker",
                "-Q", "matches,matchmaking,tournaments", "-c", str(self.args.concurrency),
                "-n", f"demo-{os.getpid()}@%h", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
            ],
        )  # fmt: skip
        self.spawn(
            "beat",
            [
                PYTHON, "-m", "celery", "-A", "workers.celery_app", "beat", "--loglevel", "INFO",
                "-s", str(self.var / "demo" / "celerybeat-schedule"),
            ],
        )  # fmt: skip
        web = self.spawn(
            "web",
            [
                PYTHON, "-m", "gunicorn", "ladder.wsgi:application", "--bind", f"127.0.0.1:{self.web_port}",
                "--workers", "2", "--access-logfile", "-", "--timeout", "60",
            ],
        )  # fmt: skip
        self.wait_for(web, self.web_ready, "answer on /healthz")

    def web_ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/healthz", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def start_bots(self, tokens: list[tuple[str, str]]) -> None:
        target = f"127.0.0.1:{self.bot_port}"
        examples = ROOT / "clients" / "python" / "examples"
        for i, (name, token) in enumerate(tokens):
            common = ["--target", target, "--token", token, "--concurrent", "2", "--seed", str(i + 1)]
            if name.endswith("-node"):
                argv = ["node", str(ROOT / "clients" / "node" / "bot.js"), *common]
            elif "greedy" in name:
                argv = [PYTHON, str(examples / "greedy_bot.py"), *common]
            else:
                argv = [PYTHON, str(examples / "random_bot.py"), *common]
            self.spawn(f"bot-{name}", argv)

    def stop_all(self) -> None:
        """Beat first (no new matches), then the worker (it finishes the match in hand), the bots, the
        gateway and the web server."""
        order = {"beat": 0, "worker": 1, "gateway": 3, "web": 4}
        for child in sorted(self.children, key=lambda c: order.get(c.name, 2)):
            child.stop(timeout=30.0 if child.name == "worker" else 10.0)
        self.children.clear()

    # --- progress ------------------------------------------------------------------------------------------
    def report_matches(self) -> int:
        from ladder.matches.models import Match, MatchStatus

        done = list(
            Match.objects.filter(status=MatchStatus.DONE, pk__gt=self.seen_match)
            .select_related("ladder")
            .prefetch_related("seats__bot")
            .order_by("pk")[:50]
        )
        for match in done:
            seats = sorted(match.seats.all(), key=lambda s: (s.rank or 99, s.index))
            table = ", ".join(f"#{s.rank} {s.bot.name} ({s.score})" for s in seats)
            faults = sum(len(s.faults) for s in seats)
            self.say(
                f"  match {match.pk:>4} {match.ladder.slug:<17} {table} · {match.steps} steps"
                + (f" · {faults} faults" if faults else "")
                + f" · http://127.0.0.1:{self.web_port}/matches/{match.pk}/"
            )
            self.seen_match = match.pk
        return len(done)

    def report_leaderboards(self) -> None:
        from ladder.ladders.models import Ladder
        from ladder.ratings.models import Rating

        for ladder in Ladder.objects.filter(slug__in=[f"{g}-{n}p" for g, n in demo_ladders()]).order_by(
            "game_id", "num_players"
        ):
            top = Rating.objects.filter(ladder=ladder, games__gt=0).select_related("bot").order_by("-elo")[:6]
            row = "  ".join(f"{r.bot.name} {r.elo:.0f} ({r.games})" for r in top) or "no rated bots yet"
            self.say(f"  {ladder.slug:<17} {row}")

    def print_urls(self) -> None:
        base = f"http://127.0.0.1:{self.web_port}"
        self.say("")
        self.say(f"  ladders        {base}/")
        for game_id, n in demo_ladders():
            self.say(f"  leaderboard    {base}/ladders/{game_id}-{n}p/")
        self.say(f"  matches        {base}/matches/")
        self.say(f"  tournaments    {base}/tournaments/")
        self.say(f"  REST API       {base}/api/v1/  (docs {base}/api/v1/docs/)")
        self.say(f"  log in         {base}/login/  as {DEMO_USER} / {DEMO_PASSWORD} to see the demo bots")
        self.say(f"  gateway        127.0.0.1:{self.bot_port} (bots connect here with their tokens)")
        self.say(f"  logs           {self.logs}")
        self.say("")

    def run(self) -> int:
        deadline = None if self.args.minutes is None else time.monotonic() + self.args.minutes * 60
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)
        try:
            tokens = self.prepare_database()
            self.say("starting the gateway, a Celery worker, beat and the web server")
            self.start_services()
            self.start_bots(tokens)
            self.print_urls()
            self.say(
                f"bots {', '.join(n for n, _ in tokens)} connecting; matches appear below (Ctrl-C stops)"
            )
            from ladder.matches.models import Match

            self.seen_match = Match.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
            played = 0
            last_board = time.monotonic()
            while not self.stopping and (deadline is None or time.monotonic() < deadline):
                played += self.report_matches()
                for child in self.children:
                    if not child.alive and not child.name.startswith("bot-"):
                        raise RuntimeError(f"{child.name} stopped unexpectedly:\n{child.tail()}")
                if time.monotonic() - last_board >= 60:
                    self.say("leaderboards (Elo, games):")
                    self.report_leaderboards()
                    last_board = time.monotonic()
                time.sleep(1.0)
            played += self.report_matches()
            self.say("leaderboards (Elo, games):")
            self.report_leaderboards()
            self.say(f"stopping: {played} matches played in {time.monotonic() - self.started_at:.0f}s")
            return 0
        except KeyboardInterrupt:
            self.say("stopping")
            return 0
        except RuntimeError as exc:
            self.say(f"demo failed: {exc}")
            return 1
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            self.stop_all()
            self.say("all processes stopped")

    def _on_signal(self, signum: int, frame: object) -> None:
        self.stopping = True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=None, help="stop by itself after this many minutes")
    parser.add_argument("--web-port", type=int, default=8000, help="0: any free port")
    parser.add_argument(
        "--gateway-port", type=int, default=50051, help="where bots connect; 0: any free port"
    )
    parser.add_argument(
        "--relay-port", type=int, default=50052, help="the gateway's relay for workers; 0: any"
    )
    parser.add_argument("--concurrency", type=int, default=2, help="worker processes playing matches")
    parser.add_argument("--var-dir", default=None, help="where the demo keeps its data (default var/)")
    parser.add_argument("--no-node", action="store_true", help="do not start the Node example bot")
    args = parser.parse_args(argv)
    if args.minutes is not None and args.minutes <= 0:
        parser.error("--minutes must be positive")
    if args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    return Demo(args).run()


if __name__ == "__main__":
    raise SystemExit(main())
