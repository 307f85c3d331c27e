"""The dataset endpoint: a ladder's finished matches as per-decision rows, JSON Lines (streamed) or Parquet.

Layer: API (thin): the query is parsed here, the matches and pages are `replays.dataset`'s selectors, the
rows `engine_service.envs.dataset`'s. Each request serves one bounded page (at most
`MAX_ROWS_PER_REQUEST` rows from at most `MAX_MATCHES_PER_REQUEST` matches); the next page's cursor is in
the `X-Dataset-Next-Cursor` header and a `Link: <...>; rel="next"` header (both absent on the last page).
The endpoint has its own throttle (`dataset` rate, default `DATASET_RATE`) for signed-in readers too:
each page re-simulates matches.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from engine_service.envs.dataset import DatasetError, jsonl_line, write_parquet
from ladder.core.api import parse_query
from ladder.core.throttles import _SettingsRateThrottle
from ladder.replays import dataset

DATASET_RATE = "30/min"
JSONL = "application/x-ndjson"
PARQUET = "application/vnd.apache.parquet"


class DatasetThrottle(_SettingsRateThrottle):
    """Dataset pages per user, or per address when anonymous (`DEFAULT_THROTTLE_RATES["dataset"]`)."""

    scope = "dataset"

    def get_rate(self) -> str | None:
        return str(api_settings.DEFAULT_THROTTLE_RATES.get("dataset") or DATASET_RATE)


class DatasetQuerySerializer(serializers.Serializer[Any]):
    output = serializers.ChoiceField(choices=["jsonl", "parquet"], required=False, default="jsonl")
    bots = serializers.RegexField(r"^[0-9]{1,12}(,[0-9]{1,12}){0,49}$", required=False, max_length=700)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    min_rating = serializers.FloatField(required=False, min_value=-1e6, max_value=1e6)
    cursor = serializers.CharField(required=False, max_length=40)
    limit = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=dataset.MAX_ROWS_PER_REQUEST,
        default=dataset.DEFAULT_ROWS_PER_REQUEST,
    )


class LadderDatasetApi(APIView):
    permission_classes = [permissions.AllowAny]
    throttle_classes = [DatasetThrottle]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "output", str, enum=["jsonl", "parquet"], description="jsonl (default) or parquet"
            ),
            OpenApiParameter(
                "bots", str, description="comma-separated bot ids: matches where one of them played"
            ),
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="finished at or after"),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="finished before"),
            OpenApiParameter(
                "min_rating", float, description="every seat's Elo before the match at least this"
            ),
            OpenApiParameter("cursor", str, description="X-Dataset-Next-Cursor of the previous page"),
            OpenApiParameter("limit", int, description=f"rows, 1-{dataset.MAX_ROWS_PER_REQUEST}"),
        ],
        responses={
            (200, JSONL): OpenApiResponse(OpenApiTypes.STR, description="one row per line"),
            (200, PARQUET): OpenApiResponse(OpenApiTypes.BINARY, description="one Parquet file"),
        },
        description=(
            "A ladder's finished matches as per-decision rows (engine_service.envs.dataset: match, step, seat, "
            "that seat's observation, legal actions, chosen action, time used, final rank and score), one "
            "bounded page per request; the next page's cursor is in X-Dataset-Next-Cursor."
        ),
    )
    def get(self, request: Request, ladder_id: int) -> HttpResponse | StreamingHttpResponse:
        params = parse_query(DatasetQuerySerializer, request)
        try:
            query = _filter(ladder_id, params)
            cursor = dataset.DatasetCursor.decode(params["cursor"]) if "cursor" in params else None
            page = dataset.dataset_page(query=query, cursor=cursor, limit=params["limit"])
        except dataset.LadderUnknown as exc:
            raise NotFound(str(exc)) from exc
        except dataset.DatasetQueryError as exc:
            raise ValidationError({"cursor": [str(exc)]}) from exc
        rows = dataset.dataset_rows(page=page)
        response: HttpResponse | StreamingHttpResponse
        if params["output"] == "parquet":
            body = io.BytesIO()
            try:
                write_parquet(rows, body)
            except DatasetError as exc:
                raise ValidationError({"output": [str(exc)]}) from exc
            response = HttpResponse(body.getvalue(), content_type=PARQUET)
        else:
            response = StreamingHttpResponse(_lines(rows), content_type=JSONL)
        response["X-Dataset-Rows"] = str(page.rows)
        if page.next_cursor is not None:
            following = {k: str(v) for k, v in request.query_params.items() if k != "cursor"}
            following["cursor"] = page.next_cursor.encode()
            response["X-Dataset-Next-Cursor"] = following["cursor"]
            response["Link"] = (
                f'<{request.build_absolute_uri(request.path)}?{urlencode(following)}>; rel="next"'
            )
        return response


def _filter(ladder_id: int, params: dict[str, Any]) -> dataset.DatasetFilter:
    bots = tuple(int(b) for b in params["bots"].split(",")) if "bots" in params else ()
    return dataset.DatasetFilter(
        ladder_id=ladder_id,
        bot_ids=bots,
        since=params.get("since"),
        until=params.get("until"),
        min_rating=params.get("min_rating"),
    )


def _lines(rows: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    for row in rows:
        yield jsonl_line(row).encode()
