"""The one-command demo (`make demo`): the whole ladder on this machine, on embedded defaults.

It migrates the SQLite database under var/, creates the demo ladders (Expedition for 2, 3 and 4 players, and
every other game for 3, Marco Polo II also with The Caravans) and the house bots, registers demo bots
through the ladder's services (their tokens kept in var/demo/tokens.json, mode 0600, see `DemoTokens`),
then starts, each as its own process with its log under var/demo/logs/: the gateway, the web server
(gunicorn with ladder/gunicorn_conf.py's gthread workers, on 127.0.0.1 only, so no proxy in front), the
bot host when this machine can run it, the bots (the Python SDK's random and greedy examples, and the Node
example bot when Node.js and its packages are present), which connect with their tokens, and once they
are connected (at most BOTS_CONNECT_SECONDS) a match worker (`-Q matches`, Celery's threads pool), a
scheduler worker (`-Q matchmaking,tournaments`, so matchmaking never waits behind matches), the analyst
(`-Q analysis`, one match analysis at a time) and Celery beat (started last, once the match and scheduler
workers are ready), which schedules real rated matches. On its first run it also starts a small Swiss
tournament of house bots (`start_tournament`), so the tournaments page has standings and a crosstable. It
prints the URLs, one line per finished match in the order they finish, the leaderboards every minute, and
stops on Ctrl-C or SIGTERM (or after `--minutes N`).

Choices that keep every ladder moving on a 2-core machine. Measured with `caravan play <game> --players 3
--bots random,greedy,mcts:N --seed 7`, one match alone on a quiet machine: Marco Polo II takes 105 s with
`mcts:25` and 38 s with `mcts:4`, Dragonda 37 s and 9 s, Voyages 9 s and 3 s; with SDK, random or greedy
bots only, every game's match takes 1-3 s. House bots fill seats wherever matchmaking lacks remote bots,
and the searching one (capacity unlimited) then sits in many long matches at once: in a 4-minute run with
house bots on every ladder (`mcts:4`, one search process), 8 such matches held all 12 remote-bot slots for
minutes, the Expedition 3-player ladder had no match, and the searching seat timed out, its decisions
queued behind each other's. So:
- house bots (random, greedy and the default search level `search`, DEMO_SEARCH: about 35 ms a decision in
  Expedition, bench/results/engine.json) fill seats on the Expedition ladders only; the Voyages, Marco Polo
  II (with and without The Caravans) and Dragonda ladders seat only the SDK bots, three in Python
  (PYTHON_BOTS, so 3-player tables form without Node.js) plus the Node bot;
- the search bot decides in one process (CARAVANSERAI_SEARCH_PROCESSES=1), leaving a core for the gateway,
  the workers, the web server and the bots;
- each SDK bot plays up to 4 matches at once (BOT_CONCURRENT); the worker keeps its default of 64 matches
  at once, more than the bots' slots; matchmaking runs every 3 s with at most 2 matches waiting per ladder.
With these, on this machine under a load average of 20-40 from other jobs, the first match was printed 8 s
after the URLs and every ladder had a rated match 62 s after them.

Feed: a match is printed once when it is DONE, whatever its id: the feed follows `finished_at` (with an
overlap for transactions that commit late) and remembers what it printed, so a long match that finishes
after later ones is printed too, and the total is the number of matches DONE since the demo started.

Stopping: beat and the scheduler stop first (no new matches), then the match worker gets a warm shutdown
(it finishes the matches in hand) for at most WORKER_STOP_SECONDS; after that it is killed, and every match
still RUNNING is put back to QUEUED through `match_record_infrastructure_failure(retry=True)` (never rated)
and sent again, so the next start replays it. A clean stop leaves no match RUNNING. Stale scheduling ticks
left in the broker by an earlier run are purged before the scheduler starts, so none expires unrun. A
demo killed outright (SIGKILL, no stop) still takes its children with it: each is armed between fork and
exec to get SIGTERM when the demo ends (`end_with_parent`).

Restarting replays what a stop put back (and what was still QUEUED), each once, rated only when played. Two
things used to cancel them (13 of 17 in one restart): a fresh token each run revoked the old one, and a
revoked token cancels the bot's matches not yet started (`ladder.matches.receivers`); and the match worker
started before the bots had connected, so a match whose bot had no stream within the start grace was
called off. So a demo bot keeps its token while it still works, and the match worker starts only once the
demo's bots are connected.

No DATABASE_URL and no REDIS_URL: the demo unsets them, so it needs no server (SQLite database, the embedded
Celery broker and session registry, all under var/ or `--var-dir`). It sets CARAVANSERAI_DEMO=1, which lets
the ladder run with the development SECRET_KEY.

Layer: tooling at the edge (a supervisor of processes); it writes to the database only through the ladder's
services and never runs a match itself.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
# Expedition at every table size, each further registered game at 3 players, plus these option variants.
FIRST_GAME = "expedition-v1"
FIRST_GAME_PLAYER_COUNTS = (2, 3, 4)
OTHER_GAMES_PLAYERS = 3
OPTION_VARIANTS = (("mp2-v1", (("caravans", True),)),)
DEMO_SEARCH = "search"  # the default search level (engine_service.policies.levels)
HOUSE_POLICIES = ("random", "greedy", DEMO_SEARCH)
BOT_CONCURRENT = 4
# three Python SDK bots, so the 3-player ladders without house bots play with or without Node.js
PYTHON_BOTS = ("demo-random-py", "demo-greedy-py", "demo-greedy2-py")
DEMO_USER = "demo"
DEMO_PASSWORD = "caravanserai-demo"
WORKER_STOP_SECONDS = 20.0
FEED_OVERLAP = timedelta(seconds=120)
SCHEDULING_QUEUES = ("matchmaking", "tournaments")
REQUEUE_REASON = "the demo stopped while the match was running; it is replayed on the next start"
BOTS_CONNECT_SECONDS = 60.0  # the match worker waits this long at most for the demo's bots to connect
# A small Swiss tournament of house bots, once per database: five entrants, three rounds of two tables and
# a bye, on the Expedition 2-player ladder (about a minute of play), so the tournaments page has standings
# and a crosstable. House bots only: a remote bot's slots belong to matchmaking.
DEMO_TOURNAMENT = "Demo Swiss: house bots on Expedition, 2 players"
DEMO_TOURNAMENT_LADDER = "expedition-v1-2p"
DEMO_TOURNAMENT_POLICIES = ("random", "greedy", DEMO_SEARCH, "search-strong", "mcts:5")
DEMO_TOURNAMENT_ROUNDS = 3


@dataclass(frozen=True)
class DemoLadder:
    game_id: str
    players: int
    options: tuple[tuple[str, Any], ...] = ()
    house_bots: bool = False

    @property
    def slug(self) -> str:
        """The slug `ladder_create` would give it: the true options' names after the player count."""
        flags = "".join(f"-{name}" for name, value in self.options if value is True)
        return f"{self.game_id}-{self.players}p{flags}".replace("_", "-")


def demo_ladders() -> list[DemoLadder]:
    from engine_service.games import list_games

    ladders = [DemoLadder(FIRST_GAME, n, house_bots=True) for n in FIRST_GAME_PLAYER_COUNTS]
    for spec in list_games():
        if spec.game_id != FIRST_GAME and spec.min_players <= OTHER_GAMES_PLAYERS <= spec.max_players:
            ladders.append(DemoLadder(spec.game_id, OTHER_GAMES_PLAYERS))
            ladders += [
                DemoLadder(g, OTHER_GAMES_PLAYERS, o) for g, o in OPTION_VARIANTS if g == spec.game_id
            ]
    return ladders


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def requeue_running_matches() -> list[int]:
    """Once the match worker is gone: every match still RUNNING goes back to QUEUED through the ladder's
    service (never rated; ERROR once out of attempts) and is sent again, so the next start replays it.
    Returns their ids."""
    from ladder.matches.models import Match, MatchStatus
    from ladder.matches.services import match_record_infrastructure_failure
    from workers.celery_app import app

    running = list(Match.objects.filter(status=MatchStatus.RUNNING).values_list("pk", flat=True))
    for match_id in running:
        match_record_infrastructure_failure(match_id=match_id, reason=REQUEUE_REASON, retry=True)
        if Match.objects.filter(pk=match_id, status=MatchStatus.QUEUED).exists():
            app.send_task("matches.run_match", args=[match_id])
    return running


class DemoTokens:
    """The demo bots' tokens, by bot name, in a file only this user can read (mode 0600). A token is kept
    across runs while it still authenticates its bot: rotating it would revoke the old one, and a revoked
    token cancels the bot's matches not yet started, those a stop put back among them."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}

    def keep(self, name: str, token: str) -> None:
        tokens = {**self.load(), name: token}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".tmp")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(tokens, handle)
        partial.replace(self.path)

    def valid(self, name: str, bot_id: int) -> str | None:
        """The kept token of `name` if it still authenticates bot `bot_id`."""
        from ladder.bots.selectors import bot_identity_for_token

        token = self.load().get(name)
        identity = bot_identity_for_token(token=token) if token else None
        return token if identity is not None and identity.bot_id == bot_id else None


def bots_not_connected(bot_ids: dict[int, str]) -> list[str]:
    """The names of the bots (id -> name) with no stream registered at any gateway."""
    from engine_service.gateway.registry import online_bots
    from workers.seats import registry

    online = {bot.bot_id for bot in online_bots(registry())}
    return [name for bot_id, name in bot_ids.items() if str(bot_id) not in online]


PR_SET_PDEATHSIG = 1  # prctl(2)
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here, never between fork and exec


def end_with_parent(parent: int) -> Callable[[], None]:
    """For a child between fork and exec: SIGTERM reaches it when the demo ends, even by SIGKILL (the
    signal a Celery worker, gunicorn, the gateway and the bot host each stop their own children on), and it
    ends at once if the demo is already gone. The demo spawns from its main thread, whose end this follows."""

    def arm() -> None:
        _LIBC.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


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
            preexec_fn=end_with_parent(os.getpid()),
        )
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def tail(self, lines: int = 15) -> str:
        return "\n".join(self.text().splitlines()[-lines:])

    def stop(self, timeout: float) -> bool:
        """SIGTERM, then SIGKILL to its whole group after `timeout`; True when it stopped by itself."""
        if self.proc is None:
            return True
        clean = True
        if self.proc.poll() is None:
            self.proc.terminate()  # the leader only: a Celery worker or gunicorn then stops its own children
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                clean = False
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        # make sure nothing the child started is left behind
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.log is not None:
            self.log.close()
        return clean


class MatchFeed:
    """Every match that becomes DONE after `since`, once, in the order they finish (not by id)."""

    def __init__(self, since: datetime, web_base: str) -> None:
        self.since = since
        self.web_base = web_base
        self.mark = since
        self.printed: dict[int, datetime] = {}  # printed within the overlap window
        self.total = 0

    def poll(self, say: Callable[[str], None]) -> int:
        from ladder.matches.models import Match, MatchStatus

        window = max(self.since, self.mark - FEED_OVERLAP)
        rows = Match.objects.filter(status=MatchStatus.DONE, finished_at__gte=window)
        fresh = [pk for pk in rows.values_list("pk", flat=True) if pk not in self.printed]
        matches = (
            Match.objects.filter(pk__in=fresh)
            .select_related("ladder")
            .prefetch_related("seats__bot")
            .order_by("finished_at", "pk")
        )
        for match in matches:
            say(self.line(match))
            self.printed[match.pk] = match.finished_at
            self.mark = max(self.mark, match.finished_at)
        self.printed = {pk: at for pk, at in self.printed.items() if at >= window}
        self.total += len(fresh)
        return len(fresh)

    def line(self, match: Any) -> str:
        seats = sorted(match.seats.all(), key=lambda s: (s.rank or 99, s.index))
        table = ", ".join(f"#{s.rank} {s.bot.name} ({s.score})" for s in seats)
        faults = sum(len(s.faults) for s in seats)
        return (
            f"  match {match.pk:>4} {match.ladder.slug:<19} {table} · {match.steps} steps"
            + (f" · {faults} faults" if faults else "")
            + f" · {self.web_base}/matches/{match.pk}/"
        )


class Demo:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.var = Path(args.var_dir).resolve() if args.var_dir else ROOT / "var"
        self.logs = self.var / "demo" / "logs"
        self.tokens = DemoTokens(self.var / "demo" / "tokens.json")
        self.web_port = args.web_port or free_port()
        self.bot_port = args.gateway_port or free_port()
        self.relay_port = args.relay_port or free_port()
        self.children: list[Child] = []
        self.stopping = False
        self.django_ready = False
        self.feed: MatchFeed | None = None
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
            CARAVANSERAI_DEMO="1",
            CARAVANSERAI_VAR_DIR=str(self.var),
            CARAVANSERAI_REGISTRY_PATH=str(self.var / "gateway-registry.sqlite3"),
            CARAVANSERAI_GATEWAY_ADDR=f"127.0.0.1:{self.bot_port}",
            LADDER_GATEWAY_PUBLIC_ADDR=f"127.0.0.1:{self.bot_port}",  # what the token page tells bots
            CARAVANSERAI_RELAY_ADDR=f"127.0.0.1:{self.relay_port}",
            CARAVANSERAI_GATEWAY_AUTH="django",
            CARAVANSERAI_GATEWAY_UDS=str(self.var / "demo" / "gateway-socket" / "bot.sock"),  # hosted bots
            CARAVANSERAI_SEARCH_PROCESSES=env.get("CARAVANSERAI_SEARCH_PROCESSES", "1"),
            CARAVANSERAI_MATCHMAKING_SECONDS=env.get("CARAVANSERAI_MATCHMAKING_SECONDS", "3"),
            CARAVANSERAI_MAX_QUEUED_PER_LADDER=env.get("CARAVANSERAI_MAX_QUEUED_PER_LADDER", "2"),
            # each hosted bot's tree gets a quarter of a core: the hostile one's spinners cannot take half
            # of a 2-core machine from the matches
            CARAVANSERAI_BOT_HOST_CPU_CORES=env.get("CARAVANSERAI_BOT_HOST_CPU_CORES", "0.25"),
            PYTHONUNBUFFERED="1",
            PYTHONPATH=os.pathsep.join([str(ROOT / "clients" / "python"), str(ROOT)]),
        )
        return env

    def say(self, text: str) -> None:
        print(text, flush=True)

    def setup_django(self) -> None:
        os.environ.update({k: v for k, v in self.env.items() if k.startswith(("DJANGO", "CARAVANSERAI"))})
        for name in ("DATABASE_URL", "REDIS_URL"):
            os.environ.pop(name, None)
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        self.django_ready = True

    def prepare_database(self) -> list[tuple[str, str]]:
        """Migrate; ladders, house bots and the demo bots; returns (bot name, token) per demo bot."""
        from django.core.management import call_command

        from ladder.bots.services import house_bot_ensure
        from ladder.ladders.models import Ladder
        from ladder.ladders.services import ladder_create

        self.say(f"database: SQLite under {self.var} (migrating)")
        call_command("migrate", verbosity=0, interactive=False)
        for ladder in demo_ladders():
            if not Ladder.objects.filter(slug=ladder.slug).exists():
                ladder_create(
                    game_id=ladder.game_id, num_players=ladder.players, options=dict(ladder.options),
                    slug=ladder.slug, house_bots_allowed=ladder.house_bots,
                )  # fmt: skip
        for policy in HOUSE_POLICIES:
            house_bot_ensure(policy=policy)
        return [(name, self.bot_token(name)) for name in self.bot_names()]

    def bot_token(self, name: str) -> str:
        """The demo bot `name`'s token: the one kept from an earlier run while it still works (`DemoTokens`),
        else a new one, registering the bot on first use."""
        from django.contrib.auth import get_user_model

        from ladder.bots.models import Bot
        from ladder.bots.services import bot_create, bot_token_rotate

        user, created = get_user_model().objects.get_or_create(username=DEMO_USER)
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        bot = Bot.objects.filter(name=name).first()
        if bot is not None and (kept := self.tokens.valid(name, bot.pk)):
            return kept
        if bot is not None:
            token = bot_token_rotate(bot_id=bot.pk, user=user)[1]
        else:
            token = bot_create(
                owner=user,
                name=name,
                games=sorted({ladder.game_id for ladder in demo_ladders()}),
                description="A demo bot started by `make demo`.",
                max_concurrent=BOT_CONCURRENT,
            )[1]
        self.tokens.keep(name, token)
        return token

    def prepare_hosted(self) -> list[str]:
        """The hosted example bots (`bot_host.demo`), when this machine can run the bot host; their names."""
        from django.contrib.auth import get_user_model

        from bot_host.demo import demo_hosted_bots, hosting_possible

        why = "--no-hosted" if self.args.no_hosted else hosting_possible()
        if why:
            self.say(f"note: no hosted bots: {why}")
            return []
        owner = get_user_model().objects.get(username=DEMO_USER)
        games = sorted({ladder.game_id for ladder in demo_ladders()})
        runtimes = ["python", "node"] if self.node_available() else ["python"]
        return demo_hosted_bots(owner=owner, games=games, runtimes=runtimes)

    def start_bot_host(self, hosted: list[str]) -> None:
        """The bot host: it runs the hosted bots in sandboxes that reach only the gateway's socket."""
        if hosted:
            host = self.spawn("bot-host", [PYTHON, "-m", "bot_host"])
            self.wait_for(host, lambda: "READY " in host.text(), "READY line")
            self.say(f"hosted bots {', '.join(hosted)} run in sandboxes (bot host, log bot-host)")

    def node_available(self) -> bool:
        node_dir = ROOT / "clients" / "node"
        return (
            not self.args.no_node
            and shutil.which("node") is not None
            and (node_dir / "bot.js").exists()
            and (node_dir / "node_modules" / "@grpc" / "grpc-js").exists()
        )

    def bot_names(self) -> list[str]:
        names = list(PYTHON_BOTS)
        if self.node_available():
            names.append("demo-random-node")
        return names

    def start_tournament(self) -> str | None:
        """Create the demo's Swiss tournament (first run only) and send its start to the scheduler, which
        pairs each round as the previous one finishes; an unfinished one from an earlier run is advanced
        by beat's tournament sweep. Returns its page's path."""
        from ladder.bots.services import house_bot_ensure
        from ladder.ladders.models import Ladder
        from ladder.tournaments.models import Tournament, TournamentFormat
        from ladder.tournaments.services import tournament_create
        from workers.celery_app import app

        existing = Tournament.objects.filter(name=DEMO_TOURNAMENT).order_by("pk").first()
        if existing is not None:
            return f"/tournaments/{existing.pk}/"
        ladder = Ladder.objects.filter(slug=DEMO_TOURNAMENT_LADDER).first()
        if ladder is None:
            return None
        bots = [house_bot_ensure(policy=p) for p in DEMO_TOURNAMENT_POLICIES]
        tournament = tournament_create(
            ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], format=TournamentFormat.SWISS,
            rounds=DEMO_TOURNAMENT_ROUNDS, name=DEMO_TOURNAMENT,
        )  # fmt: skip
        app.send_task("tournaments.start", args=[tournament.pk])
        return f"/tournaments/{tournament.pk}/"

    def purge_scheduling_ticks(self) -> None:
        """Drop matchmaking and sweep messages an earlier run left in the broker: they are only beat ticks
        (beat sends fresh ones), and a stale one would expire unrun. Match messages stay."""
        from workers.celery_app import app

        with app.connection_for_write() as conn:
            for queue in SCHEDULING_QUEUES:
                with contextlib.suppress(Exception):  # a queue that does not exist yet has nothing to drop
                    conn.default_channel.queue_purge(queue)

    # --- processes -----------------------------------------------------------------------------------------
    def spawn(self, name: str, argv: list[str], cwd: Path = ROOT) -> Child:
        child = Child(name, argv, self.logs / f"{name}.log", self.env, cwd).start()
        self.children.append(child)
        return child

    def child(self, name: str) -> Child | None:
        return next((c for c in self.children if c.name == name), None)

    def wait_for(self, child: Child, predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
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

    def celery(self, name: str, *args: str) -> Child:
        return self.spawn(
            name, [PYTHON, "-m", "celery", "-A", "workers.celery_app", *args, "--loglevel", "INFO"]
        )

    def start_workers(self) -> None:
        """The match worker (threads pool, CARAVANSERAI_MATCHES_PER_WORKER at once) and the scheduler, each
        waited for until ready, then beat: its first tick finds a worker listening."""
        quiet = ("--without-gossip", "--without-mingle")
        pid = os.getpid()
        worker = self.celery("worker", "worker", "-Q", "matches", "-n", f"demo-{pid}@%h", *quiet)
        scheduler = self.celery(
            "scheduler", "worker", "-Q", ",".join(SCHEDULING_QUEUES), "-c", "4", "-n", f"scheduler-{pid}@%h", *quiet
        )  # fmt: skip
        for child in (worker, scheduler):
            self.wait_for(child, lambda c=child: " ready." in c.text(), "ready line")  # type: ignore[misc]
        # match analyses ("Analyse this match"): CPU-bound, one at a time in a process of their own
        self.celery("analyst", "worker", "-Q", "analysis", "-P", "prefork", "-c", "1", "-n", f"analyst-{pid}@%h", *quiet)  # fmt: skip
        self.celery("beat", "beat", "-s", str(self.var / "demo" / "celerybeat-schedule"))

    def start_services(self) -> None:
        """The gateway and the web server (the workers start once the bots are connected)."""
        self.logs.mkdir(parents=True, exist_ok=True)
        gateway = self.spawn("gateway", [PYTHON, "-m", "engine_service.gateway.server"])
        self.wait_for(gateway, lambda: "READY " in gateway.text(), "READY line")
        self.purge_scheduling_ticks()
        web = self.spawn(
            "web",
            [
                PYTHON, "-m", "gunicorn", "ladder.wsgi:application", "-c", "python:ladder.gunicorn_conf",
                "--bind", f"127.0.0.1:{self.web_port}", "--workers", "2",
            ],
        )  # fmt: skip
        self.wait_for(web, self.web_ready, "answer on /healthz")

    def web_ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/healthz", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def wait_for_bots(self, names: list[str]) -> None:
        """Until every one of the demo's bots `names` has a stream at the gateway, BOTS_CONNECT_SECONDS at
        most: the matches put back (or left QUEUED) by the last stop then find their bots when the match
        worker starts them, instead of being called off."""
        from ladder.bots.models import Bot

        bot_ids = dict(Bot.objects.filter(name__in=names).values_list("pk", "name"))
        until = time.monotonic() + BOTS_CONNECT_SECONDS
        while (missing := bots_not_connected(bot_ids)) and time.monotonic() < until:
            if self.stopping:
                raise KeyboardInterrupt
            time.sleep(0.2)
        if missing:
            self.say(f"note: not connected after {BOTS_CONNECT_SECONDS:.0f}s, starting anyway: {missing}")

    def start_bots(self, tokens: list[tuple[str, str]]) -> None:
        target = f"127.0.0.1:{self.bot_port}"
        examples = ROOT / "clients" / "python" / "examples"
        for i, (name, token) in enumerate(tokens):
            common = [
                "--target",
                target,
                "--token",
                token,
                "--concurrent",
                str(BOT_CONCURRENT),
                "--seed",
                str(i + 1),
            ]
            if name.endswith("-node"):
                argv = ["node", str(ROOT / "clients" / "node" / "bot.js"), *common]
            elif "greedy" in name:
                argv = [PYTHON, str(examples / "greedy_bot.py"), *common]
            else:
                argv = [PYTHON, str(examples / "random_bot.py"), *common]
            self.spawn(f"bot-{name}", argv)

    # --- stopping ------------------------------------------------------------------------------------------
    def stop_child(self, name: str, timeout: float = 10.0) -> bool:
        child = self.child(name)
        if child is None:
            return True
        self.children.remove(child)
        return child.stop(timeout)

    def stop_matches(self) -> None:
        """Beat and the scheduler (no new matches), then a bounded warm shutdown of the match worker; the
        matches it could not finish go back to QUEUED."""
        self.stop_child("beat")
        self.stop_child("scheduler")
        worker_was_running = self.child("worker") is not None
        if not self.stop_child("worker", timeout=WORKER_STOP_SECONDS):
            self.say(f"the worker did not finish its matches within {WORKER_STOP_SECONDS:.0f}s; stopped it")
        if worker_was_running and self.django_ready:
            self.requeue_unfinished()

    def requeue_unfinished(self) -> None:
        running = requeue_running_matches()
        if running:
            self.say(f"put back {len(running)} unfinished matches, replayed on the next start: {running}")

    def stop_all(self) -> None:
        """Matches first (see `stop_matches`), the last lines of the feed, then the bots, gateway and web."""
        self.stop_matches()
        if self.feed is not None:
            self.feed.poll(self.say)
            self.say("leaderboards (mu - 3 sigma, ? provisional, games):")
            self.report_leaderboards()
            elapsed = time.monotonic() - self.started_at
            self.say(f"stopping: {self.feed.total} matches played in {elapsed:.0f}s")
        order = {"gateway": 1, "web": 2}
        for child in sorted(self.children, key=lambda c: order.get(c.name, 0)):
            child.stop(timeout=10.0)
        self.children.clear()

    # --- progress ------------------------------------------------------------------------------------------
    def report_leaderboards(self) -> None:
        from ladder.ladders.models import Ladder
        from ladder.ratings.selectors import leaderboard_standings

        slugs = [ladder.slug for ladder in demo_ladders()]
        for ladder in Ladder.objects.filter(slug__in=slugs).order_by("game_id", "num_players", "slug"):
            top = leaderboard_standings(ladder=ladder)[:6]
            row = "  ".join(
                f"{r.bot_name} {r.conservative:.1f}{'?' if r.provisional else ''} ({r.games})" for r in top
            )
            row = row or "no rated bots yet"
            self.say(f"  {ladder.slug:<19} {row}")

    def print_urls(self, tournament: str | None = None) -> None:
        base = f"http://127.0.0.1:{self.web_port}"
        self.say("")
        self.say(f"  ladders        {base}/")
        for ladder in demo_ladders():
            self.say(f"  leaderboard    {base}/ladders/{ladder.slug}/")
        self.say(f"  matches        {base}/matches/")
        self.say(f"  tournaments    {base}/tournaments/")
        if tournament:
            self.say(f"  Swiss (demo)   {base}{tournament}  (house bots, {DEMO_TOURNAMENT_ROUNDS} rounds)")
        self.say(f"  REST API       {base}/api/v1/  (docs {base}/api/v1/docs/)")
        self.say(f"  log in         {base}/login/  as {DEMO_USER} / {DEMO_PASSWORD} to see the demo bots")
        self.say(f"  gateway        127.0.0.1:{self.bot_port} (bots connect here with their tokens)")
        self.say(f"  logs           {self.logs}")
        self.say("")

    def start(self) -> None:
        from django.utils import timezone

        self.setup_django()
        tokens = self.prepare_database()
        hosted = self.prepare_hosted()
        self.say(
            "starting the gateway, the web server and the bots, then the match and scheduler workers and beat"
        )
        self.feed = MatchFeed(timezone.now(), f"http://127.0.0.1:{self.web_port}")
        self.start_services()
        self.start_bot_host(hosted)
        self.start_bots(tokens)
        self.wait_for_bots([n for n, _ in tokens] + hosted)
        self.start_workers()
        tournament = self.start_tournament()
        self.print_urls(tournament)
        self.say(f"bots {', '.join(n for n, _ in tokens)} connected; matches appear below (Ctrl-C stops)")

    def watch(self, deadline: float | None) -> None:
        assert self.feed is not None
        last_board = time.monotonic()
        while not self.stopping and (deadline is None or time.monotonic() < deadline):
            self.feed.poll(self.say)
            for child in self.children:
                if not child.alive and not child.name.startswith("bot-"):
                    raise RuntimeError(f"{child.name} stopped unexpectedly:\n{child.tail()}")
            if time.monotonic() - last_board >= 60:
                self.say("leaderboards (mu - 3 sigma, ? provisional, games):")
                self.report_leaderboards()
                last_board = time.monotonic()
            time.sleep(1.0)

    def run(self) -> int:
        deadline = None if self.args.minutes is None else time.monotonic() + self.args.minutes * 60
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)
        status = 0
        try:
            self.start()
            self.watch(deadline)
        except KeyboardInterrupt:
            pass
        except RuntimeError as exc:
            self.say(f"demo failed: {exc}")
            status = 1
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            self.say("stopping")
            self.stop_all()
            self.say("all processes stopped")
        return status

    def _on_signal(self, signum: int, frame: object) -> None:
        self.stopping = True


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=None, help="stop by itself after this many minutes")
    parser.add_argument("--web-port", type=int, default=8000, help="0: any free port")
    parser.add_argument(
        "--gateway-port", type=int, default=50051, help="where bots connect; 0: any free port"
    )
    parser.add_argument(
        "--relay-port", type=int, default=50052, help="the gateway's relay for workers; 0: any"
    )
    parser.add_argument("--var-dir", default=None, help="where the demo keeps its data (default var/)")
    parser.add_argument("--no-node", action="store_true", help="do not start the Node example bot")
    parser.add_argument(
        "--no-hosted", action="store_true", help="do not start the bot host and its hosted example bots"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.minutes is not None and args.minutes <= 0:
        parser.error("--minutes must be positive")
    return Demo(args).run()


if __name__ == "__main__":
    raise SystemExit(main())
