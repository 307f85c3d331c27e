"""DRF authentication by user API token: `Authorization: Token <key>`, looked up by its sha256.
Layer: API plumbing over `accounts.selectors`."""

from __future__ import annotations

from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from ladder.accounts.selectors import user_token_live


class UserTokenAuthentication(TokenAuthentication):
    keyword = "Token"

    def authenticate_credentials(self, key: str):  # type: ignore[no-untyped-def]
        row = user_token_live(key=key)
        if row is None:
            raise AuthenticationFailed("invalid, expired or revoked token")
        return row.user, row
