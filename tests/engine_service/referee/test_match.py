"""The referee: fault policy, time bank, records, replays and frames."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from engine_service.policies import make_policy
from engine_service.referee import (
    DecisionRequest,
    HouseSeat,
    MatchAborted,
    MatchRecord,
    ReplayMismatch,
    Seat,
    SeatFault,
    TimeControl,
    frame_at,
    replay,
    run_match,
    verify,
)
from engine_service.referee.match import final_ranks
from engine_service.referee.record import RecordError

GAME = "expedition-v1"


def house(n: int) -> list[Seat]:
    return [HouseSeat(make_policy("random", seed=i)) for i in range(n)]


class ScriptedSeat(Seat):
    """Answers with a fixed behaviour: 'raise:<kind>', 'bogus', or a random legal id."""

    def __init__(self, behaviour: str, *, after: int = 0) -> None:
        self.name = f"scripted-{behaviour}"
        self.behaviour = behaviour
        self.after = after
        self.calls = 0
        self.summary: dict[str, object] | None = None
        self.policy = make_policy("random", seed=99)

    def decide(self, request: DecisionRequest) -> str:
        self.calls += 1
        if self.calls > self.after:
            if self.behaviour.startswith("raise:"):
                raise SeatFault(self.behaviour.split(":", 1)[1], "scripted fault")
            if self.behaviour == "bogus":
                return "not-an-action"
        return self.policy.choose(request.observation, request.legal_actions)

    def end(self, info: object, summary: dict[str, object]) -> None:
        self.summary = summary


def test_a_match_of_house_bots_is_recorded_and_verifies() -> None:
    record = run_match(GAME, 3, 21, house(3), hash_every=5)
    assert record.result is not None
    assert record.steps > 0 and 0 in record.hashes and record.steps in record.hashes
    assert all(step % 5 == 0 or step == record.steps for step in record.hashes)
    assert verify(record).state_hash() == record.hashes[record.steps]
    assert record.result["ranks"] == record.result["game"]["ranks"]


def test_record_round_trips_through_json_and_files(tmp_path: object) -> None:
    record = run_match(GAME, 2, 4, house(2))
    again = MatchRecord.loads(record.dumps())
    assert again.to_json() == record.to_json()
    path = f"{tmp_path}/m.json"
    record.dump(path)
    assert MatchRecord.load(path).to_json() == record.to_json()


@pytest.mark.parametrize(
    "text",
    ["not json", "[]", json.dumps({"format": "other"}), json.dumps({"format": "caravanserai-match/1"})],
)
def test_bad_records_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(RecordError):
        MatchRecord.loads(text)


def test_illegal_answers_are_faults_with_the_legal_list_and_a_fallback() -> None:
    bad = ScriptedSeat("bogus", after=0)
    record = run_match(GAME, 2, 3, [bad, *house(1)], time_control=TimeControl(max_faults=2))
    faults = [f for f in record.faults if f.seat == 0]
    assert (
        faults[0].kind == "illegal" and "not-an-action" in faults[0].reason and "legal:" in faults[0].reason
    )
    assert faults[0].fallback_action is not None
    assert 0 in record.forfeits, "more than max_faults faults forfeits the seat"
    assert record.result is not None and record.result["ranks"][0] == 2
    assert bad.calls == 3, "a forfeited seat is not asked again"
    verify(record)


def test_a_disconnect_forfeits_at_once_and_the_match_still_ends() -> None:
    gone = ScriptedSeat("raise:disconnect", after=2)
    record = run_match(GAME, 3, 8, [*house(1), gone, *house(1)])
    assert record.result is not None
    assert record.forfeits == [1]
    assert record.faults[0].kind == "disconnect" and record.faults[0].forfeit
    assert record.result["ranks"][1] == 3
    assert gone.summary is not None and gone.summary["faults"]


def test_a_crashing_policy_is_a_crash_fault_not_a_crashed_match() -> None:
    class Crashing(Seat):
        name = "crashing"

        def decide(self, request: DecisionRequest) -> str:
            raise ZeroDivisionError("boom")

    record = run_match(GAME, 2, 5, [Crashing(), *house(1)], time_control=TimeControl(max_faults=1))
    assert record.faults[0].kind == "crash" and "ZeroDivisionError" in record.faults[0].reason
    assert record.forfeits == [0]


def test_slow_answers_spend_the_time_bank_then_time_out() -> None:
    ticks: Iterator[float] = iter(float(t) for t in range(0, 100_000, 3))  # every decision takes 3 "seconds"

    record = run_match(
        GAME,
        2,
        5,
        [ScriptedSeat("random"), ScriptedSeat("random")],  # clocked seats, as every bot's is
        time_control=TimeControl(decision_seconds=2.0, time_bank_seconds=4.5, max_faults=1),
        clock=lambda: next(ticks),
    )
    timeouts = [f for f in record.faults if f.kind == "timeout"]
    # Each decision overruns by 1s: seat 0 answers 4 times within its 4.5s bank, the 5th times out.
    first = timeouts[0]
    assert first.seat == 0
    answered_before = [s for s, _ in record.actions[: first.step] if s == 0]
    assert len(answered_before) == 4
    assert sorted(record.forfeits) == [0, 1]


def test_house_seats_are_not_clocked_and_never_lose_on_time() -> None:
    ticks: Iterator[float] = iter(float(t) for t in range(0, 1_000_000, 60))  # a minute a decision
    clocked = ScriptedSeat("random")
    record = run_match(
        GAME,
        2,
        5,
        [house(1)[0], clocked],
        time_control=TimeControl(decision_seconds=1.0, time_bank_seconds=0.0, max_faults=1),
        clock=lambda: next(ticks),
    )
    assert not HouseSeat.clocked and clocked.clocked
    assert {f.seat for f in record.faults} == {1} and record.forfeits == [1]  # only the bot timed out
    assert all(f.kind == "timeout" for f in record.faults)
    assert record.result is not None and record.result["ranks"][0] == 1
    verify(record)


def test_a_house_seat_that_crashes_is_still_a_recorded_fault() -> None:
    class Broken(HouseSeat):
        def decide(self, request: DecisionRequest) -> str:
            raise RuntimeError("policy bug")

    record = run_match(
        GAME, 2, 5, [Broken(make_policy("random", seed=1)), *house(1)], time_control=TimeControl(max_faults=0)
    )
    assert record.faults[0].kind == "crash" and "policy bug" in record.faults[0].reason
    assert record.forfeits == [0]
    verify(record)


def test_final_ranks_put_forfeits_last() -> None:
    assert final_ranks([1, 2, 3], [0]) == [3, 1, 2]
    assert final_ranks([1, 1, 3], [2]) == [1, 1, 3]
    assert final_ranks([2, 1, 3, 4], [1, 3]) == [1, 3, 2, 4]


def test_frames_show_a_seat_only_its_own_hand() -> None:
    record = run_match(GAME, 3, 13, house(3))
    seat_view = frame_at(record, 10, seat=1)["view"]
    assert "hand" in seat_view and "hands" not in seat_view
    spectator = frame_at(record, 10)["view"]
    assert "hand" not in spectator and "hands" not in spectator
    revealed = frame_at(record, record.steps, reveal=True)
    assert len(revealed["view"]["hands"]) == 3 and revealed["next_action"] is None
    with pytest.raises(ValueError):
        frame_at(record, record.steps + 1)
    with pytest.raises(ValueError):
        frame_at(record, 0, seat=7)


def test_a_wrong_hash_names_the_first_differing_step() -> None:
    record = run_match(GAME, 2, 2, house(2), hash_every=4)
    record.hashes[8] = "0" * 32
    with pytest.raises(ReplayMismatch) as info:
        replay(record)
    assert info.value.step == 8


class GatewayTimedSeat(Seat):
    """Reports the bot's own thinking time, as a remote seat measured at the gateway does."""

    def __init__(self, bot_seconds: float) -> None:
        self.name = "gateway-timed"
        self.bot_seconds = bot_seconds
        self.policy = make_policy("random", seed=7)

    def decide(self, request: DecisionRequest) -> str:
        request.extra["bot_seconds"] = self.bot_seconds
        return self.policy.choose(request.observation, request.legal_actions)


def test_the_time_measured_at_the_bots_stream_is_charged_not_the_referees() -> None:
    ticks: Iterator[float] = iter(
        float(t) for t in range(0, 100_000, 3)
    )  # the worker is slow: 3 s a decision
    fast_bot, slow_bot = GatewayTimedSeat(bot_seconds=0.5), GatewayTimedSeat(bot_seconds=2.5)

    record = run_match(
        GAME,
        2,
        5,
        [fast_bot, slow_bot],
        time_control=TimeControl(decision_seconds=1.0, time_bank_seconds=3.0, max_faults=1),
        clock=lambda: next(ticks),
    )
    assert {f.seat for f in record.faults} == {1}  # 0.5 s of 1 s: never charged the worker's 3 s
    timeout = record.faults[0]
    assert timeout.kind == "timeout"
    assert (
        len([s for s, _ in record.actions[: timeout.step] if s == 1]) == 2
    )  # 1.5 s over each time: bank 3 s


def test_should_stop_abandons_the_match_between_decisions_as_an_infrastructure_failure() -> None:
    calls = []

    def stop_after_ten() -> str | None:
        calls.append(1)
        return "lease lost" if len(calls) > 10 else None

    with pytest.raises(MatchAborted, match="step 10: lease lost"):
        run_match(GAME, 2, 5, house(2), should_stop=stop_after_ten)


class _Recording(Seat):
    """Answers by a script of action ids (None: the first legal), keeping every request it saw."""

    def __init__(self, answers: list[str | None]) -> None:
        self.name = "recording"
        self.answers = answers
        self.requests: list[DecisionRequest] = []

    def decide(self, request: DecisionRequest) -> str:
        self.requests.append(request)
        answer = self.answers[len(self.requests) - 1] if len(self.requests) <= len(self.answers) else None
        return request.legal_actions[0].id if answer is None else answer


def test_an_oversized_action_id_is_malformed_and_bot_strings_are_clipped() -> None:
    seat = _Recording(["x" * 5000, "y" * 200])
    record = run_match(GAME, 2, 41, [seat, *house(1)], time_control=TimeControl(5, 5, max_faults=3))
    malformed, illegal = record.faults
    assert malformed.kind == "malformed" and "5000 bytes is over the 256-byte limit" in malformed.reason
    assert len(malformed.reason) < 200 and malformed.action_id is None
    assert illegal.kind == "illegal" and illegal.action_id == "y" * 64 + "... (200 characters)"
    assert "legal: " in illegal.reason and len(illegal.reason) < 600
    assert len(record.dumps()) < 20_000
    verify(record)


def test_the_decision_whose_fault_would_forfeit_is_flagged_and_end_reasons_name_the_seat() -> None:
    seat = _Recording(["bogus", "bogus"])
    record = run_match(GAME, 2, 42, [*house(1), seat], time_control=TimeControl(5, 5, max_faults=1))
    assert [r.fault_forfeits for r in seat.requests[:2]] == [False, True]
    assert record.faults[1].forfeit and record.forfeits == [1]
    assert record.result is not None
    assert record.result["reason"] == "forfeit" and record.result["end_seat"] == 1
    assert record.result["end_reasons"] == [record.result["game"]["reason"], "forfeit"]


def test_end_reasons_for_a_clean_match_a_disconnect_and_a_resignation() -> None:
    clean = run_match(GAME, 2, 43, house(2))
    assert clean.result is not None and clean.result["end_seat"] is None
    assert clean.result["reason"] == clean.result["game"]["reason"]
    assert clean.result["end_reasons"] == [clean.result["game"]["reason"]] * 2
    for kind, word in (("disconnect", "disconnect"), ("resign", "resigned")):
        record = run_match(GAME, 2, 44, [ScriptedSeat(f"raise:{kind}", after=2), *house(1)])
        assert record.result is not None
        assert record.result["reason"] == word and record.result["end_seat"] == 0
        assert record.result["end_reasons"][0] == word


def test_records_without_end_reasons_still_load_and_say_how_the_game_ended() -> None:
    from engine_service.gateway.protocol import bot_pb2, match_ended_to_proto

    record = run_match(GAME, 2, 45, [ScriptedSeat("raise:resign", after=1), *house(1)])
    data = record.to_json()
    for key in ("reason", "end_seat", "end_reasons"):
        del data["result"][key]  # a record made before end reasons
    old = MatchRecord.from_json(data)
    verify(old)
    assert old.result is not None
    ended = match_ended_to_proto("m", 0, {"result": old.result, "faults": old.faults})
    assert ended.reason == old.result["game"]["reason"] and not ended.HasField("end_seat")
    assert ended.end_reason in (bot_pb2.END_REASON_COMPLETED, bot_pb2.END_REASON_TURN_CAP)
