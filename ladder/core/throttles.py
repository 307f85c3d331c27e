"""Throttles: `auth` (token requests, logins) and `writes` (every unsafe method).

Rates are read from settings on each request (DRF's stock classes freeze them at import), so the test
settings and environment overrides take effect. Layer: API plumbing.
"""

from __future__ import annotations

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle


class _SettingsRateThrottle(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view) -> str | None:  # type: ignore[no-untyped-def]
        ident = (
            f"user-{request.user.pk}"
            if request.user and request.user.is_authenticated
            else self.get_ident(request)
        )
        return self.cache_format % {"scope": self.scope, "ident": ident}


class WriteThrottle(_SettingsRateThrottle):
    """Limits unsafe requests (POST, PATCH, PUT, DELETE) per user, or per address when anonymous."""

    scope = "writes"

    def allow_request(self, request, view) -> bool:  # type: ignore[no-untyped-def]
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


class AuthThrottle(_SettingsRateThrottle):
    """Limits authentication attempts per address (user unknown yet)."""

    scope = "auth"

    def get_cache_key(self, request, view) -> str | None:  # type: ignore[no-untyped-def]
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def allow_request(self, request, view) -> bool:  # type: ignore[no-untyped-def]
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)
