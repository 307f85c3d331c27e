"""Throttles: `auth` (token requests, logins: the API's, the web's and the admin's), `writes` (every unsafe
method) and `reads` (anonymous safe requests, generous).

The client is the address `client_address` gives: REMOTE_ADDR, or with `LADDER_NUM_PROXIES` = n > 0 (n
trusted reverse proxies in front) the n-th address from the right of X-Forwarded-For; by default the header
is ignored, so a client cannot pick its own identity. Rates are read from settings on each request (DRF's
stock classes freeze them at import), so the test settings and environment overrides take effect. Every 429
carries Retry-After. Layer: API plumbing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import wraps

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def client_address(request: HttpRequest) -> str:
    """The client's address under the operator's proxy setting (see the module docstring)."""
    remote = request.META.get("REMOTE_ADDR") or "unknown"
    proxies = api_settings.NUM_PROXIES or 0
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if proxies <= 0 or not forwarded:
        return remote
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    return hops[-min(proxies, len(hops))] if hops else remote


class _SettingsRateThrottle(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope or "")
        return None if rate is None else str(rate)  # "N/period"; the stubs type rates as numbers

    def get_ident(self, request) -> str:  # type: ignore[no-untyped-def]
        return client_address(request)

    def get_cache_key(self, request, view) -> str | None:  # type: ignore[no-untyped-def]
        ident = (
            f"user-{request.user.pk}"
            if request.user and request.user.is_authenticated
            else self.get_ident(request)
        )
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def applies(self, request) -> bool:  # type: ignore[no-untyped-def]
        return True

    def allow_request(self, request, view) -> bool:  # type: ignore[no-untyped-def]
        if not self.applies(request):
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


class WriteThrottle(_SettingsRateThrottle):
    """Limits unsafe requests (POST, PATCH, PUT, DELETE) per user, or per address when anonymous."""

    scope = "writes"

    def applies(self, request) -> bool:  # type: ignore[no-untyped-def]
        return request.method not in SAFE_METHODS


class ReadThrottle(_SettingsRateThrottle):
    """Limits anonymous safe requests per address (signed-in readers are not limited)."""

    scope = "reads"

    def applies(self, request) -> bool:  # type: ignore[no-untyped-def]
        return request.method in SAFE_METHODS and not (request.user and request.user.is_authenticated)


class AuthThrottle(_SettingsRateThrottle):
    """Limits authentication attempts per address (user unknown yet)."""

    scope = "auth"

    def get_cache_key(self, request, view) -> str | None:  # type: ignore[no-untyped-def]
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def auth_attempt_wait(request: HttpRequest) -> int | None:
    """Count one web or admin login/signup attempt from this address: None when allowed, else the seconds
    until the window (the `auth` rate) lets it try again."""
    limit, seconds = AuthThrottle.parse_rate(None, api_settings.DEFAULT_THROTTLE_RATES.get("auth"))  # type: ignore[arg-type]
    if limit is None or seconds is None:
        return None
    window = int(time.time() // seconds)
    key = f"web-auth:{client_address(request)}:{window}"
    cache.add(key, 0, timeout=seconds + 1)
    try:
        attempts = cache.incr(key)
    except ValueError:
        cache.set(key, 1, timeout=seconds + 1)
        attempts = 1
    if attempts <= limit:
        return None
    return max(1, math.ceil((window + 1) * seconds - time.time()))


def too_many_attempts(request: HttpRequest, wait: int) -> HttpResponse:
    context = {"status": 429, "message": f"Too many attempts; try again in {wait} seconds."}
    response = render(request, "web/error.html", context, status=429)
    response["Retry-After"] = str(wait)
    return response


def auth_throttled(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a login view (the admin's): a POST over the `auth` rate gets a 429 page with Retry-After."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:  # type: ignore[no-untyped-def]
        if request.method == "POST":
            wait = auth_attempt_wait(request)
            if wait is not None:
                return too_many_attempts(request, wait)
        return view(request, *args, **kwargs)

    return wrapped
