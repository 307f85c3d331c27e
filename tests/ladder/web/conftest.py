"""Browser fixtures: Debian's headless Chromium driven by Playwright, the page tests drive in it, the matches
they show, and where screenshots go (test-artifacts/, git-ignored).

A module's tests share one Chromium and one page in it (`page`): a new page starts a renderer process from
nothing, with no compiled script in its cache, and loading the viewer there costs about three times a load in
a page that has had it before. `page` lends the module's page to a test at the desktop size and without
cookies; after the test the handlers it added are removed and the page rests on a static file, so no poll or
timer of the site runs on. A module marked `pytest.mark.xdist_group` keeps its tests in one process under
xdist (tests/conftest.py), so they share them; elsewhere the consecutive tests of a module in one process do.

Playwright runs in a thread of its own, driven through `Remote` proxies: its sync API keeps an event loop
marked as running in the thread that calls it, where Django refuses the ORM (SynchronousOnlyOperation); so
data fixtures and a test's own ORM calls run in the test's thread as in any other test.

Chromium runs without its zygote (its renderers are then its own children, reaped by it), and the test
process adopts what it leaves running when its browser process exits (`adopting_chromium`): renderers
still closing, the GPU process, its crash handlers. Left to init, they would be reaped there and the CPU they
used never counted as the test process's children's (with the zygote, every renderer was left to init).

The matches the viewer's modules show (`record_match`, `live_match`) are played by greedy house policies,
from records made once in a test run (`RunRecords`): the modules show the same games (`SEED`)."""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine_service.referee import MatchRecord
from ladder.ladders.services import ladder_create
from ladder.matches.models import Match
from ladder.matches.services import match_create, match_mark_running, match_record_result
from ladder.replays.services import live_progress_publish
from tests.ladder.conftest import make_record

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--no-zygote",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
DESKTOP = {"width": 1200, "height": 1000}
PHONE = {"width": 390, "height": 844}
RESTING_PAGE = "/static/web/favicon.svg"  # where the page waits between tests: no script, no request
SEED = 11  # of the recorded matches (`record_match`)
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37  # prctl(2)
REAP_SECONDS = 10  # for Chromium's processes to end once its browser process has; then they are killed


@contextmanager
def adopting_chromium() -> Iterator[None]:
    """While inside, this process adopts its descendants' orphans (a Linux child subreaper); on the way out
    it waits for the Chromium processes it adopted and reaps them."""
    libc = ctypes.CDLL(None, use_errno=True)
    before = ctypes.c_int()
    libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(before), 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield
    finally:
        deadline = time.monotonic() + REAP_SECONDS
        while adopted := _chromium_children():
            for pid in adopted:
                with suppress(ProcessLookupError, ChildProcessError):
                    if time.monotonic() > deadline:
                        os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, os.WNOHANG)
            time.sleep(0.05)
        libc.prctl(PR_SET_CHILD_SUBREAPER, before.value, 0, 0, 0)


def _chromium_children() -> list[int]:
    pids = []
    for task in Path("/proc/self/task").iterdir():
        with suppress(FileNotFoundError):  # a thread or a child gone meanwhile
            for pid in (task / "children").read_text().split():
                if Path(f"/proc/{pid}/comm").read_text().startswith("chrom"):  # chromium, chrome_crashpad...
                    pids.append(int(pid))
    return pids


@contextmanager
def launched() -> Iterator[Any]:
    """Chromium, driven by Playwright's sync API from the calling thread (where Django then refuses the ORM:
    see the module's docstring)."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with adopting_chromium(), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


class PlaywrightThread:
    """One thread that makes every Playwright call (its sync API is bound to the thread that started it)."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="playwright")
        self._ident = self._pool.submit(threading.get_ident).result()

    def call(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == self._ident:  # an event handler, already in the thread
            return fn(*args, **kwargs)
        return self._pool.submit(fn, *args, **kwargs).result()

    def close(self) -> None:
        self._pool.shutdown()


class Remote:
    """A Playwright object (browser, page, locator, keyboard...) used from another thread: reading an
    attribute and calling a method run in the Playwright thread, and Playwright objects come back as
    `Remote`s too. Event handlers run in the Playwright thread, with Playwright's own objects."""

    __slots__ = ("_target", "_thread")

    def __init__(self, thread: PlaywrightThread, target: Any) -> None:
        self._thread = thread
        self._target = target

    def __getattr__(self, name: str) -> Any:
        value = self._thread.call(getattr, self._target, name)
        if not callable(value):
            return self._wrap(value)

        def method(*args: Any, **kwargs: Any) -> Any:
            args = tuple(a._target if isinstance(a, Remote) else a for a in args)
            kwargs = {k: v._target if isinstance(v, Remote) else v for k, v in kwargs.items()}
            return self._wrap(self._thread.call(value, *args, **kwargs))

        return method

    def _wrap(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self._wrap(v) for v in value]
        if type(value).__module__.startswith("playwright."):
            return Remote(self._thread, value)
        return value

    def __repr__(self) -> str:
        return f"Remote({self._target!r})"


class Tab(Remote):
    """The module's page: it keeps the handlers a test adds (`on`), to remove them after the test."""

    __slots__ = ("_handlers",)

    def __init__(self, page: Remote) -> None:
        super().__init__(page._thread, page._target)
        self._handlers: list[tuple[str, Callable[..., Any]]] = []

    def on(self, event: str, handler: Callable[..., Any]) -> None:
        self._handlers.append((event, handler))
        self._thread.call(self._target.on, event, handler)

    def remove_handlers(self) -> None:
        for event, handler in self._handlers:
            self._thread.call(self._target.remove_listener, event, handler)
        self._handlers.clear()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Remote]:
    """Chromium for the module's tests, driven from its own thread."""
    thread, stack = PlaywrightThread(), ExitStack()
    try:
        yield Remote(thread, thread.call(stack.enter_context, launched()))
    finally:
        thread.call(stack.close)
        thread.close()


@pytest.fixture(scope="module")
def context_options() -> dict[str, Any]:
    """Options of the module's browser context (a module overrides this fixture to set some)."""
    return {}


@pytest.fixture(scope="module")
def tab(chromium: Remote, context_options: dict[str, Any]) -> Iterator[Tab]:
    """The module's page."""
    context = chromium.new_context(viewport=DESKTOP, **context_options)
    yield Tab(context.new_page())
    context.close()


@pytest.fixture
def page(tab: Tab, live_server: Any) -> Iterator[Tab]:
    """The module's page for this test (see the module's docstring); it rests on a static file of the live
    server, on the same site: the renderer stays."""
    tab.set_viewport_size(DESKTOP)
    yield tab
    tab.remove_handlers()
    tab.goto(f"{live_server.url}{RESTING_PAGE}")
    tab.context.clear_cookies()


def open_as(page: Any, live_server: Any, session: str | None, path: str) -> None:
    """Opens `path` of the live server in `page`, signed in with the session key `session` (None: signed
    out); the page's other cookies go."""
    page.context.clear_cookies()
    if session:
        host = live_server.url.split("//", 1)[1].split(":", 1)[0]
        page.context.add_cookies([{"name": "sessionid", "value": session, "domain": host, "path": "/"}])
    page.goto(f"{live_server.url}{path}")


@dataclass
class Recorded:
    pk: int
    steps: int
    players: int
    names: list[str]
    winner: str


class RunRecords:
    """Records of matches among greedy house policies, each made once in a test run: the first process of
    the run that needs one writes it in the run's temporary directory (shared by its xdist processes), and
    the others read it there. A record depends on its inputs only (`make_record`)."""

    def __init__(self, root: Path) -> None:
        self._root = root

    def record(self, match: Match) -> MatchRecord:
        """`make_record(match)` with a greedy house policy in every seat."""
        ladder = match.ladder
        inputs = json.dumps([ladder.game_id, ladder.num_players, match.seed, ladder.options], sort_keys=True)
        path = self._root / f"record-{hashlib.sha256(inputs.encode()).hexdigest()[:16]}.json"
        with path.with_suffix(".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one process makes it while the others wait
            if not path.exists():
                path.write_text(make_record(match, ("greedy",) * ladder.num_players).dumps())
        record = MatchRecord.loads(path.read_text())
        record.match_id = str(match.pk)
        return record


@pytest.fixture(scope="session")
def run_records(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> RunRecords:
    root = tmp_path_factory.getbasetemp()  # an xdist process's is in the run's
    return RunRecords(root if worker_id == "master" else root.parent)


@pytest.fixture
def record_match(make_bot: Callable[..., Any], run_records: RunRecords) -> Callable[..., Recorded]:
    """Makes a finished match of `game_id` (a new ladder, new bots), played by greedy house policies."""

    def make(game_id: str, players: int, options: dict[str, Any] | None = None, seed: int = SEED) -> Recorded:
        ladder = ladder_create(game_id=game_id, num_players=players, options=options or {})
        bots = [make_bot(name=f"{game_id[:4]} bot {i}", games=(game_id,)) for i in range(players)]
        match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=seed)
        assert match_mark_running(match_id=match.pk)
        assert match_record_result(match_id=match.pk, record=run_records.record(match))
        match.refresh_from_db()
        winner = match.seats.filter(rank=1).order_by("index").first()
        return Recorded(match.pk, match.steps, players, [b.name for b in bots], winner.bot.name)

    return make


@pytest.fixture
def live_match(
    make_bot: Callable[..., Any], run_records: RunRecords
) -> Callable[..., tuple[Match, MatchRecord]]:
    """Makes a running two-player match of `game_id` (new bots) whose first `published` actions, of a record
    played by greedy house policies, are published as the worker does (with `clocks`); returns the match and
    that record."""

    def make(
        game_id: str, seed: int, published: int, clocks: dict[int, list[float | None]] | None = None
    ) -> tuple[Match, MatchRecord]:
        ladder = ladder_create(game_id=game_id, num_players=2)
        bots = [make_bot(name=f"live {i}", games=(game_id,)) for i in range(2)]
        match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=seed)
        assert match_mark_running(match_id=match.pk)
        record = run_records.record(match)
        assert live_progress_publish(match_id=match.pk, actions=record.actions[:published], clocks=clocks)
        return match, record

    return make
