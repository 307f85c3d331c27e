"""The hosted credential: a bot's second token, held by the bot host, accepted by the same token check as
the owner's and replaced or revoked on its own, so hosting a version never stops the owner's own token."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from ladder.bots import selectors, services
from ladder.bots.models import Bot
from ladder.hosting.services import hosted_bot_set_enabled, hosted_version_upload
from tests.ladder.hosting.test_uploads import good

pytestmark = pytest.mark.django_db


def _identity(token: str) -> int | None:
    identity = selectors.bot_identity_for_token(token=token)
    return None if identity is None else identity.bot_id


def test_the_hosted_credential_works_beside_the_owners_token(
    user, revocations, django_capture_on_commit_callbacks
):
    bot, owner_token = services.bot_create(
        owner=user, name="Marco", games=["expedition-v1"], max_concurrent=2
    )
    with django_capture_on_commit_callbacks(execute=True):
        bot, hosted = services.bot_hosted_token_issue(bot_id=bot.pk)
    assert hosted != owner_token and hosted.startswith(services.TOKEN_PREFIX)
    assert _identity(owner_token) == _identity(hosted) == bot.pk
    assert selectors.bot_identity_for_token(token=hosted) == selectors.bot_identity_for_token(
        token=owner_token
    )
    assert hosted not in str(Bot.objects.filter(pk=bot.pk).values().get())
    assert bot.hosted_token_hash == services.token_hash(hosted) and bot.hosted_token_created_at is not None
    assert revocations == []  # a first hosted credential replaces nothing: no stream of the bot is dropped
    assert selectors.bot_hosted_token_valid(bot_id=bot.pk, token=hosted)
    assert not selectors.bot_hosted_token_valid(bot_id=bot.pk, token=owner_token)  # the owner's is not it


def test_each_token_is_replaced_without_the_other(user, revocations, django_capture_on_commit_callbacks):
    bot, owner_token = services.bot_create(owner=user, name="Marco", games=["expedition-v1"])
    _, hosted = services.bot_hosted_token_issue(bot_id=bot.pk)
    with django_capture_on_commit_callbacks(execute=True):
        _, owner_new = services.bot_token_rotate(bot_id=bot.pk, user=user)
    assert _identity(owner_token) is None and _identity(owner_new) == _identity(hosted) == bot.pk
    with django_capture_on_commit_callbacks(execute=True):
        services.bot_token_revoke(bot_id=bot.pk, user=user)
    assert _identity(owner_new) is None and _identity(hosted) == bot.pk
    with django_capture_on_commit_callbacks(execute=True):
        _, hosted_new = services.bot_hosted_token_issue(bot_id=bot.pk)
    assert _identity(hosted) is None and _identity(hosted_new) == bot.pk
    assert revocations == [bot.pk, bot.pk, bot.pk]  # a replaced hosted credential is revoked at once too


def test_retiring_revokes_both_and_a_retired_bot_gets_no_hosted_credential(user):
    bot, owner_token = services.bot_create(owner=user, name="Marco", games=["expedition-v1"])
    _, hosted = services.bot_hosted_token_issue(bot_id=bot.pk)
    services.bot_retire(bot_id=bot.pk, user=user)
    assert _identity(owner_token) is None and _identity(hosted) is None
    assert not selectors.bot_hosted_token_valid(bot_id=bot.pk, token=hosted)
    with pytest.raises(ValidationError, match="retired"):
        services.bot_hosted_token_issue(bot_id=bot.pk)
    bot.refresh_from_db()
    assert bot.hosted_token_hash is None


def test_a_house_bot_gets_no_hosted_credential():
    house = services.house_bot_ensure(policy="greedy")
    with pytest.raises(ValidationError, match="house bots"):
        services.bot_hosted_token_issue(bot_id=house.pk)
    house.refresh_from_db()
    assert house.hosted_token_hash is None


def test_uploading_and_switching_hosting_leave_every_token_working(
    user, revocations, django_capture_on_commit_callbacks
):
    bot, owner_token = services.bot_create(owner=user, name="Marco", games=["expedition-v1"])
    _, hosted = services.bot_hosted_token_issue(bot_id=bot.pk)
    with django_capture_on_commit_callbacks(execute=True):
        hosted_version_upload(bot_id=bot.pk, user=user, data=good(version="1.0"))
        hosted_version_upload(bot_id=bot.pk, user=user, data=good(version="1.1"))
        hosted_bot_set_enabled(bot_id=bot.pk, user=user, enabled=False)
        hosted_bot_set_enabled(bot_id=bot.pk, user=user, enabled=True)
    assert _identity(owner_token) == _identity(hosted) == bot.pk
    assert revocations == []
