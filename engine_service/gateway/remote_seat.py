"""The remote seat: the referee's `Seat` for a connected bot, used in match worker processes.

Layer: worker side of the relay. It finds the bot's stream in the session registry, makes the relay's
control calls (StartMatch, EndMatch: synchronous gRPC to the gateway's relay address) and sends decisions
to the gateway's decision port (framed TCP, `relay_frames`), and turns the answers into action ids or
`SeatFault`s. It holds no game rules and never imports Django.

Connections: `relay_connection.py` (one shared TCP connection per decision address per process). The bot's
`DecisionRequest` is serialized here once and passes through the gateway undecoded.

Policy (documented in BOTS.md):
- the gateway waits for the bot's answer until the decision's deadline (decision time plus the bank left);
  no answer is a `timeout` fault, an empty action id `malformed`, a resignation `resign` (forfeit);
- when the bot's stream ends, the seat waits for the bot to reconnect (to any gateway) until the decision's
  deadline and resumes the match there (`MatchStarted` with `resumed`); if it does not come back in time, a
  `disconnect` fault (forfeit);
- when the gateway itself goes away (restart, crash), the seat waits for the bot to reconnect to another
  gateway; the `reconnect_grace` runs only while the registry says some other gateway is admitting bots at
  normal speed (its admission claim, admission.py: serving, its token checks and Hellos quick, its loop not
  stalled; an interval counts only when the claim held at both its ends), never while gateways are down,
  starting, warming up or slow to admit. Once no gateway has been admitting for `gateway_return` seconds in
  all, `MatchAborted` (unrated, never a forfeit). None of the wait is charged to the bot (`excused_seconds`),
  and it is kept as an incident of the record. If no gateway at all is alive, `MatchAborted`
  (infrastructure: the match is retried, unrated); if the gateway this worker cannot reach is still alive
  and still holds the bot's stream (the network between worker and gateway failed, not the bot),
  `MatchAborted` too; if gateways admit but the bot does not come back within its grace, a `disconnect`
  fault;
- at the start, a bot with no stream in the registry and no gateway alive either (a gateway restarting, a
  registry restarted empty before the gateways' next heartbeat writes their sessions again) waits, excused,
  for a gateway (`MatchAborted` after `gateway_return`), then up to `reconnect_grace` for the bot.
- the bot's clock is the gateway's (DESIGN D9): `request.extra["bot_seconds"]` is the sum of the
  gateway-measured times of the attempts that reached the bot (from writing the request to its stream to
  reading the answer), plus any wait for the bot to come back after its own stream ended. Attempts lost
  with their gateway, and the waits after them, are ours and not counted.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import grpc

from engine_service.gateway.protocol import (
    add_legal_actions,
    bot_pb2,
    dumps,
    match_ended_to_proto,
    relay_pb2,
)
from engine_service.gateway.registry import (
    HostState,
    SessionInfo,
    SessionRegistry,
    bot_host_states,
    sessions_for_bot,
)
from engine_service.gateway.relay_connection import CHANNELS, RELAY_MARGIN_SECONDS, RelayChannels
from engine_service.referee.seats import (
    DecisionRequest,
    MatchAborted,
    MatchInfo,
    Seat,
    SeatFault,
    SeatUnavailable,
)

CONTROL_TIMEOUT_SECONDS = 5.0  # StartMatch / EndMatch
POLL_SECONDS = 0.05
GATEWAY_RETURN_SECONDS = 60.0  # in all, a seat's wait with no gateway alive (or admitting, after a loss)
HOST_RETURN_SECONDS = 120.0  # in all, a seat's wait for a hosted bot whose bot host is down
_GATEWAY_DOWN = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
)


_BOT_FAULTS = (relay_pb2.OUTCOME_TIMEOUT, relay_pb2.OUTCOME_MALFORMED, relay_pb2.OUTCOME_RESIGNED)


class _DecisionClock:
    """One decision's times: its deadline on the worker's clock, the bot's time (gateway-measured), and the
    excused time (waits after losing a gateway, which also restart the decision's full time)."""

    def __init__(self, now: float, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = now + seconds
        self.bot = 0.0
        self.excused = 0.0

    def left(self, now: float) -> float:
        return self.deadline - now

    def excuse(self, seconds: float) -> None:
        self.excused += seconds

    def restart(self, now: float) -> None:
        self.deadline = now + self.seconds


def _fault(reply: relay_pb2.DecisionReply, request: DecisionRequest) -> SeatFault:
    if reply.outcome == relay_pb2.OUTCOME_TIMEOUT:
        return SeatFault(
            "timeout",
            f"no answer within {request.deadline_seconds:.2f}s (decision time plus time bank) at step "
            f"{request.step}",
        )
    if reply.outcome == relay_pb2.OUTCOME_MALFORMED:
        return SeatFault("malformed", reply.detail or "unreadable answer")
    return SeatFault("resign", reply.detail or "resigned")


class RemoteSeat(Seat):
    """A registered bot playing through whichever gateway holds its stream."""

    kind = "remote"
    bot_id: str  # always set: the registered bot this seat plays for

    def __init__(
        self,
        bot_id: str,
        name: str,
        registry: SessionRegistry,
        *,
        reconnect_grace: float = 10.0,
        start_grace: float | None = None,
        gateway_return: float = GATEWAY_RETURN_SECONDS,
        host_return: float = HOST_RETURN_SECONDS,
        channels: RelayChannels = CHANNELS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot_id = str(bot_id)
        self.name = name
        self.registry = registry
        self.reconnect_grace = reconnect_grace
        self.start_grace = reconnect_grace if start_grace is None else start_grace
        self.gateway_return = gateway_return
        self.host_return = host_return
        self.channels = channels
        self.clock = clock
        self.incidents: list[dict[str, Any]] = []
        self.session: SessionInfo | None = None
        self.info: MatchInfo | None = None
        self._step = 0

    # --- the Seat interface ------------------------------------------------------------------------------
    def start(self, info: MatchInfo) -> None:
        """Seat the bot on one of its streams. With no gateway alive (restarting, or a registry that lost
        its data and is not written again yet), wait for one (excused; `MatchAborted` after
        `gateway_return`); then a bot with no stream is waited for up to `start_grace` (by default the
        reconnect grace), counted only while some gateway admits bots at normal speed, before the match is
        called off (`SeatUnavailable`: unrated, never a forfeit; `MatchAborted` once no gateway has been
        admitting for `gateway_return` seconds)."""
        self.info = info
        if self._bind(resumed=False, exclude_gateway=None):
            return
        if not self._alive_gateways(lost=None):
            self._wait_for_a_gateway(None, f"to seat bot {self.bot_id}", resumed=False)
        if self.session is not None:
            return
        back, unadmitted = self._wait_counting_grace(
            lambda: self._admitting_elsewhere(None),
            self.gateway_return,
            grace=self.start_grace,
            resumed=False,
        )
        if not back and unadmitted >= self.gateway_return:
            raise MatchAborted(
                f"no gateway admitting bots at normal speed for {self.gateway_return:g}s while bot "
                f"{self.bot_id} was to be seated: the match is retried, unrated"
            )
        if not back:
            raise SeatUnavailable(
                f"bot {self.bot_id} had no stream open for {info.game_id} with room, and none within "
                f"{self.start_grace:g}s: the match is called off, unrated"
            )

    def decide(self, request: DecisionRequest) -> str:
        self._step = request.step
        message = bot_pb2.DecisionRequest(
            match_id=request.match_id,
            request_id=request.request_id,
            seat=request.seat,
            step=request.step,
            observation_json=dumps(request.observation),
            time_bank_ms=max(0, int(request.time_bank_seconds * 1000)),
        )
        add_legal_actions(message, request.legal_actions)
        legal_ids = [a.id for a in request.legal_actions]
        clock = _DecisionClock(self.clock(), request.deadline_seconds)
        try:
            return self._decide(request, message, legal_ids, clock)
        finally:
            request.extra["excused_seconds"] = clock.excused
            request.extra["bot_seconds"] = clock.bot

    def _decide(
        self,
        request: DecisionRequest,
        message: bot_pb2.DecisionRequest,
        legal_ids: list[str],
        clock: _DecisionClock,
    ) -> str:
        while True:
            if self.session is None:
                raise SeatFault("disconnect", "the bot has no stream")
            session = self.session
            try:
                reply = self._relay(
                    session, message, legal_ids, clock.left(self.clock()), forfeits=request.fault_forfeits
                )
            except grpc.RpcError as exc:
                if exc.code() not in _GATEWAY_DOWN:
                    raise MatchAborted(
                        f"relay {session.relay_address} refused: {exc.code().name} {exc.details()}"
                    ) from exc
                clock.excuse(self._survive_gateway_loss(session, f"{exc.code().name}: {exc.details()}"))
                clock.restart(self.clock())
                continue
            if reply.debug:  # the bot's text for its owner (`referee.debug_text`), kept by the referee
                request.extra["debug"] = reply.debug
            if reply.outcome == relay_pb2.OUTCOME_OK:
                clock.bot += reply.bot_seconds
                return str(reply.action_id)
            if reply.outcome in _BOT_FAULTS:
                clock.bot += reply.bot_seconds
                raise _fault(reply, request)
            # DISCONNECTED or NO_SESSION: the stream ended, or the gateway restarted and forgot it
            if reply.gateway_shutdown or reply.gateway_id != session.gateway_id:  # ours, not the bot's
                clock.excuse(self._survive_gateway_loss(session, reply.detail or "gateway restarted"))
                clock.restart(self.clock())
                continue
            clock.bot += reply.bot_seconds
            if self._resume_after_disconnect(session, clock):
                continue
            raise SeatFault(
                "disconnect",
                f"at step {request.step}, {reply.detail or 'the bot has no stream here'}; it did not "
                "reconnect before the decision's deadline",
            )

    def _resume_after_disconnect(self, session: SessionInfo, clock: _DecisionClock) -> bool:
        """The bot's own stream ended: wait for it on another stream until the deadline (its time). If its
        bot host is found down meanwhile (restarting, stopped), the whole wait is ours (`_survive_host_loss`)."""
        waited_from = self.clock()
        while not self._bind(resumed=True, exclude_gateway=None, exclude_session=session.session_id):
            host = self._host_down()
            if host is not None:
                clock.excuse(self._survive_host_loss(host, since=waited_from))
                clock.restart(self.clock())
                return True
            if self.clock() >= clock.deadline:
                clock.bot += self.clock() - waited_from
                return False
            time.sleep(POLL_SECONDS)
        clock.bot += self.clock() - waited_from
        return True

    def _host_down(self) -> HostState | None:
        """The bot host that ran this bot, when every host running it is down now (its claim lapsed, or
        withdrawn as it stopped); None for a bot no host runs, or one whose host is up."""
        try:
            hosts = bot_host_states(self.registry, self.bot_id)
        except Exception as exc:
            raise MatchAborted(f"session registry unavailable: {exc}") from exc
        now = time.time()
        if not hosts or any(h.ready(now) for h in hosts):
            return None
        return max(hosts, key=lambda h: h.reported_at)

    def _survive_host_loss(self, host: HostState, *, since: float) -> float:
        """The bot host running this bot is down: wait (excused) for the bot on a new stream, the grace
        counting only while a host running it is up; `MatchAborted` after `host_return` seconds without one.
        Returns the seconds waited since `since`."""
        seat, step = (self.info.seat if self.info else -1), self._step
        lost = f"bot host {host.host_id} is down (restarting or stopped)"
        self.incidents.append({"seat": seat, "step": step, "kind": "bot_host_lost", "reason": lost})
        back, down = self._wait_counting_grace(lambda: self._host_down() is None, self.host_return)
        if not back and down >= self.host_return:
            raise MatchAborted(f"{lost} for {self.host_return:g}s: the match is retried, unrated")
        if not back:
            raise SeatFault(
                "disconnect",
                f"at step {step} its {lost}; the host was back but the bot did not reconnect within "
                f"{self.reconnect_grace:g}s (and {down:.1f}s while the host was down, not counted)",
            )
        waited = self.clock() - since
        reason = f"bot back after {waited:.2f}s ({down:.2f}s of it with its host down)"
        self.incidents.append({"seat": seat, "step": step, "kind": "resumed", "reason": reason})
        return waited

    def _wait_counting_grace(
        self,
        up: Callable[[], bool],
        limit: float,
        exclude_gateway: str | None = None,
        *,
        grace: float | None = None,
        resumed: bool = True,
    ) -> tuple[bool, float]:
        """Wait for the bot to be seated on a stream: (seated, seconds not counted). The grace (by default the
        reconnect grace) runs only over intervals with `up()` true at both ends; the wait ends unseated when
        the grace is spent or the uncounted seconds reach `limit`."""
        grace, uncounted = (self.reconnect_grace if grace is None else grace), 0.0
        last, was_up = self.clock(), up()
        while not self._bind(resumed=resumed, exclude_gateway=exclude_gateway):
            now, up_now = self.clock(), up()
            if was_up and up_now:
                grace -= now - last
            else:
                uncounted += now - last
            last, was_up = now, up_now
            if grace <= 0 or uncounted >= limit:
                return False, uncounted
            time.sleep(POLL_SECONDS)
        return True, uncounted

    def _relay(
        self,
        session: SessionInfo,
        message: bot_pb2.DecisionRequest,
        legal_ids: list[str],
        seconds: float,
        *,
        forfeits: bool = False,
    ) -> relay_pb2.DecisionReply:
        """One attempt over the process's shared decision connection to the session's gateway."""
        message.time_limit_ms = max(1, round(seconds * 1000))
        call = relay_pb2.DecisionCall(
            session_id=session.session_id,
            match_id=message.match_id,
            request_id=message.request_id,
            seat=message.seat,
            time_limit_ms=message.time_limit_ms,
            legal_action_ids=legal_ids,
            decision_request=message.SerializeToString(),
            fault_forfeits=forfeits,
        )
        if not session.decisions_address:
            raise MatchAborted(
                f"gateway {session.relay_address} registered no decision address for session "
                f"{session.session_id} (a gateway older than this worker): the match is retried, unrated"
            )
        connection = self.channels.connection(session.decisions_address)
        return connection.decide(call, message.time_limit_ms / 1000 + RELAY_MARGIN_SECONDS)

    def end(self, info: MatchInfo, summary: dict[str, Any]) -> None:
        self._send_ended(match_ended_to_proto(info.match_id, info.seat, summary))

    def abort(self, info: MatchInfo, reason: str) -> None:
        """Tell the bot its match was called off before it began (MatchEnded, reason "aborted")."""
        self._send_ended(
            bot_pb2.MatchEnded(
                match_id=info.match_id,
                seat=info.seat,
                reason="aborted",
                end_reason=bot_pb2.END_REASON_ABORTED,
                result_json=dumps({"reason": "aborted", "detail": reason}),
            )
        )

    def _send_ended(self, ended: bot_pb2.MatchEnded) -> None:
        if self.session is None:
            return
        session = self.session
        with contextlib.suppress(grpc.RpcError):  # the result is in the record either way
            self.channels.stub(session.relay_address).EndMatch(
                relay_pb2.EndMatchRequest(session_id=session.session_id, ended=ended),
                timeout=CONTROL_TIMEOUT_SECONDS,
            )

    # --- binding to a stream -----------------------------------------------------------------------------
    def _match_started(self, resumed: bool) -> bot_pb2.MatchStarted:
        info = self.info
        assert info is not None
        return bot_pb2.MatchStarted(
            match_id=info.match_id,
            game_id=info.game_id,
            num_players=info.num_players,
            seat=info.seat,
            opponents=info.opponents,
            options_json=dumps(info.options),
            time_control=bot_pb2.TimeControl(
                decision_ms=int(info.decision_seconds * 1000),
                time_bank_ms=int(info.time_bank_seconds * 1000),
                max_faults=info.max_faults,
            ),
            resumed=resumed,
        )

    def _bind(
        self, *, resumed: bool, exclude_gateway: str | None, exclude_session: str | None = None
    ) -> bool:
        """Seat the bot on one of its live streams (most free capacity first). False if none would take it."""
        assert self.info is not None
        try:
            candidates = sessions_for_bot(self.registry, self.bot_id, self.info.game_id)
        except Exception as exc:
            raise MatchAborted(f"session registry unavailable: {exc}") from exc
        for session in candidates:
            if session.gateway_id == exclude_gateway or session.session_id == exclude_session:
                continue
            try:
                reply = self.channels.stub(session.relay_address).StartMatch(
                    relay_pb2.StartMatchRequest(
                        session_id=session.session_id, match=self._match_started(resumed)
                    ),
                    timeout=CONTROL_TIMEOUT_SECONDS,
                )
            except grpc.RpcError:
                continue
            if reply.outcome == relay_pb2.OUTCOME_OK:
                self.session = session
                if not resumed:
                    self.version = session.bot_version  # the version it started the match with
                return True
        return False

    def _still_held_by(self, lost: SessionInfo) -> bool:
        """The unreachable gateway is alive (heartbeating) and still registers a stream of this bot."""
        try:
            alive = lost.gateway_id in self.registry.live_gateways()
            sessions = sessions_for_bot(self.registry, self.bot_id)
        except Exception as exc:
            raise MatchAborted(f"session registry unavailable: {exc}") from exc
        return alive and any(s.gateway_id == lost.gateway_id for s in sessions)

    def _alive_gateways(self, *, lost: str | None) -> set[str]:
        """Ids of the gateways alive now, but `lost`; an unreachable registry is ours: `MatchAborted`."""
        try:
            return set(self.registry.live_gateways()) - {lost}
        except Exception as exc:
            raise MatchAborted(f"session registry unavailable: {exc}") from exc

    def _wait_for_a_gateway(self, lost: str | None, reason: str, *, resumed: bool = True) -> None:
        """Wait (excused) until a gateway other than the `lost` one is alive, or the bot is seated already;
        `MatchAborted` after `gateway_return` seconds."""
        until = self.clock() + self.gateway_return
        while not self._alive_gateways(lost=lost):
            if self._bind(resumed=resumed, exclude_gateway=lost):
                return
            if self.clock() >= until:
                raise MatchAborted(f"no gateway alive for {self.gateway_return:g}s ({reason})")
            time.sleep(POLL_SECONDS)

    def _survive_gateway_loss(self, lost: SessionInfo, reason: str) -> float:
        """The gateway holding the bot went away: wait (excused) for the bot on another stream."""
        started = self.clock()
        self.session = None
        step = self._step
        seat = self.info.seat if self.info else -1
        self.incidents.append(
            {
                "seat": seat,
                "step": step,
                "kind": "gateway_lost",
                "reason": f"gateway {lost.relay_address}: {reason}",
            }
        )
        back, unadmitted = self._wait_for_the_bot(lost, reason)
        if back:
            assert self.session is not None
            waited = self.clock() - started
            self.incidents.append(
                {
                    "seat": seat,
                    "step": step,
                    "kind": "resumed",
                    "reason": f"bot back on gateway {self.session.relay_address} after {waited:.2f}s "
                    f"({unadmitted:.2f}s of it with no gateway admitting at normal speed)",
                }
            )
            return waited
        if not self._alive_gateways(lost=lost.gateway_id):
            raise MatchAborted(f"no gateway alive after losing {lost.relay_address} ({reason})")
        if self._still_held_by(lost):
            raise MatchAborted(
                f"gateway {lost.relay_address} still holds the bot's stream but this worker cannot reach it "
                f"({reason}): the network between them is ours, so the match is retried, unrated"
            )
        raise SeatFault(
            "disconnect",
            f"gateway {lost.relay_address} went away at step {step} ({reason}) and the bot did not reconnect "
            f"within {self.reconnect_grace:g}s of gateways admitting at normal speed (and {unadmitted:.1f}s "
            "while none was, not counted)",
        )

    def _admitting_elsewhere(self, lost: str | None) -> bool:
        """Some live gateway but `lost` claims to admit bots at normal speed now; an unreachable registry is
        ours: `MatchAborted`."""
        try:
            states = self.registry.gateway_states()
        except Exception as exc:
            raise MatchAborted(f"session registry unavailable: {exc}") from exc
        now = time.time()
        return any(state.admitting(now) for gateway_id, state in states.items() if gateway_id != lost)

    def _wait_for_the_bot(self, lost: SessionInfo, reason: str) -> tuple[bool, float]:
        """Wait for the bot on a stream of another gateway: (seated, seconds no gateway was admitting). The
        grace runs only over intervals with another gateway admitting at both ends; `MatchAborted` once the
        intervals without one reach `gateway_return` seconds."""
        back, unadmitted = self._wait_counting_grace(
            lambda: self._admitting_elsewhere(lost.gateway_id), self.gateway_return, lost.gateway_id
        )
        if not back and unadmitted >= self.gateway_return:
            raise MatchAborted(
                f"no gateway alive and admitting bots at normal speed for {self.gateway_return:g}s after "
                f"losing {lost.relay_address} ({reason}): the match is retried, unrated"
            )
        return back, unadmitted
