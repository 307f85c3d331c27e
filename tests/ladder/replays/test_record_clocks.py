"""The clocks a match record keeps for its viewers: each decision's seconds as charged (the seat's own
`bot_seconds` when it measured them, else the referee's clock) and the time bank left after it, None for an
unclocked house seat; overruns come out of the bank, a timeout leaves it at zero; the clocks survive the
record's JSON, and a record without them (from before they were kept) reads as before. A fake clock: no
real time passes."""

from __future__ import annotations

from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, Seat, TimeControl, run_match
from engine_service.referee.seats import DecisionRequest

GAME = "expedition-v1"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowSeat(Seat):
    """A clocked seat playing the first legal action, taking `seconds` on the fake clock for every decision
    (or reporting them as `bot_seconds`, as a gateway does)."""

    name = "slow"
    kind = "remote"

    def __init__(self, clock: Clock, seconds: float, reported: bool = False) -> None:
        self.clock, self.seconds, self.reported = clock, seconds, reported

    def decide(self, request: DecisionRequest) -> str:
        if self.reported:
            request.extra["bot_seconds"] = self.seconds
        else:
            self.clock.now += self.seconds
        return request.legal_actions[0].id


def test_a_clocked_seat_records_seconds_and_bank_and_a_house_seat_no_bank():
    clock = Clock()
    seats = [SlowSeat(clock, 1.5), HouseSeat(make_policy("random", seed=1))]
    control = TimeControl(decision_seconds=1.0, time_bank_seconds=3.0, max_faults=1000)
    record = run_match(GAME, 2, 5, seats, time_control=control, clock=clock)
    assert set(record.clocks) == {step for step, _ in enumerate(record.actions)}
    mine = [record.clocks[s] for s, (seat, _a) in enumerate(record.actions) if seat == 0]
    # 0.5 s over per decision: the bank goes 2.5, 2.0, ... 0.0, then every answer is a timeout at 0.
    assert mine[0] == [1.5, 2.5] and mine[1] == [1.5, 2.0] and mine[5] == [1.5, 0.0]
    assert all(bank == 0.0 for _s, bank in mine[6:])
    assert sum(1 for f in record.faults if f.seat == 0 and f.kind == "timeout") == len(mine) - 6
    house = [record.clocks[s] for s, (seat, _a) in enumerate(record.actions) if seat == 1]
    assert all(bank is None and seconds == 0.0 for seconds, bank in house)
    assert MatchRecord.loads(record.dumps()).clocks == record.clocks


def test_the_seats_own_measure_is_what_is_recorded():
    clock = Clock()
    seats = [SlowSeat(clock, 0.25, reported=True), SlowSeat(clock, 0.0)]
    record = run_match(GAME, 2, 5, seats, clock=clock)
    first = next(s for s, (seat, _a) in enumerate(record.actions) if seat == 0)
    assert record.clocks[first] == [0.25, TimeControl().time_bank_seconds]


def test_a_record_without_clocks_reads_and_writes_as_before():
    record = run_match(GAME, 2, 5, [HouseSeat(make_policy("random", seed=i)) for i in range(2)])
    data = record.to_json()
    del data["clocks"]
    old = MatchRecord.from_json(data)
    assert old.clocks == {} and "clocks" not in old.to_json()
