"""The typed match result: what the referee writes reads back field for field, old records read with the
game's reason, and every kind of malformed result is one `ResultError` naming the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from engine_service.policies import make_policy
from engine_service.referee import (
    DecisionRequest,
    Fault,
    HouseSeat,
    MatchRecord,
    MatchResult,
    ResultError,
    Seat,
    SeatFault,
    SeatResult,
    run_match,
)
from engine_service.referee.record import RecordError

GAME = "expedition-v1"


class Silent(Seat):
    name = "silent"
    kind = "remote"

    def decide(self, request: DecisionRequest) -> str:
        raise SeatFault("disconnect", "the bot has no stream")


def _record(seats: list[Seat] | None = None) -> MatchRecord:
    players = seats or [HouseSeat(make_policy("random", seed=i)) for i in range(3)]
    return run_match(GAME, len(players), 7, players)


def _json_copy(record: MatchRecord) -> MatchRecord:
    return MatchRecord.from_json(record.to_json())


def test_the_referees_result_reads_back_as_it_wrote_it() -> None:
    record = _record()
    result = MatchResult.of(_json_copy(record))
    assert result.to_json() == record.result
    assert record.result is not None
    assert result.ranks == record.result["ranks"] and result.scores == record.result["game"]["scores"]
    assert result.forfeits == () and result.end_seat is None
    assert result.reason == result.game_reason == record.result["game"]["reason"]
    assert all(s.end_reason == result.game_reason and s.faults == () for s in result.seats)


def test_a_forfeit_is_typed_with_its_seat_its_reason_and_its_faults() -> None:
    record = _record([HouseSeat(make_policy("random", seed=1)), Silent()])
    result = MatchResult.of(_json_copy(record))
    assert result.forfeits == (1,) and result.end_seat == 1 and result.reason == "disconnect"
    loser = result.seats[1]
    assert loser == SeatResult(
        seat=1,
        rank=2,
        score=loser.score,
        forfeited=True,
        end_reason="disconnect",
        faults=tuple(record.faults),
    )
    assert loser.fault_log()[0] == {
        "step": record.faults[0].step,
        "kind": "disconnect",
        "reason": "the bot has no stream",
        "action_id": None,
        "fallback_action": record.faults[0].fallback_action,
        "forfeit": True,
    }
    assert result.seats[0].faults == () and not result.seats[0].forfeited


def test_a_record_made_before_per_seat_reasons_reads_with_the_games_reason() -> None:
    record = _json_copy(_record())
    assert record.result is not None
    for key in ("reason", "end_seat", "end_reasons", "forfeits"):
        del record.result[key]
    result = MatchResult.of(record)
    assert result.reason == result.game_reason and result.forfeits == ()
    assert [s.end_reason for s in result.seats] == [result.game_reason] * 3


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(result: dict[str, Any]) -> None:
        result[key] = value

    return change


def _set_game(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(result: dict[str, Any]) -> None:
        result["game"][key] = value

    return change


BAD_RESULTS = {
    "game not an object": (_set("game", [1, 2, 3]), "result game"),
    "too few scores": (_set_game("scores", [1, 2]), "result scores"),
    "a score that is text": (_set_game("scores", [1, "2", 3]), "result scores"),
    "a rank past the seats": (_set("ranks", [1, 2, 4]), "result ranks"),
    "a rank that is a bool": (_set("ranks", [True, 2, 3]), "result ranks"),
    "a game reason that is not text": (_set_game("reason", 3), "game reason"),
    "a forfeit twice": (_set("forfeits", [1, 1]), "result forfeits"),
    "a forfeit of no seat": (_set("forfeits", [5]), "result forfeits"),
    "an end seat that did not forfeit": (_set("end_seat", 0), "end_seat"),
    "too few end reasons": (_set("end_reasons", ["completed"]), "end_reasons"),
    "a reason that is not text": (_set("reason", ["forfeit"]), "result reason"),
}


@pytest.mark.parametrize("case", sorted(BAD_RESULTS))
def test_a_malformed_result_is_one_clear_error(case: str) -> None:
    change, named = BAD_RESULTS[case]
    record = _json_copy(_record())
    assert record.result is not None
    change(record.result)
    with pytest.raises(ResultError, match=named):
        MatchResult.of(record)


def test_a_record_without_a_result_did_not_finish() -> None:
    record = _json_copy(_record())
    record.result = None
    with pytest.raises(ResultError, match="did not finish"):
        MatchResult.of(record)


BAD_FAULTS = {
    "seat as text": ({"seat": "1"}, "seat '1'"),
    "seat past the seats": ({"seat": 3}, "seat 3"),
    "negative step": ({"step": -1}, "step -1"),
    "empty kind": ({"kind": ""}, "kind ''"),
    "reason not text": ({"reason": None}, "reason None"),
    "action id a number": ({"action_id": 12}, "action_id 12"),
    "forfeit as text": ({"forfeit": "yes"}, "forfeit 'yes'"),
}


@pytest.mark.parametrize("case", sorted(BAD_FAULTS))
def test_a_malformed_fault_read_from_json_is_one_clear_error(case: str) -> None:
    change, named = BAD_FAULTS[case]
    data = _record().to_json()
    fault = {"seat": 0, "step": 2, "kind": "timeout", "reason": "late", "action_id": None}
    data["faults"] = [{**fault, "fallback_action": "pass", "forfeit": False, **change}]
    with pytest.raises(ResultError, match=f"fault 0: {named}"):
        MatchResult.of(MatchRecord.from_json(data))


def test_result_errors_are_record_errors() -> None:
    assert issubclass(ResultError, RecordError)
    good = Fault(0, 1, "timeout", "late")
    record = _json_copy(_record())
    record.faults = [good]
    assert MatchResult.of(record).seats[0].faults == (good,)
