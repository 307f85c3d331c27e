"""User API token reads: the live token for a presented key. Layer: selectors (read-only, except the
`last_used_at` stamp, written at most once a minute)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from ladder.accounts.models import UserToken
from ladder.accounts.services import token_hash


def user_token_live(*, key: str) -> UserToken | None:
    """The unexpired, unrevoked token whose key is `key`, with its active user; None otherwise."""
    now = timezone.now()
    row = (
        UserToken.objects.select_related("user")
        .filter(key_hash=token_hash(key), revoked_at=None, expires_at__gt=now, user__is_active=True)
        .first()
    )
    if row is not None and (row.last_used_at is None or row.last_used_at < now - timedelta(minutes=1)):
        UserToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row
