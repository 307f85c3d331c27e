"""Error responses for whole requests that never reach a DRF view (an unknown address, a body too large, a
request Django refuses): the API's JSON error format under `/api/`, the site's error page elsewhere. No URL
map, setting or file path is ever shown, with DEBUG on too (`core.middleware.PlainNotFoundMiddleware`).

Layer: presentation plumbing; no domain logic.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404

API_PREFIX = "/api/"
TITLES = {400: "bad request", 404: "not found", 413: "request body too large", 500: "server error"}


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def json_error(status: int, detail: str) -> JsonResponse:
    return JsonResponse({"detail": detail, "errors": {}}, status=status)


def error_page(request: HttpRequest, status: int, message: str) -> HttpResponse:
    if is_api(request):
        response: HttpResponse = json_error(status, message)
    else:
        response = render(request, "web/error.html", {"status": status, "message": message}, status=status)
    response.plain_error = True  # type: ignore[attr-defined]
    return response


def _public_message(exception: Exception | None) -> str | None:
    """A 404's own message when it is plain text: never a resolver's list of the URL patterns it tried."""
    if isinstance(exception, Http404) and not isinstance(exception, Resolver404) and exception.args:
        message = exception.args[0]
        return message if isinstance(message, str) and message else None
    return None


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    fallback = "no such endpoint" if is_api(request) else "There is nothing at this address."
    return error_page(request, 404, _public_message(exception) or fallback)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_page(request, 400, "the request could not be read (malformed, or too large)")


def server_error(request: HttpRequest) -> HttpResponse:
    return error_page(request, 500, "the server could not answer; the error has been logged")
