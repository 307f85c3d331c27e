"""The API's error format: every bad request is a 4xx with a reason, never a 500.

Services raise `django.core.exceptions.ValidationError` (or `ObjectDoesNotExist`) with readable messages;
this handler turns them, and the engine's own input errors, into DRF responses:
`{"detail": "...", "errors": {...}}`. Layer: API plumbing; no domain logic.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from engine_service.games.base import GameError
from engine_service.referee.record import RecordError


def _validation_payload(exc: DjangoValidationError) -> dict[str, Any]:
    if hasattr(exc, "error_dict"):
        errors = {field: [str(m) for m in msgs] for field, msgs in exc.message_dict.items()}
        first = next(iter(errors.values()))[0] if errors else "invalid input"
        return {"detail": first, "errors": errors}
    messages = [str(m) for m in exc.messages]
    return {"detail": "; ".join(messages) or "invalid input", "errors": {"non_field_errors": messages}}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DjangoValidationError):
        return Response(_validation_payload(exc), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, (GameError, RecordError)):
        return Response({"detail": str(exc), "errors": {}}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, ObjectDoesNotExist) and not isinstance(exc, Http404):
        return Response({"detail": str(exc) or "not found", "errors": {}}, status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    response = _with_errors(exception_handler(exc, context), exc)
    if response is not None and isinstance(response.data, dict):
        response.data.setdefault("errors", {})
    return response


def _with_errors(response: Response | None, exc: Exception) -> Response | None:
    """DRF's validation payloads ({field: [messages]} or [messages]) as {"detail", "errors"}."""
    if (
        response is not None
        and isinstance(exc, exceptions.ValidationError)
        and isinstance(response.data, dict)
    ):
        if "detail" not in response.data:
            errors = response.data
            first_field = next(iter(errors), None)
            first = errors[first_field] if first_field is not None else "invalid input"
            while isinstance(first, (list, dict)) and first:
                first = first[0] if isinstance(first, list) else next(iter(first.values()))
            label = "" if first_field in (None, "non_field_errors") else f"{first_field}: "
            response.data = {"detail": f"{label}{first}", "errors": errors}
    elif (
        response is not None
        and isinstance(exc, exceptions.ValidationError)
        and isinstance(response.data, list)
    ):
        response.data = {
            "detail": "; ".join(str(m) for m in response.data),
            "errors": {"non_field_errors": response.data},
        }
    return response
