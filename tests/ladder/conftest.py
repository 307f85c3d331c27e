"""Fixtures for the ladder's tests: users, API clients, ladders, bots, real match records made by the
referee with seeded house policies (kept across test processes: a record depends only on its inputs and the
code that plays it), and rows a module's tests share (`module_db`)."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, TypeVar

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import transaction
from rest_framework.test import APIClient

import engine_service
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, run_match
from ladder.bots.models import Bot
from ladder.bots.services import bot_create, house_bot_ensure
from ladder.ladders.models import Ladder
from ladder.ladders.services import ladder_create
from ladder.matches.models import Match
from ladder.matches.services import match_create, match_mark_running, match_record_result

T = TypeVar("T")
FULL_SERIES = os.environ.get("CARAVANSERAI_FULL_SERIES") == "1"


def series(suite: T, full: T) -> T:
    """A randomized series' size: `suite` in the suite, `full` when CARAVANSERAI_FULL_SERIES=1 (as
    `python -m bench ladder_series` runs it). A suite size keeps the seeds fixed and still reaches every case
    its test names."""
    return full if FULL_SERIES else suite


def clear_test_cache() -> None:
    """Empty this test process's cache keys only (Redis may be shared with other runs)."""
    backend = settings.CACHES["default"]["BACKEND"]
    if backend.endswith("RedisCache"):
        client = cache._cache.get_client(write=True)
        prefix = settings.CACHES["default"]["KEY_PREFIX"]
        keys = list(client.scan_iter(match=f"{prefix}:*", count=500))
        if keys:
            client.delete(*keys)
    else:
        cache.clear()


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_test_cache()
    yield
    clear_test_cache()


# Records made by earlier test processes (the suite's other xdist processes, its SQLite run after its PostgreSQL
# one), kept per version of the code that plays them: a record depends only on its inputs and that code.
RECORDS = Path(tempfile.gettempdir()) / "caravanserai-test-records"
PLAYING_CODE = [Path(engine_service.__file__).parent / part for part in ("games", "policies", "referee")]


KEPT_SECONDS = 2 * 86400  # records of other versions of the code untouched this long are removed


@lru_cache(maxsize=1)
def _playing_code_digest() -> str:
    """A digest of every file of the rules, the house policies and the referee, and of Python's version
    (records kept for other digests and untouched for KEPT_SECONDS are removed on the way)."""
    digest = hashlib.sha256(sys.version.encode())
    for folder in PLAYING_CODE:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(folder.parent)).encode() + b"\0" + path.read_bytes())
    name = digest.hexdigest()[:16]
    with contextlib.suppress(OSError):
        for old in RECORDS.iterdir():
            if old.name != name and old.stat().st_mtime < time.time() - KEPT_SECONDS:
                shutil.rmtree(old, ignore_errors=True)
    return name


@lru_cache(maxsize=256)
def _record_json(
    game_id: str, num_players: int, seed: int, options_key: tuple, policies: tuple[str, ...]
) -> str:
    inputs = repr((game_id, num_players, seed, options_key, policies)).encode()
    path = RECORDS / _playing_code_digest() / f"{hashlib.sha256(inputs).hexdigest()[:32]}.json"
    with contextlib.suppress(OSError):
        return path.read_text()
    seats = [HouseSeat(make_policy(p, seed=seed * 10 + i)) for i, p in enumerate(policies)]
    text = run_match(game_id, num_players, seed, seats, dict(options_key)).dumps()
    with contextlib.suppress(OSError):  # a record not kept is played again next time
        path.parent.mkdir(parents=True, exist_ok=True)
        written = path.with_name(f"{path.name}.{os.getpid()}")
        written.write_text(text)
        os.replace(written, path)  # whole or not at all, for a process reading it meanwhile
    return text


def make_record(match: Match, policies: tuple[str, ...] | None = None) -> MatchRecord:
    """A real, verifiable record for `match` (its ladder's game, players, options and seed)."""
    ladder = match.ladder
    policies = policies or ("random",) * ladder.num_players
    text = _record_json(
        ladder.game_id, ladder.num_players, match.seed, tuple(sorted(ladder.options.items())), policies
    )
    record = MatchRecord.loads(text)
    record.match_id = str(match.pk)
    return record


class _MidMinute:
    """A clock 30 s into a minute: the web logins' attempts are counted in fixed windows (a minute at the
    test's rates), and a test's attempts must not straddle two."""

    @staticmethod
    def time() -> float:
        return 1_800_000_030.0


@pytest.fixture
def auth_window(monkeypatch) -> None:
    """The web and admin logins' throttle on a clock that stands 30 s into a window."""
    from ladder.core import throttles

    monkeypatch.setattr(throttles, "time", _MidMinute)


@pytest.fixture(scope="module")
def module_db(request, django_db_setup, django_db_blocker) -> Iterator[None]:
    """One transaction around a module's tests, for rows they share: module-scoped fixtures that use this one
    make their rows once, each test sees them and its own writes roll back at its end (to a savepoint, as with
    Django's `TestCase.setUpTestData`), and the shared rows roll back after the module's last test. Tests of
    the module that do not use the rows run before the first that does (file order) and make them in their
    own transaction; none may make rows of the same names while they last (a second `alice`, a second ladder
    of one slug). The module has no transactional tests: pytest-django runs those after the others, which
    would put them inside this transaction. A module that uses it is one xdist group
    (`pytest.mark.xdist_group`), so its rows are made once."""
    transactional = [
        item.name for item in request.session.items if item.path == request.path and _commits(item)
    ]
    assert not transactional, f"transactional tests beside rows shared in one transaction: {transactional}"
    with django_db_blocker.unblock(), transaction.atomic():
        yield
        transaction.set_rollback(True)


def _commits(item: pytest.Item) -> bool:
    """Whether a test is a transactional one (its writes commit)."""
    marker = item.get_closest_marker("django_db")
    marked = marker is not None and marker.kwargs.get("transaction", bool(marker.args and marker.args[0]))
    return bool(marked) or bool({"transactional_db", "live_server"} & set(getattr(item, "fixturenames", ())))


def alice() -> User:
    return get_user_model().objects.create_user("alice", password="correct-horse-battery")


@pytest.fixture
def user(db):
    return alice()


@pytest.fixture
def other_user(db):
    return get_user_model().objects.create_user("bob", password="correct-horse-battery")


@pytest.fixture
def staff_user(db):
    return get_user_model().objects.create_user("olga", password="correct-horse-battery", is_staff=True)


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def alice_api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def bob_api(other_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(other_user)
    return client


@pytest.fixture
def ladder2(db) -> Ladder:
    return ladder_create(game_id="expedition-v1", num_players=2)


@pytest.fixture
def ladder4(db) -> Ladder:
    return ladder_create(game_id="expedition-v1", num_players=4)


def bot_factory(user: User) -> Callable[..., Bot]:
    """Bots made through `bot_create`, owned by `user` unless told otherwise, named bot-1, bot-2, ..."""
    numbers = itertools.count(1)

    def factory(owner=None, name: str | None = None, games=("expedition-v1",), **kwargs) -> Bot:
        number = next(numbers)
        bot, _token = bot_create(
            owner=owner or user, name=name or f"bot-{number}", games=list(games), **kwargs
        )
        return bot

    return factory


@pytest.fixture
def make_bot(db, user) -> Callable[..., Bot]:
    return bot_factory(user)


@pytest.fixture
def house_bots(db) -> list[Bot]:
    return [house_bot_ensure(policy=p) for p in ("random", "greedy", "mcts:5", "mcts:10", "mcts:20")]


@pytest.fixture
def quick_house_bots(db) -> list[Bot]:
    """Five house bots of the quickest policies (random, greedy, and searches of 1 to 3 iterations): for
    tests of what the ladder does with house matches, not of how well the house plays."""
    return [house_bot_ensure(policy=p) for p in ("random", "greedy", "mcts:1", "mcts:2", "mcts:3")]


class Field(NamedTuple):
    """Rows a module's tests share (`module_db`): the 2- and 4-seat expedition ladders and alice's bots."""

    ladder2: Ladder
    ladder4: Ladder
    owner: User
    bots: list[Bot]


def field(bots: int, name: str = "") -> Field:
    """alice, the 2- and 4-seat expedition ladders and `bots` bots of hers (named `name` and their index,
    else bot-1, bot-2, ...)."""
    owner = alice()
    make_bot = bot_factory(owner)
    return Field(
        ladder_create(game_id="expedition-v1", num_players=2),
        ladder_create(game_id="expedition-v1", num_players=4),
        owner,
        [make_bot(name=f"{name} {i}" if name else None) for i in range(bots)],
    )


def play(ladder: Ladder, bots: list[Bot], seed: int, *, mark_running: bool = True) -> Match:
    """Create a match, and record a real result for it."""
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=seed)
    if mark_running:
        assert match_mark_running(match_id=match.pk)
    assert match_record_result(match_id=match.pk, record=make_record(match))
    match.refresh_from_db()
    return match
