"""The signed-in user of a request, typed: for views that require one (DRF's `IsAuthenticated`, Django's
`login_required`), so services receive a `User`, never an `AnonymousUser`.

Layer: view helpers. Reads the request only; no writes.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from rest_framework.request import Request


def request_user(request: HttpRequest | Request) -> User:
    """The request's user; an anonymous request reaching a view that needs one is refused (403)."""
    user = request.user
    if not isinstance(user, User):
        raise PermissionDenied("sign in first")
    return user
