"""The Django verifier's token checks off the event loop: the tokens waiting at once are one batch on the
lookup thread, a token found is remembered until its bot's revocation, and a database failure fails the
checks waiting and remembers nothing."""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.contrib.auth import get_user_model

from engine_service.gateway import django_auth
from engine_service.gateway.django_auth import DjangoVerifier
from ladder.bots.services import bot_create
from tests.engine_service.gateway.harness import GAME

pytestmark = pytest.mark.django_db(transaction=True)  # the lookups run on the verifier's own thread


@pytest.fixture
def tokens() -> dict[str, str]:
    owner = get_user_model().objects.create_user("batch-owner", password="pw-batch-owner")
    made = [bot_create(owner=owner, name=f"Batch {i}", games=[GAME]) for i in range(12)]
    return {token: str(bot.pk) for bot, token in made}


def recording(monkeypatch: pytest.MonkeyPatch, verifier: DjangoVerifier, total: int) -> list[int]:
    """Record each batch's size; the first batch waits until every one of `total` checks is in it or queued
    behind it."""
    sizes: list[int] = []
    real = django_auth._lookup_many

    def lookup(batch: list[str]) -> dict[str, object]:
        if not sizes:
            while len(batch) + verifier._queue.qsize() < total:
                threading.Event().wait(0.005)
        sizes.append(len(batch))
        return real(batch)  # type: ignore[return-value]

    monkeypatch.setattr(django_auth, "_lookup_many", lookup)
    return sizes


def test_checks_waiting_at_once_are_one_batch_and_found_tokens_are_remembered(
    tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    verifier = DjangoVerifier()
    asked = [*tokens, "not-a-token"]
    sizes = recording(monkeypatch, verifier, total=len(asked))

    async def check_all() -> list[str | None]:
        found = await asyncio.gather(*(verifier.verify(t) for t in asked))
        return [i.bot_id if i else None for i in found]

    assert asyncio.run(check_all()) == [*tokens.values(), None]
    assert len(sizes) == 2 and sum(sizes) == len(asked)  # the first, then every check queued meanwhile
    assert asyncio.run(check_all()) == [*tokens.values(), None]
    assert len(sizes) == 3 and sizes[-1] == 1  # only the unknown token asked again
    token, bot_id = next(iter(tokens.items()))
    verifier.forget(bot_id)  # a revocation polled from the registry
    assert asyncio.run(verifier.verify(token)) is not None and sizes[-1] == 1 and len(sizes) == 4


def test_a_database_failure_fails_the_waiting_checks_and_is_not_remembered(
    tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    verifier = DjangoVerifier()
    real = django_auth._lookup_many

    def down(batch: list[str]) -> dict[str, object]:
        raise RuntimeError("the database is down")

    monkeypatch.setattr(django_auth, "_lookup_many", down)
    token = next(iter(tokens))
    with pytest.raises(RuntimeError, match="database is down"):
        asyncio.run(verifier.verify(token))
    monkeypatch.setattr(django_auth, "_lookup_many", real)
    identity = asyncio.run(verifier.verify(token))
    assert identity is not None and identity.bot_id == tokens[token]


def test_a_verifier_made_cold_warms_up_on_its_first_check(tokens: dict[str, str]) -> None:
    verifier = DjangoVerifier(warm=False)  # as the gateway makes it: Django is set up once it serves
    token, bot_id = next(iter(tokens.items()))
    identity = asyncio.run(verifier.verify(token))
    assert identity is not None and identity.bot_id == bot_id
