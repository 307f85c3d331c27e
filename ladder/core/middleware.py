"""Request plumbing for the whole site: API bodies over the upload limit are a JSON 413; a Content-Security-
Policy on every response; with DEBUG on, a 404 is still the plain page (no URL map, no paths).

Layer: presentation plumbing; no domain logic.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from ladder.core.views import is_api, json_error, not_found

Handler = Callable[[HttpRequest], HttpResponse]


class ApiBodyLimitMiddleware:
    """An API request whose declared body exceeds DATA_UPLOAD_MAX_MEMORY_SIZE is refused with JSON 413."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and is_api(request):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                return json_error(400, "Content-Length is not a number")
            if length > limit:
                return json_error(413, f"request body too large (at most {limit} bytes)")
        return self.get_response(request)


class ContentSecurityPolicyMiddleware:
    """Sends settings.CONTENT_SECURITY_POLICY (pages load only our own scripts and styles)."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response


class PlainNotFoundMiddleware:
    """With DEBUG on, Django's technical 404 (the URL map, file paths) becomes the site's plain 404."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            settings.DEBUG
            and response.status_code == 404
            and not getattr(response, "plain_error", False)
            and not hasattr(response, "renderer_context")  # a DRF response: already the API's format
        ):
            return not_found(request)
        return response
