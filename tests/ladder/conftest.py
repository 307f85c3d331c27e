"""Fixtures for the ladder's tests: users, API clients, ladders, bots, and real match records made by the
referee with seeded house policies (cached per process: a record depends only on its inputs)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from rest_framework.test import APIClient

from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, run_match
from ladder.bots.models import Bot
from ladder.bots.services import bot_create, house_bot_ensure
from ladder.ladders.models import Ladder
from ladder.ladders.services import ladder_create
from ladder.matches.models import Match
from ladder.matches.services import match_create, match_mark_running, match_record_result


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


@lru_cache(maxsize=256)
def _record_json(
    game_id: str, num_players: int, seed: int, options_key: tuple, policies: tuple[str, ...]
) -> str:
    seats = [HouseSeat(make_policy(p, seed=seed * 10 + i)) for i, p in enumerate(policies)]
    record = run_match(game_id, num_players, seed, seats, dict(options_key))
    return record.dumps()


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


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("alice", password="correct-horse-battery")


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


@pytest.fixture
def make_bot(db, user) -> Callable[..., Bot]:
    counter = {"n": 0}

    def factory(owner=None, name: str | None = None, games=("expedition-v1",), **kwargs) -> Bot:
        counter["n"] += 1
        bot, _token = bot_create(
            owner=owner or user, name=name or f"bot-{counter['n']}", games=list(games), **kwargs
        )
        return bot

    return factory


@pytest.fixture
def house_bots(db) -> list[Bot]:
    return [house_bot_ensure(policy=p) for p in ("random", "greedy", "mcts:5", "mcts:10", "mcts:20")]


def play(ladder: Ladder, bots: list[Bot], seed: int, *, mark_running: bool = True) -> Match:
    """Create a match, and record a real result for it."""
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=seed)
    if mark_running:
        assert match_mark_running(match_id=match.pk)
    assert match_record_result(match_id=match.pk, record=make_record(match))
    match.refresh_from_db()
    return match
