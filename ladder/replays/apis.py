"""Replay endpoints: the referee's record, one frame, a run of frames (re-simulated by the engine as a seat
or as the spectator), the index of rounds and turns, the move list, and the live frame.
Layer: API (thin); hidden-information rules live in `replays.selectors`."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.core.api import parse_query
from ladder.replays import selectors


class SeatQuerySerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField(required=False, min_value=0, max_value=15)


class FramesQuerySerializer(SeatQuerySerializer):
    start = serializers.IntegerField(required=False, min_value=0, default=0)
    count = serializers.IntegerField(
        required=False, min_value=1, max_value=selectors.MAX_FRAMES_PER_REQUEST, default=50
    )


class MovesQuerySerializer(serializers.Serializer[Any]):
    start = serializers.IntegerField(required=False, min_value=0, default=0)
    count = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=selectors.MAX_MOVES_PER_REQUEST,
        default=selectors.MAX_MOVES_PER_REQUEST,
    )


class ReplayRecordApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses=dict, description="The referee's match record (format caravanserai-match/1).")
    def get(self, request: Request, match_id: int) -> Response:
        try:
            record = selectors.replay_record(match_id=match_id)
        except selectors.ReplayUnavailable as exc:
            raise NotFound(str(exc)) from exc
        return Response(record.to_json())


class ReplayFrameApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[OpenApiParameter("seat", int, description="a seat's view; omit for the spectator")],
        responses=dict,
        operation_id="matches_frame_retrieve",
    )
    def get(self, request: Request, match_id: int, step: int) -> Response:
        query = parse_query(SeatQuerySerializer, request)
        try:
            return Response(selectors.replay_frame(match_id=match_id, step=step, seat=query.get("seat")))
        except selectors.ReplayUnavailable as exc:
            raise NotFound(str(exc)) from exc
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc


class ReplayFramesApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter("seat", int, description="a seat's view; omit for the spectator"),
            OpenApiParameter("start", int),
            OpenApiParameter("count", int),
        ],
        responses=dict,
    )
    def get(self, request: Request, match_id: int) -> Response:
        query = parse_query(FramesQuerySerializer, request)
        try:
            return Response(
                selectors.replay_frames(
                    match_id=match_id,
                    start=query.get("start", 0),
                    count=query.get("count", 50),
                    seat=query.get("seat"),
                )
            )
        except selectors.ReplayUnavailable as exc:
            raise NotFound(str(exc)) from exc
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc


class ReplayIndexApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses=dict,
        description="Where each round (`rounds`: [{round, step}]) and each player turn (`turns`: steps) of a "
        "finished match begins, for jumping through its replay.",
    )
    def get(self, request: Request, match_id: int) -> Response:
        try:
            return Response(selectors.replay_index(match_id=match_id))
        except selectors.ReplayUnavailable as exc:
            raise NotFound(str(exc)) from exc


class ReplayMovesApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[OpenApiParameter("start", int), OpenApiParameter("count", int)],
        responses=dict,
        description="The move list of a finished match, paged: `moves` from `start` (move N leads from step N "
        "to step N + 1), each with `seat`, `text` (the action in the game's words, never its id), `round`, "
        "`turn`, `clock` ({seconds, bank}: the seat's time used, as charged, and its time bank left; bank "
        "null for an unclocked house bot; null when not recorded) and `fault`; `scores` is every seat's "
        "running score at every step (0 to `steps`), `score_label` what it counts.",
    )
    def get(self, request: Request, match_id: int) -> Response:
        query = parse_query(MovesQuerySerializer, request)
        try:
            return Response(
                selectors.replay_moves(
                    match_id=match_id,
                    start=query.get("start", 0),
                    count=query.get("count", selectors.MAX_MOVES_PER_REQUEST),
                )
            )
        except selectors.ReplayUnavailable as exc:
            raise NotFound(str(exc)) from exc
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc


class LiveFrameApi(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses=dict,
        description="The latest public frame of a RUNNING match (`frame`: the spectator's view with every "
        "hand hidden, its log in words, its round and turn), shown its ladder's `live_delay_steps` behind "
        "the play, with `steps` (played so far, as last published by the worker) and `step` (shown). For "
        "a match that is not running, `frame` is null and `status` says why; once it is DONE its replay "
        "is at `/matches/<id>/frames/`. 404 for a match of a duplicate set still being played.",
    )
    def get(self, request: Request, match_id: int) -> Response:
        try:
            return Response(selectors.live_frame(match_id=match_id))
        except selectors.ReplayUnavailable as exc:
            raise NotFound(str(exc)) from exc
