"""The reconnect grace after a gateway loss runs only while another gateway claims to admit at normal speed.

A remote seat over a scripted world (no sockets): its clock is a counter that moves a fixed step at every
reading, the registry says when the other gateway is alive, when it admits and when the bot is back, and the
relay fails once (the gateway lost) before answering on the bot's new stream. Nothing depends on the
machine's speed: every duration is counted on the scripted clock.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from engine_service.games import Action
from engine_service.gateway.protocol import relay_pb2
from engine_service.gateway.registry import GatewayState, SessionInfo
from engine_service.gateway.relay_connection import RelayDown
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.referee import DecisionRequest, MatchInfo, SeatFault
from engine_service.referee.seats import MatchAborted

GAME = "expedition-v1"
STEP = 0.5  # scripted seconds per clock reading


def session(gateway_id: str) -> SessionInfo:
    return SessionInfo(
        session_id=f"s-{gateway_id}",
        bot_id="bot",
        bot_name="bot",
        gateway_id=gateway_id,
        relay_address=f"relay-{gateway_id}",
        games=(GAME,),
        capacity=2,
        matches=0,
        connected_at=0.0,
        heartbeat_at=0.0,
        decisions_address=f"decisions-{gateway_id}",
    )


@dataclass
class World:
    """g1 holds the bot until it is lost; g2 is alive throughout, admits over `admitting` (scripted times,
    half-open intervals), and holds the bot's new stream from `back_at` (None: never)."""

    admitting: list[tuple[float, float]] = field(default_factory=list)
    back_at: float | None = None
    claims: bool = True  # False: g2 reports no admission state (an older gateway)
    now: float = 0.0
    lost: bool = False
    calls: list[str] = field(default_factory=list)

    def clock(self) -> float:
        self.now += STEP
        return self.now

    # --- the registry ----------------------------------------------------------------------------------
    def sessions_of_bot(self, bot_id: str) -> list[SessionInfo]:
        if not self.lost:
            return [session("g1")]
        return [session("g2")] if self.back_at is not None and self.now >= self.back_at else []

    def gateway_states(self) -> dict[str, GatewayState]:
        if not self.claims:
            return {"g2": GatewayState("g2", "relay-g2", time.time(), None)}
        admitting = any(start <= self.now < end for start, end in self.admitting)
        return {"g2": GatewayState("g2", "relay-g2", time.time(), time.time() + 60 if admitting else 0.0)}

    def live_gateways(self) -> dict[str, str]:
        return {"g2": "relay-g2"}

    # --- the relay -------------------------------------------------------------------------------------
    def stub(self, address: str) -> Any:
        world = self

        class Stub:
            def StartMatch(self, request: Any, timeout: float) -> relay_pb2.StartMatchResponse:
                world.calls.append(f"start {address}")
                return relay_pb2.StartMatchResponse(outcome=relay_pb2.OUTCOME_OK)

        return Stub()

    def connection(self, address: str) -> Any:
        world = self

        class Connection:
            def decide(self, call: Any, timeout: float) -> relay_pb2.DecisionReply:
                world.calls.append(f"decide {address}")
                if address == "decisions-g1":
                    world.lost = True
                    raise RelayDown(grpc.StatusCode.UNAVAILABLE, "the gateway was killed")
                return relay_pb2.DecisionReply(
                    outcome=relay_pb2.OUTCOME_OK, action_id="go", bot_seconds=0.01, gateway_id="g2"
                )

        return Connection()


def seat_in(world: World, *, grace: float = 5.0, gateway_return: float = 60.0) -> RemoteSeat:
    seat = RemoteSeat(
        "bot",
        "bot",
        world,  # type: ignore[arg-type]  # the registry's reads a seat makes
        reconnect_grace=grace,
        gateway_return=gateway_return,
        channels=world,  # type: ignore[arg-type]
        clock=world.clock,
    )
    seat.start(MatchInfo("m1", GAME, 2, {}, 0, ["house"], 1.0, 0.0))
    return seat


def decision() -> DecisionRequest:
    return DecisionRequest(
        match_id="m1",
        game_id=GAME,
        seat=0,
        step=3,
        request_id="m1:3",
        observation={},
        legal_actions=[Action("go", "move", {})],
        deadline_seconds=1.0,
        time_bank_seconds=0.0,
    )


def test_a_gateway_alive_but_not_admitting_for_longer_than_the_grace_costs_the_bot_nothing() -> None:
    world = World(admitting=[(30.0, 1e9)], back_at=31.0)  # 30 s not admitting, the grace is 5 s
    seat = seat_in(world)
    request = decision()
    assert seat.decide(request) == "go"
    assert world.calls[-2:] == ["start relay-g2", "decide decisions-g2"]  # resumed on the new gateway
    assert request.extra["excused_seconds"] >= 30.0 and request.extra["bot_seconds"] == pytest.approx(0.01)
    [lost, resumed] = seat.incidents
    assert lost["kind"] == "gateway_lost" and resumed["kind"] == "resumed"
    assert "with no gateway admitting at normal speed" in resumed["reason"]


def test_the_grace_counts_only_the_intervals_a_gateway_admits_in() -> None:
    # admitting 3 s, then a stall of 20 s, then admitting again: 3 s + 1 s of grace used, the bot is back
    world = World(admitting=[(0.0, 3.0), (23.0, 1e9)], back_at=24.0)
    assert seat_in(world, grace=5.0).decide(decision()) == "go"


def test_the_grace_runs_out_when_a_gateway_admits_normally_and_the_bot_never_returns() -> None:
    world = World(admitting=[(0.0, 1e9)], back_at=None)
    seat = seat_in(world, grace=5.0)
    with pytest.raises(SeatFault) as fault:
        seat.decide(decision())
    assert fault.value.kind == "disconnect" and "admitting at normal speed" in fault.value.reason
    assert 5.0 <= world.now <= 5.0 + 6 * STEP  # the grace, on the scripted clock


def test_a_gateway_that_reports_no_admission_state_counts_as_admitting_while_alive() -> None:
    world = World(claims=False, back_at=None)  # an older gateway: the grace runs as it always did
    with pytest.raises(SeatFault, match="did not reconnect"):
        seat_in(world, grace=5.0).decide(decision())


def test_no_gateway_admitting_for_gateway_return_aborts_the_match_unrated_never_a_forfeit() -> None:
    world = World(admitting=[], back_at=None)
    with pytest.raises(MatchAborted, match="no gateway alive and admitting"):
        seat_in(world, grace=5.0, gateway_return=20.0).decide(decision())
    assert 20.0 <= world.now <= 20.0 + 6 * STEP


def seat_waiting_at_the_start(world: World, *, grace: float, gateway_return: float = 60.0) -> RemoteSeat:
    """A seat whose bot has no stream when its match starts (its gateway restarted: lost from the start)."""
    world.lost = True
    seat = RemoteSeat(
        "bot",
        "bot",
        world,  # type: ignore[arg-type]
        reconnect_grace=grace,
        gateway_return=gateway_return,
        channels=world,  # type: ignore[arg-type]
        clock=world.clock,
    )
    seat.start(MatchInfo("m1", GAME, 2, {}, 0, ["house"], 1.0, 0.0))
    return seat


def test_the_start_grace_counts_only_while_a_gateway_admits() -> None:
    # the restarted gateway is alive but slow to admit for 20 s; the bot is back at 22 s, the grace is 5 s
    world = World(admitting=[(20.0, 1e9)], back_at=22.0)
    seat = seat_waiting_at_the_start(world, grace=5.0)
    assert seat.session is not None and seat.session.gateway_id == "g2"
    assert world.calls[-1] == "start relay-g2"


def test_a_bot_absent_at_the_start_with_gateways_admitting_is_called_off_unrated() -> None:
    from engine_service.referee.seats import SeatUnavailable

    world = World(admitting=[(0.0, 1e9)], back_at=None)
    with pytest.raises(SeatUnavailable, match="called off, unrated"):
        seat_waiting_at_the_start(world, grace=5.0)
    assert 5.0 <= world.now <= 5.0 + 6 * STEP


def test_no_gateway_admitting_at_the_start_for_gateway_return_retries_the_match() -> None:
    world = World(admitting=[], back_at=None)
    with pytest.raises(MatchAborted, match="no gateway admitting bots at normal speed"):
        seat_waiting_at_the_start(world, grace=5.0, gateway_return=20.0)
