"""The referee: drives one match with one seat per player, enforces deadlines, records and replays it.

Layer: between the pure games and the outside world. It may read the clock (deadlines) but never imports
Django or gRPC: remote seats come in through the `Seat` interface, implemented by the gateway's relay.
"""

from engine_service.referee.frames import frame_with_words, frames, match_index
from engine_service.referee.match import TimeControl, run_match
from engine_service.referee.record import Fault, MatchRecord, SeatInfo
from engine_service.referee.replay import ReplayMismatch, frame_at, replay, verify
from engine_service.referee.result import MatchResult, ResultError, SeatResult
from engine_service.referee.seats import (
    DecisionRequest,
    HouseSeat,
    MatchAborted,
    MatchInfo,
    Seat,
    SeatFault,
    SeatUnavailable,
)

__all__ = [
    "DecisionRequest",
    "Fault",
    "HouseSeat",
    "MatchAborted",
    "MatchInfo",
    "MatchRecord",
    "MatchResult",
    "ReplayMismatch",
    "ResultError",
    "Seat",
    "SeatFault",
    "SeatInfo",
    "SeatResult",
    "SeatUnavailable",
    "TimeControl",
    "frame_at",
    "frame_with_words",
    "frames",
    "match_index",
    "replay",
    "run_match",
    "verify",
]
