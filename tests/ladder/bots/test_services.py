"""Bot services and selectors: registration, tokens, identity lookup, revocation signal, house bots."""

from __future__ import annotations

import hashlib

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from ladder.bots import selectors, services
from ladder.bots.models import Bot

pytestmark = pytest.mark.django_db


def test_create_stores_only_the_token_hash(user):
    bot, token = services.bot_create(owner=user, name="Marco", games=["expedition-v1"], description="hi")
    assert token.startswith(services.TOKEN_PREFIX) and len(token) > 30
    bot.refresh_from_db()
    assert bot.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(Bot.objects.filter(pk=bot.pk).values().get())
    assert bot.token_hint == token[:8]


def test_identity_for_token(user):
    bot, token = services.bot_create(owner=user, name="Marco", games=["expedition-v1"], max_concurrent=3)
    identity = selectors.bot_identity_for_token(token=token)
    assert identity == selectors.BotIdentity(
        bot_id=bot.pk, name="Marco", owner="alice", games=["expedition-v1"], max_concurrent=3
    )
    assert selectors.bot_identity_for_token(token="cvs_unknown") is None
    assert selectors.bot_identity_for_token(token="") is None


def test_rotate_replaces_token_and_signals(user, revocations, django_capture_on_commit_callbacks):
    bot, old = services.bot_create(owner=user, name="Marco", games=["expedition-v1"])
    with django_capture_on_commit_callbacks(execute=True):
        _, new = services.bot_token_rotate(bot_id=bot.pk, user=user)
    assert new != old
    assert selectors.bot_identity_for_token(token=old) is None
    assert selectors.bot_identity_for_token(token=new).bot_id == bot.pk
    assert revocations == [bot.pk]


def test_revoke_and_retire(user, revocations, django_capture_on_commit_callbacks):
    bot, token = services.bot_create(owner=user, name="Marco", games=["expedition-v1"])
    with django_capture_on_commit_callbacks(execute=True):
        services.bot_token_revoke(bot_id=bot.pk, user=user)
    assert selectors.bot_identity_for_token(token=token) is None
    _, token2 = services.bot_token_rotate(bot_id=bot.pk, user=user)
    assert selectors.bot_identity_for_token(token=token2) is not None
    with django_capture_on_commit_callbacks(execute=True):
        retired = services.bot_retire(bot_id=bot.pk, user=user)
    assert not retired.active and retired.retired_at is not None
    assert selectors.bot_identity_for_token(token=token2) is None
    assert revocations == [bot.pk, bot.pk]
    with pytest.raises(ValidationError, match="retired"):
        services.bot_token_rotate(bot_id=bot.pk, user=user)


def test_only_owner_changes_a_bot(user, other_user):
    bot, token = services.bot_create(owner=user, name="Marco", games=["expedition-v1"])
    for call in (
        lambda: services.bot_token_rotate(bot_id=bot.pk, user=other_user),
        lambda: services.bot_token_revoke(bot_id=bot.pk, user=other_user),
        lambda: services.bot_retire(bot_id=bot.pk, user=other_user),
        lambda: services.bot_update(bot_id=bot.pk, user=other_user, name="Stolen"),
    ):
        with pytest.raises(PermissionDenied):
            call()
    bot.refresh_from_db()
    assert bot.name == "Marco" and bot.active
    assert selectors.bot_identity_for_token(token=token) is not None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": ""}, "needs a name"),
        ({"name": "x" * 41}, "at most 40"),
        ({"name": "bad/name"}, "letters, digits"),
        ({"name": "house-greedy"}, "reserved"),
        ({"games": []}, "at least one game"),
        ({"games": ["chess-v1"]}, "unknown game 'chess-v1'"),
        ({"max_concurrent": 0}, "max_concurrent"),
        ({"max_concurrent": 99}, "max_concurrent"),
    ],
)
def test_create_rejects_bad_input(user, kwargs, message):
    args = {"owner": user, "name": "Marco", "games": ["expedition-v1"], **kwargs}
    with pytest.raises(ValidationError, match=message):
        services.bot_create(**args)
    assert not Bot.objects.exists()


def test_names_are_unique_case_insensitively(user, other_user):
    services.bot_create(owner=user, name="Marco", games=["expedition-v1"])
    with pytest.raises(ValidationError, match="already exists"):
        services.bot_create(owner=other_user, name="marco", games=["expedition-v1"])


def test_update(user):
    bot, _ = services.bot_create(owner=user, name="Marco", games=["expedition-v1"])
    services.bot_update(bot_id=bot.pk, user=user, description="now smarter", max_concurrent=4)
    bot.refresh_from_db()
    assert (bot.description, bot.max_concurrent, bot.name) == ("now smarter", 4, "Marco")


def test_versions_seen(user):
    bot, _ = services.bot_create(owner=user, name="Marco", games=["expedition-v1"])
    services.bot_version_seen(bot_id=bot.pk, version="1.0")
    services.bot_version_seen(bot_id=bot.pk, version="1.1")
    services.bot_version_seen(bot_id=bot.pk, version="1.0")
    bot.refresh_from_db()
    assert bot.versions_seen == ["1.0", "1.1"]


def test_house_bots_are_idempotent_and_tokenless():
    greedy = services.house_bot_ensure(policy="greedy")
    assert services.house_bot_ensure(policy="greedy").pk == greedy.pk
    assert greedy.is_house and greedy.token_hash is None and not greedy.owner.is_active
    with pytest.raises(ValidationError, match="unknown house bot"):
        services.house_bot_ensure(policy="telepathic")
    with pytest.raises(ValidationError, match="house bots are managed"):
        services.bot_token_rotate(bot_id=greedy.pk)


def test_bot_list_filters(user, other_user):
    services.bot_create(owner=user, name="Alpha", games=["expedition-v1"])
    beta, _ = services.bot_create(owner=other_user, name="Beta", games=["expedition-v1"])
    services.bot_retire(bot_id=beta.pk, user=other_user)
    assert [b.name for b in selectors.bot_list()] == ["Alpha"]
    assert [b.name for b in selectors.bot_list(include_retired=True)] == ["Alpha", "Beta"]
    assert [b.name for b in selectors.bot_list(owner="bob", include_retired=True)] == ["Beta"]
    assert [b.name for b in selectors.bot_list(search="alp")] == ["Alpha"]
