"""The one-command demo on embedded defaults, run as a new operator would: matches are printed after the
URLs, a bot registered on the web page in Chromium and connected with the command its token page shows gets
rated results and a rating chart that moves, every ladder gets a rated match, the feed prints every finished
match (also those finishing after a later id) with the right total, and a stop by SIGTERM (like Ctrl-C)
leaves no match RUNNING, no scheduling task expired and no process behind (`--minutes` ends a run through
the same stop), and the next start plays what the stop put back.

How soon each of these comes is printed, never asserted: the waits are hang guards (HANG_SECONDS) that end
as soon as the event comes, so a loaded machine makes the test slower, not red. `python -m bench demo`
measures the times against their goals (a newcomer's first rated result within a minute). The demo's
database is read with sqlite3 (not Django), as the demo owns it. The module is one xdist group: the restart
test starts again from the directory the SIGTERM test's demo left."""

from __future__ import annotations

import http.cookiejar
import importlib.util
import json
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
PORTS = ["--web-port", "0", "--gateway-port", "0", "--relay-port", "0"]  # a demo built here binds none
HANG_SECONDS = 420  # the longest any awaited event may take before the demo is called stuck

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("demo"), pytest.mark.timeout(4 * HANG_SECONDS)]


@pytest.fixture(scope="module")
def demo_var(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo directory of this module's runs."""
    return tmp_path_factory.mktemp("demo") / "var"


def demo_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def processes_using(path: Path) -> list[str]:
    """Command lines of live processes whose environment or arguments mention `path`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            blob = Path(f"/proc/{pid}/environ").read_bytes() + Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if str(path).encode() in blob:
            found.append(
                Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            )
    return found


def picked_ports() -> list[str]:
    """The running demo's ports, picked by the test (the demo's own pick for 0 races other processes)."""
    return [arg for flag in PORTS[::2] for arg in (flag, str(free_port()))]


class DemoRun:
    """`infra/demo.py` in a subprocess; its output lines with the time each arrived."""

    def __init__(self, var: Path, *args: str) -> None:
        self.var = var
        self.lines: list[tuple[float, str]] = []
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "infra" / "demo.py"), *picked_ports(), "--var-dir", str(var), *args],
            cwd=ROOT,
            env=demo_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line))

    @property
    def output(self) -> str:
        return "".join(line for _, line in self.lines)

    def first(self, pattern: str, timeout: float) -> tuple[float, re.Match[str]]:
        """The arrival time and match of the first output line matching `pattern`, waiting for it."""
        until = time.monotonic() + timeout
        while time.monotonic() < until and (self.proc.poll() is None or self.reader.is_alive()):
            for at, line in list(self.lines):
                found = re.search(pattern, line)
                if found:
                    return at, found
            time.sleep(0.2)
        raise AssertionError(f"no line matching {pattern!r} within {timeout:.0f}s:\n{self.output}")

    def feed_ids(self) -> list[int]:
        return [int(m.group(1)) for _, line in self.lines if (m := re.match(r"\s+match\s+(\d+) ", line))]

    def stop(self, timeout: float = 150) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(10)
        return self.proc.returncode

    def query(self, sql: str, *params: object) -> list[tuple]:
        return query(self.var, sql, *params)


def query(var: Path, sql: str, *params: object) -> list[tuple]:
    """Rows from the database of the demo kept under `var`."""
    with sqlite3.connect(var / "ladder.sqlite3", timeout=30) as db:
        return db.execute(sql, params).fetchall()


def wait_until(predicate, timeout: float, what: str) -> float:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {timeout:.0f}s")


def register_bot_on_the_web(base: str, name: str) -> str:
    """Log in as the demo user, register `name` for Expedition on /bots/new/, return the token shown."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def post(path: str, fields: list[tuple[str, str]]) -> str:
        page = opener.open(base + path, timeout=30).read().decode()
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert csrf, page
        body = urllib.parse.urlencode([("csrfmiddlewaretoken", csrf.group(1)), *fields]).encode()
        return opener.open(base + path, data=body, timeout=30).read().decode()

    post("/login/", [("username", "demo"), ("password", "caravanserai-demo")])
    page = post(
        "/bots/new/",
        [("name", name), ("games", "expedition-v1"), ("description", ""), ("max_concurrent", "2")],
    )
    token = re.search(r'<code id="bot-token">([^<]+)</code>', page)
    assert token, page
    return token.group(1)


def start_web_bot(demo: DemoRun, token: str) -> subprocess.Popen[bytes]:
    _, gateway = demo.first(r"gateway\s+(127\.0\.0\.1:\d+)", 5)
    env = demo_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "clients" / "python"), str(ROOT)])
    script = ROOT / "clients" / "python" / "examples" / "random_bot.py"
    argv = [sys.executable, str(script), "--target", gateway.group(1), "--token", token, "--concurrent", "2"]
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ladders_without_done(demo: DemoRun) -> list[str]:
    return [
        slug
        for (slug,) in demo.query(
            "SELECT slug FROM ladders_ladder l WHERE NOT EXISTS"
            " (SELECT 1 FROM matches_match m WHERE m.ladder_id = l.id AND m.status = 'DONE')"
        )
    ]


HOSTED_GOOD = ("demo-hosted-python", "demo-hosted-node")


def hosted_seats(demo: DemoRun, name: str) -> list[list[dict[str, object]]]:
    """The faults of each seat `name` held in a rated match that is DONE."""
    rows = demo.query(
        "SELECT s.faults FROM matches_seat s JOIN matches_match m ON m.id = s.match_id"
        " JOIN bots_bot b ON b.id = s.bot_id WHERE b.name = ? AND m.status = 'DONE' AND m.rated",
        name,
    )
    return [json.loads(faults or "[]") for (faults,) in rows]


def hostile_log(demo: DemoRun) -> str:
    rows = demo.query(
        "SELECT h.log FROM hosting_hostedbot h JOIN bots_bot b ON b.id = h.bot_id WHERE b.name = 'demo-hostile'"
    )
    return rows[0][0] if rows else ""


def check_hosted_bots_keep_their_clock(demo: DemoRun) -> None:
    """Where the demo hosts bots: the good hosted ones play rated matches with no timeout while the hostile
    one spins, forks and allocates next to them (its own report in its log says it did)."""
    line = next((text for _, text in demo.lines if "run in sandboxes" in text), "")
    if not line:
        assert "note: no hosted bots" in demo.output, demo.output
        return
    assert "demo-hostile" in line, line
    good = [name for name in HOSTED_GOOD if name in line]
    wait_until(lambda: all(hosted_seats(demo, name) for name in good), HANG_SECONDS, f"rated {good}")
    killed = re.compile(r"^HOSTILE forked [1-9]\d* .*spinner died \d+, allocator killed [1-9]", re.M)
    wait_until(
        lambda: killed.search(hostile_log(demo)) is not None, HANG_SECONDS, "the hostile bot's memory killed"
    )
    for name in good:
        timeouts = [f for faults in hosted_seats(demo, name) for f in faults if f.get("kind") == "timeout"]
        assert timeouts == [], (name, timeouts)
        print(f"{name}: {len(hosted_seats(demo, name))} rated matches, no timeout, next to demo-hostile")
    print(
        re.findall(r"HOSTILE .*", hostile_log(demo))[-1], f"({len(hosted_seats(demo, 'demo-hostile'))} rated)"
    )


def finished_out_of_order(demo: DemoRun) -> bool:
    """Some DONE match finished after a DONE match with a higher id."""
    ids = [
        pk for (pk,) in demo.query("SELECT id FROM matches_match WHERE status = 'DONE' ORDER BY finished_at")
    ]
    return ids != sorted(ids)


RATED_SQL = (
    "SELECT COUNT(*) FROM matches_seat s JOIN bots_bot b ON b.id = s.bot_id JOIN matches_match m"
    " ON m.id = s.match_id WHERE b.name = ? AND m.status = 'DONE' AND m.rated"
)


def register_in_the_browser(page, base: str, name: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    """As a newcomer does in Chromium: log in, register `name` for Expedition; its id and the Python command
    its token page shows."""
    page.goto(f"{base}/login/")
    page.fill("#id_username", "demo")
    page.fill("#id_password", "caravanserai-demo")
    page.locator("main form button[type=submit]").first.click()
    page.goto(f"{base}/bots/new/")
    page.fill("#id_name", name)
    page.check("input[name=games][value=expedition-v1]")
    page.fill("#id_max_concurrent", "2")
    page.locator("main form button[type=submit]").first.click()
    command = page.locator("#cmd-python-text").inner_text()
    bot_id = int(re.search(r"/bots/(\d+)/", page.url).group(1))  # type: ignore[union-attr]
    return bot_id, command


def run_token_page_command(demo: DemoRun, command: str) -> subprocess.Popen[bytes]:
    """The token page's command, as shown (its `python` is this interpreter, run from the repository)."""
    argv = shlex.split(command)
    assert argv[:2] == ["python", "clients/python/examples/random_bot.py"] and "--concurrent" in argv, argv
    _, gateway = demo.first(r"gateway\s+(127\.0\.0\.1:\d+)", 5)
    assert argv[argv.index("--target") + 1] == gateway.group(1), (argv, gateway.group(1))
    env = demo_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "clients" / "python"), str(ROOT)])
    return subprocess.Popen(
        [sys.executable, *argv[1:]], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def chart_points(page, base: str, bot_id: int) -> int:  # type: ignore[no-untyped-def]
    page.goto(f"{base}/bots/{bot_id}/")
    lines = page.locator("#rating-chart polyline")
    return sum(len((lines.nth(i).get_attribute("points") or "").split()) for i in range(lines.count()))


def check_web_bot(demo: DemoRun, base: str) -> None:
    from playwright.sync_api import sync_playwright

    from tests.ladder.web.conftest import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page()
        bot_id, command = register_in_the_browser(page, base, "web-registered")
        bot = run_token_page_command(demo, command)
        try:
            rated = lambda: demo.query(RATED_SQL, "web-registered")[0][0]  # noqa: E731
            waited = wait_until(lambda: rated() > 0, HANG_SECONDS, "the web bot's first rated result")
            print(f"web-registered bot: first rated result {waited:.1f}s after it was started")
            wait_until(
                lambda: chart_points(page, base, bot_id) >= 1,
                HANG_SECONDS,
                "the first result on the bot's chart",
            )
            first = chart_points(page, base, bot_id)
            assert first >= 1 and page.locator("text=web-registered").count() > 0
            seen = rated()
            wait_until(lambda: rated() > seen, HANG_SECONDS, "a second rated result")
            assert chart_points(page, base, bot_id) > first  # the chart moved with the new result
        finally:
            bot.terminate()
            bot.wait(10)
            browser.close()


def test_demo_never_stalls_and_stops_cleanly_on_sigterm(demo_var):
    demo = DemoRun(demo_var)
    try:
        urls_at, base = demo.first(r"ladders\s+(http://127\.0\.0\.1:\d+)/", HANG_SECONDS)
        first_at, _ = demo.first(r"^\s+match\s+\d+ ", HANG_SECONDS)
        print(f"first match printed {first_at - urls_at:.1f}s after the URLs")
        check_web_bot(demo, base.group(1))
        try:
            wait_until(lambda: not ladders_without_done(demo), HANG_SECONDS, "every ladder rated")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; without a rated match: {ladders_without_done(demo)}") from None
        print(f"every ladder had a rated match {time.monotonic() - urls_at:.0f}s after the URLs")
        wait_until(lambda: finished_out_of_order(demo), HANG_SECONDS, "a match finishing after a later id")
        check_hosted_bots_keep_their_clock(demo)
    finally:
        returncode = demo.stop()
    output = demo.output
    assert returncode == 0, output
    assert "/ladders/mp2-v1-3p-caravans/" in output and "all processes stopped" in output
    done = {pk for (pk,) in demo.query("SELECT id FROM matches_match WHERE status = 'DONE'")}
    printed = demo.feed_ids()
    assert sorted(printed) == sorted(done) and printed != sorted(printed)
    assert f"stopping: {len(done)} matches played" in output
    assert demo.query("SELECT id FROM matches_match WHERE status = 'RUNNING'") == []
    check_logs_and_processes(demo_var)


PUT_BACK = (  # tables a stop finds RUNNING: (ladder, seats); short games, so the restart ends soon
    ("expedition-v1-3p", ("demo-random-py", "demo-greedy-py", "demo-greedy2-py")),
    ("expedition-v1-4p", ("demo-greedy2-py", "demo-random-py", "demo-greedy-py", "house-random")),
    ("expedition-v1-2p", ("demo-greedy-py", "house-random")),
)
PUT_BACK_SCRIPT = """
import importlib.util, sys
import django
django.setup()
from ladder.bots.models import Bot
from ladder.ladders.models import Ladder
from ladder.matches.services import match_create, match_mark_running
spec = importlib.util.spec_from_file_location("demo", "infra/demo.py")
demo = importlib.util.module_from_spec(spec)
sys.modules["demo"] = demo
spec.loader.exec_module(demo)
for slug, names in {tables!r}:
    bots = [Bot.objects.get(name=name).pk for name in names]
    match = match_create(ladder_id=Ladder.objects.get(slug=slug).pk, bot_ids=bots)
    assert match_mark_running(match_id=match.pk)
print(demo.requeue_running_matches())
"""


def put_back_running_matches(var: Path) -> set[int]:
    """What a stop does to the matches its worker could not finish, to tables made RUNNING for it, in the
    demo's own database and broker (the demo's environment, as its processes have it): their ids."""
    env = {**demo_env(), "DJANGO_SETTINGS_MODULE": "ladder.settings.base", "CARAVANSERAI_DEMO": "1"}
    env.update(CARAVANSERAI_VAR_DIR=str(var), PYTHONPATH=str(ROOT))
    script = PUT_BACK_SCRIPT.format(tables=PUT_BACK)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_stop_and_start_replays_the_matches_the_stop_put_back(demo_var):
    """Matches a stop put back (RUNNING when its worker stopped: QUEUED, unrated, sent again) are played at
    the next start, each once and rated then, none cancelled: the demo keeps its bots' tokens and starts the
    match worker once they are connected. A demo on a quiet machine often finishes every match in its warm
    shutdown, so the test puts tables back itself, through the demo's own `requeue_running_matches`, in the
    directory the SIGTERM test's demo stopped in. Run alone, the test sets the directory up with a run of
    its own that stops by itself: its `--minutes` are up as soon as it has started."""
    var = demo_var
    if not (var / "ladder.sqlite3").exists():
        demo = DemoRun(var, "--no-node", "--no-hosted", "--minutes", "0.05")
        demo.proc.wait(240)  # no signal: it stops by itself
        assert demo.stop() == 0, demo.output
        check_stopped_by_itself(demo)
    put_back = put_back_running_matches(var)
    marks = ",".join("?" * len(put_back))
    assert len(put_back) == len(PUT_BACK)
    assert query(var, f"SELECT DISTINCT status FROM matches_match WHERE id IN ({marks})", *put_back) == [
        ("QUEUED",)
    ]

    again = DemoRun(var, "--no-node", "--no-hosted")  # the hosted bots are the SIGTERM test's part
    try:
        again.first(r"ladders\s+(http://127\.0\.0\.1:\d+)/", HANG_SECONDS)
        over = f"SELECT COUNT(*) FROM matches_match WHERE id IN ({marks}) AND status IN ('DONE', 'ERROR', 'CANCELLED')"
        waited = wait_until(
            lambda: again.query(over, *put_back)[0][0] == len(put_back), HANG_SECONDS, "put-back matches over"
        )
    finally:
        assert again.stop() == 0, again.output
    print(f"\nput back {sorted(put_back)}: all over {waited:.0f}s after the restart's URLs")
    statuses = again.query(f"SELECT id, status, error FROM matches_match WHERE id IN ({marks})", *put_back)
    assert [row for row in statuses if row[1] != "DONE"] == []
    rated = again.query(
        f"SELECT m.id, (SELECT COUNT(*) FROM matches_seat s WHERE s.match_id = m.id),"
        f" (SELECT COUNT(*) FROM ratings_ratingledger r WHERE r.match_id = m.id)"
        f" FROM matches_match m WHERE m.id IN ({marks})",
        *put_back,
    )
    assert all(seats == ledger for _, seats, ledger in rated), rated  # each seat rated, once
    assert "cancelled" not in " ".join(error for _, _, error in statuses)
    check_logs_and_processes(var)


def check_logs_and_processes(var: Path) -> None:
    logs = {p.name: p.read_text(errors="replace") for p in (var / "demo" / "logs").glob("*.log")}
    assert {"worker.log", "scheduler.log", "beat.log"} <= set(logs)
    for name in ("worker.log", "scheduler.log"):
        assert "Discarding revoked task" not in logs[name] and "expired" not in logs[name], logs[name]
    assert (var / "ladder.sqlite3").exists() and (var / "celery-broker.sqlite3").exists()
    assert processes_using(var) == []


def check_stopped_by_itself(demo: DemoRun) -> None:
    """A demo run with `--minutes` stopped on its own, its feed naming every finished match."""
    output = demo.output
    assert "matches played in" in output and "all processes stopped" in output
    assert "demo-random-node" not in output
    assert demo.query("SELECT id FROM matches_match WHERE status = 'RUNNING'") == []
    assert (
        len(demo.feed_ids()) == demo.query("SELECT COUNT(*) FROM matches_match WHERE status = 'DONE'")[0][0]
    )
    assert processes_using(demo.var) == []


def load_demo_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("caravanserai_demo", ROOT / "infra" / "demo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.django_db
def test_a_stop_puts_the_running_matches_back_to_queued_and_sends_them_again(monkeypatch):
    from ladder.bots.services import house_bot_ensure
    from ladder.ladders.services import ladder_create
    from ladder.matches.models import Match, MatchStatus
    from ladder.matches.services import match_create, match_mark_running
    from workers.celery_app import app

    ladder = ladder_create(game_id="expedition-v1", num_players=2)
    bots = [house_bot_ensure(policy=p).pk for p in ("random", "greedy")]
    running, waiting = (match_create(ladder_id=ladder.pk, bot_ids=bots) for _ in range(2))
    assert match_mark_running(match_id=running.pk)
    sent: list[tuple[str, list[int]]] = []
    monkeypatch.setattr(app, "send_task", lambda name, args: sent.append((name, args)))
    demo = load_demo_module()
    assert demo.requeue_running_matches() == [running.pk]
    running.refresh_from_db()
    assert running.status == MatchStatus.QUEUED and demo.REQUEUE_REASON in running.error
    assert running.ladder.ratings.filter(games__gt=0).count() == 0
    assert sent == [("matches.run_match", [running.pk])]
    assert Match.objects.get(pk=waiting.pk).status == MatchStatus.QUEUED


def demo_for(module, var: Path):  # type: ignore[no-untyped-def]
    return module.Demo(module.build_parser().parse_args(["--var-dir", str(var), *PORTS]))


@pytest.mark.django_db
def test_a_restart_keeps_the_demo_bots_tokens_so_their_waiting_matches_stay_queued(tmp_path, monkeypatch):
    """The cause of 13 put-back matches of 17 cancelled at the next start: a fresh token each run revoked the
    old one, and a revoked token cancels the bot's matches not yet started."""
    from ladder.bots.models import Bot
    from ladder.bots.services import house_bot_ensure
    from ladder.ladders.services import ladder_create
    from ladder.matches.models import Match, MatchStatus
    from ladder.matches.services import match_create, match_mark_running
    from workers.celery_app import app

    monkeypatch.setattr(app, "send_task", lambda name, args: None)
    demo = load_demo_module()
    first = demo_for(demo, tmp_path).bot_token("demo-random-py")
    bot = Bot.objects.get(name="demo-random-py")
    ladder = ladder_create(game_id="expedition-v1", num_players=2)
    house = house_bot_ensure(policy="random")
    running, waiting = (match_create(ladder_id=ladder.pk, bot_ids=[bot.pk, house.pk]) for _ in range(2))
    assert match_mark_running(match_id=running.pk)
    assert demo.requeue_running_matches() == [running.pk]  # the stop

    assert demo_for(demo, tmp_path).bot_token("demo-random-py") == first  # the next start
    statuses = set(Match.objects.filter(pk__in=[running.pk, waiting.pk]).values_list("status", flat=True))
    assert statuses == {MatchStatus.QUEUED}
    tokens = tmp_path / "demo" / "tokens.json"
    assert tokens.stat().st_mode & 0o777 == 0o600

    tokens.write_text('{"demo-random-py": "cvs_not-a-token-of-this-bot"}')  # lost or replaced
    fresh = demo_for(demo, tmp_path).bot_token("demo-random-py")
    assert fresh != first and json.loads(tokens.read_text()) == {"demo-random-py": fresh}


def test_the_match_worker_starts_once_the_demo_bots_are_connected(tmp_path, monkeypatch):
    demo = load_demo_module()
    run = demo_for(demo, tmp_path)
    order: list[str] = []
    for step in ("setup_django", "start_services", "start_workers", "print_urls"):
        monkeypatch.setattr(run, step, lambda *a, step=step: order.append(step))
    monkeypatch.setattr(run, "prepare_database", lambda: [("demo-random-py", "t1"), ("demo-greedy-py", "t2")])
    monkeypatch.setattr(run, "prepare_hosted", lambda: ["hosted-python"])
    monkeypatch.setattr(run, "start_bot_host", lambda hosted: order.append(f"bot host {hosted}"))
    monkeypatch.setattr(run, "start_bots", lambda tokens: order.append(f"bots {[n for n, _ in tokens]}"))
    monkeypatch.setattr(run, "wait_for_bots", lambda names: order.append(f"wait {names}"))
    monkeypatch.setattr(run, "start_tournament", lambda: order.append("tournament") or None)
    run.start()
    assert order == [
        "setup_django", "start_services", "bot host ['hosted-python']", "bots ['demo-random-py', 'demo-greedy-py']",
        "wait ['demo-random-py', 'demo-greedy-py', 'hosted-python']", "start_workers", "tournament", "print_urls",
    ]  # fmt: skip


class FakeClock:
    """`time` for the demo module: sleeping moves the clock on at once."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _ended(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"  # ended, not yet reaped
    except (FileNotFoundError, ProcessLookupError):
        return True


def test_a_demo_killed_outright_takes_its_children_with_it(tmp_path):
    """No stop runs after a SIGKILL: each child the demo starts is armed to get SIGTERM when the demo ends,
    so no worker, gateway or bot keeps playing on alone (one once ran for 90 minutes after a test's demo)."""
    parent = subprocess.Popen(
        [sys.executable, "-c", _SPAWNER, str(ROOT / "infra" / "demo.py"), str(tmp_path / "sleeper.log")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert not _ended(child)
    parent.kill()
    parent.wait(HANG_SECONDS)
    deadline = time.monotonic() + HANG_SECONDS
    while not _ended(child):
        assert time.monotonic() < deadline, f"the demo's child {child} outlived it"
        time.sleep(0.05)


# A stand-in for the demo: starts one Child the demo's way, prints its pid, then waits to be killed.
_SPAWNER = """
import importlib.util, os, sys, time
spec = importlib.util.spec_from_file_location("caravanserai_demo", sys.argv[1])
demo = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = demo
spec.loader.exec_module(demo)
argv = [sys.executable, "-c", "import time; time.sleep(600)"]
child = demo.Child("sleeper", argv, demo.Path(sys.argv[2]), dict(os.environ)).start()
print(child.proc.pid, flush=True)
time.sleep(600)
"""


def test_minutes_end_the_watch_at_the_deadline_and_stop_as_a_signal_would(tmp_path, monkeypatch):
    """`--minutes` with no signal: the feed is watched until the deadline, then the stop a SIGTERM runs
    (played through in full by the SIGTERM test; the restart test, run alone, runs a whole `--minutes`)."""
    demo = load_demo_module()
    run = demo.Demo(demo.build_parser().parse_args(["--var-dir", str(tmp_path), *PORTS, "--minutes", "0.05"]))
    clock = FakeClock()
    monkeypatch.setattr(demo, "time", clock)
    handlers: list[tuple[int, object]] = []
    monkeypatch.setattr(demo.signal, "signal", lambda sig, handler: handlers.append((sig, handler)))
    polls: list[float] = []

    class Feed:
        def poll(self, say: object) -> int:
            polls.append(clock.now)
            return 0

    monkeypatch.setattr(run, "start", lambda: setattr(run, "feed", Feed()))
    stops: list[bool] = []
    monkeypatch.setattr(run, "stop_all", lambda: stops.append(run.stopping))
    said: list[str] = []
    monkeypatch.setattr(run, "say", said.append)
    assert run.run() == 0
    assert polls == [0.0, 1.0, 2.0] and stops == [False]  # 3 s, and no signal came
    assert said == ["stopping", "all processes stopped"]
    assert (signal.SIGTERM, run._on_signal) in handlers and (signal.SIGTERM, signal.SIG_IGN) in handlers


@pytest.mark.django_db
def test_waiting_for_the_bots_ends_when_they_are_connected_or_says_who_is_not(tmp_path, monkeypatch):
    from django.contrib.auth import get_user_model

    from ladder.bots.services import bot_create

    owner = get_user_model().objects.create_user("demo-owner")
    ids = {bot_create(owner=owner, name=n, games=["expedition-v1"])[0].pk: n for n in ("b-one", "b-two")}
    demo = load_demo_module()
    run = demo_for(demo, tmp_path)
    answers = [["b-one", "b-two"], ["b-two"], []]  # what the registry shows, call after call
    seen: list[dict[int, str]] = []
    monkeypatch.setattr(demo, "bots_not_connected", lambda bot_ids: seen.append(bot_ids) or answers.pop(0))
    monkeypatch.setattr(demo.time, "sleep", lambda seconds: None)
    said: list[str] = []
    monkeypatch.setattr(run, "say", said.append)
    run.wait_for_bots(["b-one", "b-two"])
    assert answers == [] and seen[0] == ids and said == []
    monkeypatch.setattr(demo, "bots_not_connected", lambda bot_ids: ["b-two"])
    monkeypatch.setattr(demo, "BOTS_CONNECT_SECONDS", 0.0)
    run.wait_for_bots(["b-one", "b-two"])
    assert said == ["note: not connected after 0s, starting anyway: ['b-two']"]


def test_demo_refuses_bad_arguments():
    result = subprocess.run(
        [sys.executable, str(ROOT / "infra" / "demo.py"), "--minutes", "-1"], capture_output=True, text=True
    )
    assert result.returncode == 2 and "--minutes must be positive" in result.stderr
