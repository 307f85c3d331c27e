"""The remote seat: the referee's `Seat` for a connected bot, used in match worker processes.

Layer: worker side of the relay. It finds the bot's stream in the session registry, calls the relay of the
gateway holding it (synchronous gRPC; channels are created lazily per process, so after a fork each worker
gets its own), and turns the answers into action ids or `SeatFault`s. It holds no game rules and never
imports Django.

Policy (documented in BOTS.md):
- the gateway waits for the bot's answer until the decision's deadline (decision time plus the bank left);
  no answer is a `timeout` fault, an empty action id `malformed`, a resignation `resign` (forfeit);
- when the bot's stream ends, the seat waits for the bot to reconnect (to any gateway) until the decision's
  deadline and resumes the match there (`MatchStarted` with `resumed`); if it does not come back in time, a
  `disconnect` fault (forfeit);
- when the gateway itself goes away (restart, crash), the wait for the bot to reconnect lasts up to
  `reconnect_grace` and is not charged to the bot (`excused_seconds`); it is kept as an incident of the
  record. If no gateway at all is alive, `MatchAborted` (infrastructure: the match is retried, unrated);
  if gateways are alive but the bot does not come back, a `disconnect` fault.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc

from engine_service.gateway.protocol import (
    bot_pb2,
    dumps,
    legal_actions_to_proto,
    match_ended_to_proto,
    relay_pb2,
    relay_pb2_grpc,
)
from engine_service.gateway.registry import SessionInfo, SessionRegistry, sessions_for_bot
from engine_service.referee.seats import DecisionRequest, MatchAborted, MatchInfo, Seat, SeatFault

RELAY_MARGIN_SECONDS = 2.0  # beyond the bot's deadline, for the gateway's reply to come back
CONTROL_TIMEOUT_SECONDS = 5.0  # StartMatch / EndMatch
POLL_SECONDS = 0.05
_GATEWAY_DOWN = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
)


class RelayChannels:
    """One channel per relay address per process; rebuilt after a fork (gRPC channels must not cross one)."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._stubs: dict[str, relay_pb2_grpc.RelayServiceStub] = {}
        self._channels: dict[str, grpc.Channel] = {}
        self._lock = threading.Lock()

    def stub(self, address: str) -> relay_pb2_grpc.RelayServiceStub:
        with self._lock:
            if os.getpid() != self._pid:  # forked: the parent's channels are unusable here
                self._pid, self._stubs, self._channels = os.getpid(), {}, {}
            stub = self._stubs.get(address)
            if stub is None:
                channel = grpc.insecure_channel(
                    address,
                    options=[
                        ("grpc.max_send_message_length", 64 * 1024 * 1024),
                        ("grpc.max_receive_message_length", 64 * 1024 * 1024),
                        ("grpc.enable_retries", 0),
                        ("grpc.initial_reconnect_backoff_ms", 100),
                        ("grpc.max_reconnect_backoff_ms", 1000),
                    ],
                )
                self._channels[address] = channel
                stub = self._stubs[address] = relay_pb2_grpc.RelayServiceStub(channel)
            return stub

    def forget(self, address: str) -> None:
        with self._lock:
            channel = self._channels.pop(address, None)
            self._stubs.pop(address, None)
        if channel is not None:
            channel.close()


CHANNELS = RelayChannels()


class _StreamEnded(grpc.RpcError):
    """The gateway closed a relay stream without a status (treated as the gateway going away)."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "relay stream ended"


class Watchdog:
    """Cancels relay calls that outlive their timeout: one thread per process, checking ten times a second."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watched: dict[int, tuple[float, Any]] = {}
        self._next = 0
        self._pid = 0

    def watch(self, call: Any, timeout: float) -> int:
        with self._lock:
            if self._pid != os.getpid():  # first use in this process (or after a fork): start the thread
                self._pid = os.getpid()
                self._watched = {}
                threading.Thread(target=self._run, name="relay-watchdog", daemon=True).start()
            self._next += 1
            self._watched[self._next] = (time.monotonic() + timeout, call)
            return self._next

    def release(self, token: int) -> None:
        with self._lock:
            self._watched.pop(token, None)

    def _run(self) -> None:
        while True:
            time.sleep(0.1)
            now = time.monotonic()
            with self._lock:
                late = [(t, call) for t, (deadline, call) in self._watched.items() if deadline < now]
                for token, _ in late:
                    del self._watched[token]
            for _, call in late:
                call.cancel()


WATCHDOG = Watchdog()


class RemoteSeat(Seat):
    """A registered bot playing through whichever gateway holds its stream."""

    kind = "remote"

    def __init__(
        self,
        bot_id: str,
        name: str,
        registry: SessionRegistry,
        *,
        reconnect_grace: float = 10.0,
        channels: RelayChannels = CHANNELS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bot_id = str(bot_id)
        self.name = name
        self.registry = registry
        self.reconnect_grace = reconnect_grace
        self.channels = channels
        self.clock = clock
        self.incidents: list[dict[str, Any]] = []
        self.session: SessionInfo | None = None
        self._stream: tuple[str, queue.SimpleQueue[Any], Any] | None = None
        self.info: MatchInfo | None = None
        self._step = 0

    # --- the Seat interface ------------------------------------------------------------------------------
    def start(self, info: MatchInfo) -> None:
        self.info = info
        if not self._bind(resumed=False, exclude_gateway=None):
            raise SeatFault(
                "disconnect", f"bot {self.bot_id} has no stream open for {info.game_id} with room"
            )

    def decide(self, request: DecisionRequest) -> str:
        self._step = request.step
        message = bot_pb2.DecisionRequest(
            match_id=request.match_id,
            request_id=request.request_id,
            seat=request.seat,
            step=request.step,
            observation_json=dumps(request.observation),
            legal_actions=legal_actions_to_proto(request.legal_actions),
            time_limit_ms=max(1, int(request.deadline_seconds * 1000)),
            time_bank_ms=max(0, int(request.time_bank_seconds * 1000)),
        )
        deadline = self.clock() + request.deadline_seconds
        excused = 0.0
        while True:
            if self.session is None:
                raise SeatFault("disconnect", "the bot has no stream")
            session = self.session
            try:
                reply = self._relay(
                    relay_pb2.DecideRequest(session_id=session.session_id, request=message),
                    message.time_limit_ms / 1000 + RELAY_MARGIN_SECONDS,
                )
            except grpc.RpcError as exc:
                self._close_stream()
                if exc.code() not in _GATEWAY_DOWN:
                    raise MatchAborted(
                        f"relay {session.relay_address} refused: {exc.code().name} {exc.details()}"
                    ) from exc
                excused += self._survive_gateway_loss(session, f"{exc.code().name}: {exc.details()}")
                message.time_limit_ms = max(1, int(request.deadline_seconds * 1000))
                deadline = self.clock() + request.deadline_seconds
                continue
            outcome = reply.outcome
            if outcome == relay_pb2.OUTCOME_OK:
                request.extra["excused_seconds"] = excused
                return reply.action_id
            if outcome == relay_pb2.OUTCOME_TIMEOUT:
                raise SeatFault(
                    "timeout",
                    f"no answer within {request.deadline_seconds:.2f}s (decision time plus time bank) at step "
                    f"{request.step}",
                )
            if outcome == relay_pb2.OUTCOME_MALFORMED:
                raise SeatFault("malformed", reply.detail or "unreadable answer")
            if outcome == relay_pb2.OUTCOME_RESIGNED:
                raise SeatFault("resign", reply.detail or "resigned")
            # DISCONNECTED or NO_SESSION: the stream ended, or the gateway restarted and forgot it
            if reply.gateway_shutdown or reply.gateway_id != session.gateway_id:
                excused += self._survive_gateway_loss(session, reply.detail or "gateway restarted")
                message.time_limit_ms = max(1, int(request.deadline_seconds * 1000))
                deadline = self.clock() + request.deadline_seconds
                continue
            remaining = deadline - self.clock()
            if remaining > 0 and self._wait_and_bind(remaining, exclude_session=session.session_id):
                message.time_limit_ms = max(1, int((deadline - self.clock()) * 1000))
                continue
            raise SeatFault(
                "disconnect",
                f"the bot's stream ended at step {request.step} ({reply.detail}) and it did not reconnect before "
                "the decision's deadline",
            )

    def _relay(self, request: relay_pb2.DecideRequest, timeout: float) -> relay_pb2.DecideResponse:
        """One decision over this seat's relay stream (opened on first use, per gateway); the watchdog
        cancels the stream if the gateway does not answer within `timeout` (a stuck gateway never hangs a
        match)."""
        assert self.session is not None
        if self._stream is None or self._stream[0] != self.session.relay_address:
            self._close_stream()
            outbox: queue.SimpleQueue[relay_pb2.DecideRequest | None] = queue.SimpleQueue()
            call = self.channels.stub(self.session.relay_address).DecideStream(iter(outbox.get, None))
            self._stream = (self.session.relay_address, outbox, call)
        _, outbox, call = self._stream
        outbox.put(request)
        token = WATCHDOG.watch(call, timeout)
        try:
            return next(call)  # type: ignore[no-any-return]
        except StopIteration:
            raise _StreamEnded() from None
        finally:
            WATCHDOG.release(token)

    def _close_stream(self) -> None:
        if self._stream is not None:
            _, outbox, call = self._stream
            outbox.put(None)
            call.cancel()
            self._stream = None

    def end(self, info: MatchInfo, summary: dict[str, Any]) -> None:
        self._close_stream()
        if self.session is None:
            return
        ended = match_ended_to_proto(info.match_id, info.seat, summary)
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
                return True
        return False

    def _wait_and_bind(
        self, seconds: float, *, exclude_gateway: str | None = None, exclude_session: str | None = None
    ) -> bool:
        until = self.clock() + seconds
        while True:
            if self._bind(resumed=True, exclude_gateway=exclude_gateway, exclude_session=exclude_session):
                return True
            if self.clock() >= until:
                return False
            time.sleep(POLL_SECONDS)

    def _survive_gateway_loss(self, lost: SessionInfo, reason: str) -> float:
        """The gateway holding the bot went away: wait (excused) for the bot on another stream."""
        started = self.clock()
        self._close_stream()
        self.channels.forget(lost.relay_address)
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
        if self._wait_and_bind(self.reconnect_grace, exclude_gateway=lost.gateway_id):
            assert self.session is not None
            waited = self.clock() - started
            self.incidents.append(
                {
                    "seat": seat,
                    "step": step,
                    "kind": "resumed",
                    "reason": f"bot back on gateway {self.session.relay_address} after {waited:.2f}s",
                }
            )
            return waited
        try:
            alive = self.registry.live_gateways()
        except Exception as exc:
            raise MatchAborted(f"session registry unavailable: {exc}") from exc
        if not alive or set(alive) <= {lost.gateway_id}:
            raise MatchAborted(f"no gateway alive after losing {lost.relay_address} ({reason})")
        raise SeatFault(
            "disconnect",
            f"gateway {lost.relay_address} went away at step {step} ({reason}) and the bot did not reconnect "
            f"within {self.reconnect_grace:g}s",
        )
