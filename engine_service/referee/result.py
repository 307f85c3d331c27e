"""The typed result of a match: each seat's rank, score, forfeit, why its match ended, and its faults.

A record keeps its result as JSON (`MatchRecord.result`, in the `caravanserai-match/1` format);
`MatchResult` is that JSON typed. The referee builds one when a match ends and stores its `to_json()`; a
reader that acts on a result (the ladder, before it stores and rates a match) calls `MatchResult.of(record)`
once: it checks every field against the record and raises `ResultError` naming the first problem, so code
past that point uses typed fields and re-checks nothing. Records made before per-seat end reasons (no
`reason`, `end_seat`, `end_reasons`) or before `result["forfeits"]` read with the game's reason and the
record's forfeits.

Layer: referee, pure data. No I/O, no Django, no gRPC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from engine_service.referee.record import Fault, MatchRecord, RecordError


class ResultError(RecordError):
    """A record whose result cannot be used: the message names the field and what is wrong with it."""


@dataclass(frozen=True)
class SeatResult:
    """One seat's outcome: its final rank (1 is first), its game score, whether it forfeited, why its match
    ended ("completed", "turn_cap", "forfeit", "disconnect", "resigned") and its faults in step order."""

    seat: int
    rank: int
    score: int
    forfeited: bool
    end_reason: str
    faults: tuple[Fault, ...] = ()

    def fault_log(self) -> list[dict[str, Any]]:
        """The seat's faults as JSON objects without the seat (step, kind, reason, action_id,
        fallback_action, forfeit), the form the ladder stores per seat."""
        return [{k: v for k, v in asdict(f).items() if k != "seat"} for f in self.faults]


@dataclass(frozen=True)
class MatchResult:
    """A finished match: the game's own result JSON, the seats in seat order, the forfeits in the order they
    happened, and why the match ended (`reason`, and `end_seat`, the first seat to forfeit, else None)."""

    game: dict[str, Any]
    seats: tuple[SeatResult, ...]
    forfeits: tuple[int, ...]
    reason: str
    end_seat: int | None

    @property
    def ranks(self) -> list[int]:
        return [s.rank for s in self.seats]

    @property
    def scores(self) -> list[int]:
        return [s.score for s in self.seats]

    @property
    def game_reason(self) -> str:
        return str(self.game.get("reason", ""))

    def to_json(self) -> dict[str, Any]:
        """The record's `result` object (keys in the order records have always had them)."""
        return {
            "game": self.game,
            "ranks": self.ranks,
            "forfeits": list(self.forfeits),
            "reason": self.reason,
            "end_seat": self.end_seat,
            "end_reasons": [s.end_reason for s in self.seats],
        }

    @staticmethod
    def of(record: MatchRecord) -> MatchResult:
        """The record's result, checked: ResultError when it is missing or any field is malformed."""
        data = record.result
        if not isinstance(data, Mapping) or "ranks" not in data:
            raise ResultError("the record has no result (the match did not finish)")
        n = record.num_players
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ResultError(f"num_players {n!r} is not a positive whole number")
        game = data.get("game")
        if not isinstance(game, dict):
            raise ResultError(f"result game {game!r} is not an object")
        scores = _ints(game.get("scores"), n, "scores")
        ranks = _ints(data["ranks"], n, "ranks", low=1, high=n)
        game_reason = _text(game.get("reason", ""), "game reason")
        forfeits = _forfeits(data.get("forfeits") or record.forfeits, n)
        reason = _text(data.get("reason") or game_reason, "reason")
        end_seat = data.get("end_seat")
        if end_seat is not None and (_int_in(end_seat, 0, n - 1) is None or end_seat not in forfeits):
            raise ResultError(f"end_seat {end_seat!r} is not a seat that forfeited")
        end_reasons = _end_reasons(data.get("end_reasons"), n, game_reason)
        faults = _faults(record.faults, n)
        seats = tuple(
            SeatResult(
                seat=i,
                rank=ranks[i],
                score=scores[i],
                forfeited=i in forfeits,
                end_reason=end_reasons[i],
                faults=tuple(f for f in faults if f.seat == i),
            )
            for i in range(n)
        )
        return MatchResult(game=game, seats=seats, forfeits=forfeits, reason=reason, end_seat=end_seat)


def _int_in(value: object, low: int, high: int) -> int | None:
    """`value` when it is a whole number (not a bool) within low..high, else None."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return None
    return value


def _ints(value: object, n: int, name: str, *, low: int = -(2**63), high: int = 2**63 - 1) -> list[int]:
    """`n` whole numbers within low..high, or ResultError naming `name`."""
    if not isinstance(value, list) or len(value) != n or any(_int_in(v, low, high) is None for v in value):
        bounds = f" between {low} and {high}" if name == "ranks" else ""
        raise ResultError(f"result {name} {value!r} are not {n} whole numbers{bounds}")
    return list(value)


def _text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise ResultError(f"result {name} {value!r} is not text")
    return value


def _forfeits(value: object, n: int) -> tuple[int, ...]:
    """Distinct seats, in the order they forfeited."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ResultError(f"result forfeits {value!r} are not a list of seats")
    seats = tuple(value)
    if any(_int_in(s, 0, n - 1) is None for s in seats) or len(set(seats)) != len(seats):
        raise ResultError(f"result forfeits {list(seats)!r} are not distinct seats 0 to {n - 1}")
    return seats


def _end_reasons(value: object, n: int, game_reason: str) -> list[str]:
    """Each seat's end reason; a record made before per-seat reasons gives every seat the game's."""
    if value is None:
        return [game_reason] * n
    if not isinstance(value, list) or len(value) != n or any(not isinstance(r, str) for r in value):
        raise ResultError(f"result end_reasons {value!r} are not {n} reasons")
    return list(value)


def _faults(faults: Sequence[object], n: int) -> list[Fault]:
    """The record's faults, each checked field by field (a record read from JSON is not typed)."""
    for index, fault in enumerate(faults):
        problem = _fault_problem(fault, n)
        if problem:
            raise ResultError(f"fault {index}: {problem}")
    return [f for f in faults if isinstance(f, Fault)]


def _fault_problem(fault: object, n: int) -> str:
    if not isinstance(fault, Fault):
        return f"{fault!r} is not a Fault"
    if _int_in(fault.seat, 0, n - 1) is None:
        return f"seat {fault.seat!r} is not a seat 0 to {n - 1}"
    if _int_in(fault.step, 0, 2**63 - 1) is None:
        return f"step {fault.step!r} is not a step number"
    if not isinstance(fault.kind, str) or not fault.kind:
        return f"kind {fault.kind!r} is not a fault kind (timeout, illegal, malformed, disconnect, ...)"
    if not isinstance(fault.reason, str):
        return f"reason {fault.reason!r} is not text"
    for name in ("action_id", "fallback_action"):
        if getattr(fault, name) is not None and not isinstance(getattr(fault, name), str):
            return f"{name} {getattr(fault, name)!r} is neither text nor null"
    if not isinstance(fault.forfeit, bool):
        return f"forfeit {fault.forfeit!r} is not true or false"
    return ""
