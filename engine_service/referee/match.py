"""Run one match: ask the deciding seat at every decision, enforce the clock, record everything.

Fault policy (bot faults are rated, their reasons kept):
- timeout, illegal or malformed answer, crash: the fault is recorded with its step and reason, the seat is
  told why (via `Seat.end` summary and the gateway's error message), and the game's fallback action (the
  first legal action, which every game orders to be a safe one such as pass) is played for it;
- a disconnect, or more than `max_faults` faults, forfeits the seat: from then on the referee plays the
  fallback for it without asking, and it is ranked below every seat that did not forfeit.
A match therefore always ends: games have a turn cap, and no decision waits past its deadline.

Remote seats (the gateway's relay) add three things: a "resign" fault forfeits like a disconnect; a
"timeout" fault means the seat was given its decision time plus the whole bank and used it, so the bank is
spent; and the clock. A seat that measured the bot's thinking where the bot's stream is (the gateway, from
its request written to its answer read) reports it in `DecisionRequest.extra["bot_seconds"]`, and that alone
is charged: the worker's own delays (a busy process, the relay hop) never are. Other seats are timed here,
less any `extra["excused_seconds"]` spent waiting on the infrastructure (a gateway restart). A seat that is
not `clocked` (house bots, `HouseSeat`) is never charged at all: its budget is in iterations, so its time
measures only our machine, and it never loses on time (its crashes are still faults).
`MatchAborted` from a seat is an infrastructure failure, not a bot fault: it propagates out of `run_match`
so the caller retries the match, unrated; `SeatUnavailable` (a bot not there when the match was to start)
is one too, raised before the first decision after telling the started seats (`Seat.abort`): the caller
cancels that match unrated, never forfeits it. So does one raised by `should_stop`, which the caller may pass to
end a match between decisions (its lease lost, its time limit reached). Seats may keep `incidents` (dicts
with seat, step, kind, reason), copied into the record.

The record's result is a `MatchResult` (`referee.result`) stored as JSON. Why the match ended
(`result["reason"]`, `result["end_seat"]`, and by seat `result["end_reasons"]`): a seat
that forfeited ended its match by "disconnect", "resigned" or "forfeit" (more than `max_faults` faults); the
others by the game's own end ("completed" or "turn_cap", also in `result["game"]["reason"]`). The match's
reason is the first forfeit's, with its seat, else the game's. An action id over `MAX_ACTION_ID_BYTES` is a
"malformed" fault, and the bot's own strings are `clip`ped wherever they are quoted. A seat's debug text for
a decision (`extra["debug"]`) is kept in `record.debug` by step, cleaned; it changes nothing in the game.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engine_service.games import GameResult, GameState, make
from engine_service.referee.debug_text import clean_debug
from engine_service.referee.record import Fault, MatchRecord, SeatInfo
from engine_service.referee.result import MatchResult, SeatResult
from engine_service.referee.seats import (
    DecisionRequest,
    MatchAborted,
    MatchInfo,
    Seat,
    SeatFault,
    SeatUnavailable,
    clip,
    oversized_action_id,
)

FORFEIT_KINDS = ("disconnect", "resign")
# why a forfeiting seat's match ended, by the kind of the fault that forfeited it
FORFEIT_END_REASONS = {"disconnect": "disconnect", "resign": "resigned"}


@dataclass(frozen=True)
class TimeControl:
    """Seconds per decision, plus a bank per match that absorbs overruns."""

    decision_seconds: float = 5.0
    time_bank_seconds: float = 30.0
    max_faults: int = 3


def final_ranks(scores_ranks: list[int], forfeits: Sequence[int]) -> list[int]:
    """Game ranks, with every forfeited seat moved below every seat that did not forfeit."""
    n = len(scores_ranks)
    key = [(1 if seat in forfeits else 0, scores_ranks[seat]) for seat in range(n)]
    return [1 + sum(1 for other in key if other < key[seat]) for seat in range(n)]


def run_match(
    game_id: str,
    num_players: int,
    seed: int,
    seats: Sequence[Seat],
    options: dict[str, Any] | None = None,
    *,
    match_id: str | None = None,
    time_control: TimeControl = TimeControl(),
    hash_every: int = 10,
    on_step: Callable[[GameState, MatchRecord], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    should_stop: Callable[[], str | None] | None = None,
) -> MatchRecord:
    """Play the match to its end and return its record. `should_stop`, called before every decision, may
    return a reason to abandon the match: `MatchAborted(reason)` is raised (an infrastructure failure)."""
    if len(seats) != num_players:
        raise ValueError(f"{num_players} players need {num_players} seats, got {len(seats)}")
    state = make(game_id, num_players, seed, options)
    match_id = match_id or uuid.uuid4().hex
    record = MatchRecord(
        match_id=match_id,
        game_id=game_id,
        num_players=num_players,
        options=state.options,
        seed=seed,
        seats=[SeatInfo(seat=i, name=s.name, kind=s.kind, bot_id=s.bot_id) for i, s in enumerate(seats)],
        hash_every=hash_every,
    )
    record.hashes[0] = state.state_hash()
    names = [s.name for s in seats]
    infos = [
        MatchInfo(
            match_id=match_id,
            game_id=game_id,
            num_players=num_players,
            options=state.options,
            seat=i,
            opponents=[n for j, n in enumerate(names) if j != i],
            decision_seconds=time_control.decision_seconds,
            time_bank_seconds=time_control.time_bank_seconds,
            max_faults=time_control.max_faults,
        )
        for i in range(num_players)
    ]
    bank = [time_control.time_bank_seconds] * num_players
    fault_count = [0] * num_players
    _start_seats(seats, infos, record)
    for seat_info, seat in zip(record.seats, seats, strict=True):
        seat_info.version = str(seat.version)[:64]

    while not state.is_over():
        stop_reason = should_stop() if should_stop is not None else None
        if stop_reason:
            raise MatchAborted(f"match stopped at step {state.step}: {stop_reason}")
        seat_index = state.current_seats()[0]
        legal = state.legal_actions(seat_index)
        fallback = legal[0].id
        if seat_index in record.forfeits:
            action_id = fallback
        else:
            forfeits_next = fault_count[seat_index] >= time_control.max_faults
            answer = _ask(
                state, seats[seat_index], seat_index, legal, record, bank, time_control, clock, forfeits_next
            )
            action_id = fallback if answer is None else answer
            if answer is None:
                fault_count[seat_index] += 1
                record.faults[-1].fallback_action = fallback
                if fault_count[seat_index] > time_control.max_faults and seat_index not in record.forfeits:
                    record.faults[-1].forfeit = True
                    record.forfeits.append(seat_index)
        state.apply(seat_index, action_id)
        record.actions.append((seat_index, action_id))
        if state.step % hash_every == 0:
            record.hashes[state.step] = state.state_hash()
        if on_step is not None:
            on_step(state, record)

    record.hashes[state.step] = state.state_hash()
    for seat in seats:
        record.incidents.extend(getattr(seat, "incidents", ()))
    record.result = match_result(record, state.result()).to_json()
    for seat, info in zip(seats, infos, strict=True):
        summary = {
            "result": record.result,
            "faults": [f for f in record.faults if f.seat == info.seat],
        }
        with contextlib.suppress(SeatFault):  # the match is over; a seat that cannot hear it changes nothing
            seat.end(info, summary)
    return record


LEGAL_SHOWN = 10


def legal_list(ids: Any) -> str:
    """'legal: a, b, c (+N more)': the first `LEGAL_SHOWN` legal ids, for a fault's reason."""
    ids = list(ids)
    more = f" (+{len(ids) - LEGAL_SHOWN} more)" if len(ids) > LEGAL_SHOWN else ""
    return f"legal: {', '.join(ids[:LEGAL_SHOWN])}{more}"


def end_reasons(record: MatchRecord, game_reason: str) -> list[str]:
    """Why the match ended for each seat: a forfeited seat by its forfeit's cause, the others by the game's
    reason."""
    by_seat = [game_reason] * record.num_players
    for seat in record.forfeits:
        cause = next((f for f in record.faults if f.seat == seat and f.forfeit), None)
        by_seat[seat] = FORFEIT_END_REASONS.get(cause.kind, "forfeit") if cause else "forfeit"
    return by_seat


def match_result(record: MatchRecord, game_result: GameResult) -> MatchResult:
    """The match's typed result from the game's: forfeited seats ranked last, each seat's end reason and
    faults; the match's `reason` and `end_seat` are the first forfeit's, else the game's reason and None."""
    by_seat = end_reasons(record, game_result.reason)
    ranks = final_ranks(game_result.ranks, record.forfeits)
    first = record.forfeits[0] if record.forfeits else None
    seats = tuple(
        SeatResult(
            seat=i,
            rank=ranks[i],
            score=game_result.scores[i],
            forfeited=i in record.forfeits,
            end_reason=by_seat[i],
            faults=tuple(f for f in record.faults if f.seat == i),
        )
        for i in range(record.num_players)
    )
    return MatchResult(
        game=game_result.to_json(),
        seats=seats,
        forfeits=tuple(record.forfeits),
        reason=by_seat[first] if first is not None else game_result.reason,
        end_seat=first,
    )


def _start_seats(seats: Sequence[Seat], infos: list[MatchInfo], record: MatchRecord) -> None:
    """Start every seat; a seat whose bot is not there (`SeatUnavailable`) aborts the match before it
    began, and the seats already started hear so."""
    started: list[tuple[Seat, MatchInfo]] = []
    for seat, info in zip(seats, infos, strict=True):
        try:
            seat.start(info)
        except SeatFault as fault:
            _record_fault(record, Fault(info.seat, 0, fault.kind, fault.reason, forfeit=True))
        except SeatUnavailable as exc:
            for other, other_info in started:
                with contextlib.suppress(SeatFault, MatchAborted):
                    other.abort(other_info, str(exc))
            raise
        started.append((seat, info))


def _record_fault(record: MatchRecord, fault: Fault) -> None:
    record.faults.append(fault)
    if fault.forfeit and fault.seat not in record.forfeits:
        record.forfeits.append(fault.seat)


def _charged_seconds(request: DecisionRequest, measured_here: float) -> float:
    """The bot's own time for a decision: the seat's measurement at the bot's stream when it has one, else
    the referee's, less the time excused for infrastructure waits."""
    if "bot_seconds" in request.extra:
        return float(request.extra["bot_seconds"])
    return measured_here - float(request.extra.get("excused_seconds", 0.0))


def _within_time(
    request: DecisionRequest, measured_here: float, bank: list[float], time_control: TimeControl
) -> bool:
    """Charge a clocked seat's decision: an overrun of the decision time comes out of the bank; False (the
    bank left at zero) when the bank could not cover it."""
    overrun = _charged_seconds(request, measured_here) - time_control.decision_seconds
    if overrun <= 0:
        return True
    bank[request.seat] -= overrun
    if bank[request.seat] >= 0:
        return True
    bank[request.seat] = 0.0
    return False


def _record_clock(
    record: MatchRecord, request: DecisionRequest, measured: float, bank: list[float], clocked: bool
) -> None:
    """Keep what a decision took (the seat's own time, as charged) and the bank it left, for viewers, and the
    seat's debug text for its owner."""
    seconds = max(0.0, _charged_seconds(request, measured))
    left = round(bank[request.seat], 3) if clocked else None
    record.clocks[request.step] = [round(seconds, 4), left]
    debug = request.extra.get("debug")
    if isinstance(debug, str) and debug:  # the seat's text for its owner: kept beside, never replayed
        record.debug[request.step] = clean_debug(debug)


def _ask(
    state: GameState,
    seat: Seat,
    seat_index: int,
    legal: list[Any],
    record: MatchRecord,
    bank: list[float],
    time_control: TimeControl,
    clock: Callable[[], float],
    fault_forfeits: bool = False,
) -> str | None:
    """One decision. Returns the action id, or None after recording a fault (the caller plays fallback)."""
    step = state.step
    request = DecisionRequest(
        match_id=record.match_id or "",
        game_id=record.game_id,
        seat=seat_index,
        step=step,
        request_id=f"{record.match_id}:{step}",
        observation=state.observation(seat_index),
        legal_actions=legal,
        deadline_seconds=time_control.decision_seconds + bank[seat_index],
        time_bank_seconds=bank[seat_index],
        fault_forfeits=fault_forfeits,
    )
    started = clock()
    try:
        action_id = seat.decide(request)
    except MatchAborted:
        raise  # infrastructure, not the bot: the caller retries the match, unrated
    except SeatFault as fault:
        forfeit = fault.kind in FORFEIT_KINDS
        if fault.kind == "timeout":
            bank[seat_index] = 0.0  # the seat was given its decision time plus the whole bank
        _record_fault(record, Fault(seat_index, step, fault.kind, fault.reason, forfeit=forfeit))
        _record_clock(record, request, clock() - started, bank, seat.clocked)
        return None
    except Exception as exc:  # a house policy bug is the bot's fault, never the match's end
        _record_fault(record, Fault(seat_index, step, "crash", f"{type(exc).__name__}: {exc}"))
        _record_clock(record, request, clock() - started, bank, seat.clocked)
        return None
    measured = clock() - started
    in_time = not seat.clocked or _within_time(request, measured, bank, time_control)
    _record_clock(record, request, measured, bank, seat.clocked)
    if not in_time:
        reason = f"answered after {_charged_seconds(request, measured):.2f}s with the time bank spent"
        _record_fault(record, Fault(seat_index, step, "timeout", reason))
        return None
    too_long = oversized_action_id(action_id) if isinstance(action_id, str) else None
    if too_long is not None:
        _record_fault(record, Fault(seat_index, step, "malformed", f"{too_long} at step {step}"))
        return None
    if not isinstance(action_id, str) or action_id not in {a.id for a in legal}:
        shown = clip(str(action_id))
        _record_fault(
            record,
            Fault(
                seat_index,
                step,
                "illegal",
                f"action {shown!r} is not legal at step {step}; {legal_list(a.id for a in legal)}",
                action_id=shown,
            ),
        )
        return None
    return action_id
