"""The OpenAPI schema's shared parts: every operation documents the API's error responses (400, 401, 403,
404, 413, 429 with `{"detail", "errors"}`), cursor pages are documented as what they are, and game ids are
an enum of the registered games. Layer: API plumbing (documentation only; no behaviour).
"""

from __future__ import annotations

from typing import Any, Literal

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from engine_service.games import list_games

ERROR_CODES = {
    400: "bad input (the errors name the fields)",
    401: "not signed in, or a bad token",
    403: "not allowed",
    404: "no such object, or a bad cursor",
    413: "request body too large",
    429: "throttled: see Retry-After",
}


class ErrorSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField()
    # a declared field, moved by DRF's metaclass into the serializer's fields: `Serializer.errors` is untouched
    errors = serializers.DictField()  # type: ignore[assignment]


class LadderAutoSchema(AutoSchema):
    def _get_response_bodies(self, direction: Literal["request", "response"] = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        for code, description in ERROR_CODES.items():
            if str(code) not in responses:
                # drf-spectacular leaves this private helper unannotated
                response = self._get_response_for_code(ErrorSerializer, str(code), direction=direction)  # type: ignore[no-untyped-call]
                responses[str(code)] = {**response, "description": description}
        return responses


def cursor_page(name: str, item: serializers.Serializer[Any]) -> serializers.Serializer[Any]:
    """The schema of a cursor page of `item` rows: {next, previous, results}."""
    return inline_serializer(
        f"{name}Page",
        {
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item,
        },
    )


def game_ids() -> list[str]:
    return [spec.game_id for spec in list_games()]


GAME_IDS = tuple(game_ids())  # the schema's one name for this choice set (SPECTACULAR's ENUM_NAME_OVERRIDES)


@extend_schema_field({"type": "string", "enum": game_ids()})
class GameIdField(serializers.CharField):
    """A registered game id (documented as an enum; unknown ids are refused by the services)."""
