"""User API token writes: issue (after a password check), rotate, revoke. Layer: services (keyword-only,
typed, transactional). The plain token is returned once, by `user_token_issue` or `user_token_rotate`, and
otherwise exists only as a sha256.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from ladder.accounts.models import UserToken

TOKEN_PREFIX = "cvu_"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@transaction.atomic
def user_token_issue(*, user: User) -> tuple[UserToken, str]:
    """A new token for `user`, valid for LADDER_TOKEN_DAYS; beyond LADDER_TOKENS_PER_USER live tokens the
    oldest are revoked."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    now = timezone.now()
    row = UserToken.objects.create(
        user=user,
        key_hash=token_hash(token),
        hint=token[:10],
        expires_at=now + timedelta(days=settings.LADDER_TOKEN_DAYS),
    )
    live = UserToken.objects.filter(user=user, revoked_at=None, expires_at__gt=now).order_by("-id")
    stale = list(live.values_list("pk", flat=True)[settings.LADDER_TOKENS_PER_USER :])
    UserToken.objects.filter(pk__in=stale).update(revoked_at=now)
    return row, token


def user_token_revoke(*, token_id: int) -> bool:
    """Revoke one token; False when it was already revoked."""
    return bool(UserToken.objects.filter(pk=token_id, revoked_at=None).update(revoked_at=timezone.now()))


def user_tokens_revoke_all(*, user: User) -> int:
    """Revoke every live token of `user`; how many were revoked."""
    return UserToken.objects.filter(user=user, revoked_at=None).update(revoked_at=timezone.now())


@transaction.atomic
def user_token_rotate(*, token_id: int) -> tuple[UserToken, str]:
    """Revoke `token_id` and issue its holder a new token."""
    row = UserToken.objects.select_for_update().select_related("user").get(pk=token_id)
    row.revoked_at = timezone.now()
    row.save(update_fields=["revoked_at"])
    return user_token_issue(user=row.user)
