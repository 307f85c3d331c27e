"""The API root (`/api/v1/`): every endpoint of the version, as links (browsable in a browser, JSON for
clients). Layer: API (thin); the list is read from the URL configuration, so it never drifts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.urls import URLPattern, URLResolver
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

_CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")


def endpoint_routes(patterns: Sequence[URLPattern | URLResolver], prefix: str = "") -> dict[str, str]:
    """{url name: route with {placeholders}} for `patterns`, nested includes flattened."""
    routes: dict[str, str] = {}
    for entry in patterns:
        route = prefix + _CONVERTER.sub(r"{\1}", str(entry.pattern))
        if isinstance(entry, URLResolver):
            routes.update(endpoint_routes(entry.url_patterns, route))
        elif isinstance(entry, URLPattern) and entry.name and route:
            routes[entry.name] = route
    return routes


class ApiRootApi(APIView):
    """The endpoints of API v1 (paths relative to the site), the schema and its docs among them."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses=inline_serializer(
            "ApiRoot", {"endpoints": serializers.DictField(child=serializers.CharField())}
        )
    )
    def get(self, request: Request) -> Response:
        from ladder.api_urls import urlpatterns

        base = request.path
        return Response(
            {"endpoints": {name: base + route for name, route in endpoint_routes(urlpatterns).items()}}
        )
