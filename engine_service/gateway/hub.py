"""The gateway's sessions and relay logic as plain asyncio code: what the thin gRPC servicers call.

Layer: gateway core. It holds the open bot streams (`Session`), checks every message a bot sends (a bot can
only answer its own open requests, only for seats its stream holds), forwards relay calls from workers to
the right stream and waits for the answer under the deadline, and keeps the session registry current
(register, match counts, heartbeat, unregister; revocations polled from it). It runs no match loop and no
game rules, and it never blocks the event loop (registry calls go through `asyncio.to_thread`).

The streams and the bot's clock are `session.py`'s (`Session`, `Pending`). A bot's `Decision.debug` is cleaned
and cut (`referee.debug_text`) and passed on in the reply, never logged.

A relayed decision is not decoded: the worker's serialized `DecisionRequest` is framed into the bot's
`ServerMessage` with this gateway's deadline appended. The reply to the worker is made and handed to the
worker's decision connection in the loop step that reads the answer (`Hub.relay`'s `respond`), with no task
to wake.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import types
import uuid
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Generator, Iterable
from typing import Any, TypeVar

import grpc

from engine_service.gateway import metrics
from engine_service.gateway.admission import AdmissionMonitor
from engine_service.gateway.auth import BotIdentity, TokenVerifier
from engine_service.gateway.config import MIN_CLIENT_PING_INTERVAL_MS, GatewayConfig
from engine_service.gateway.loop_lag import LoopLag
from engine_service.gateway.protocol import bot_pb2, now_ms, relay_pb2
from engine_service.gateway.registry import SessionInfo, SessionRegistry, sessions_for_bot
from engine_service.gateway.session import (
    ENDED_MATCHES_KEPT,
    Answer,
    MatchSlot,
    Pending,
    Refusal,
    SendFailed,
    Session,
    Writer,
)
from engine_service.referee.debug_text import clean_debug
from engine_service.referee.match import legal_list
from engine_service.referee.seats import ECHO_CHARS, MAX_ACTION_ID_BYTES, clip, oversized_action_id

log = logging.getLogger("caravanserai.gateway")

Respond = Callable[[relay_pb2.DecisionReply], None]
T = TypeVar("T")
REVOKED = "the bot's token was revoked (or replaced by a new one); connect with the bot's current token"


_BOT_SIDE = (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED)  # the bot ended the stream (or its connection)


def _outcome_name(outcome: int) -> str:
    return str(relay_pb2.Outcome.Name(outcome))


class Hub:
    """All sessions of one gateway process, and the relay operations over them."""

    def __init__(
        self,
        config: GatewayConfig,
        verifier: TokenVerifier,
        registry: SessionRegistry,
        *,
        known_games: Iterable[str],
        gateway_id: str | None = None,
    ) -> None:
        self.config = config
        self.verifier = verifier
        self.registry = registry
        self.known_games = tuple(known_games)
        self.gateway_id = gateway_id or uuid.uuid4().hex[:12]
        self.sessions: dict[str, Session] = {}
        self.closed: OrderedDict[str, str] = OrderedDict()  # why the last sessions ended, by session id
        self.shutting_down = False
        self.draining = False  # `drain()`: no new streams or matches; streams leave as their matches end
        self.finished: str | None = None  # `finish()`: the message every stream is told in `Goodbye`
        self._open_lock = asyncio.Lock()
        self._loop = asyncio.get_running_loop()
        self._revocation_cursor = -1
        self._ending: set[asyncio.Future[None]] = set()  # `Session.end` tasks still writing their Error
        self.loop_lag = LoopLag(self._loop, on_stall=metrics.loop_stalled).start()
        self.admission = AdmissionMonitor()  # times the token checks and Hellos (admission.py)
        verifier.on_revoke(self._revoked_threadsafe)

    # --- limits ----------------------------------------------------------------------------------------
    def limits(self) -> bot_pb2.Limits:
        return bot_pb2.Limits(
            max_message_bytes=self.config.max_message_bytes,
            max_sessions_per_bot=self.config.max_sessions_per_bot,
            max_concurrent_matches=self.config.max_matches_per_stream,
            hello_timeout_ms=int(self.config.hello_timeout * 1000),
            min_keepalive_ping_interval_ms=MIN_CLIENT_PING_INTERVAL_MS,
            max_action_id_bytes=MAX_ACTION_ID_BYTES,
            max_echo_chars=ECHO_CHARS,
        )

    # --- opening and closing streams -------------------------------------------------------------------
    async def authenticate(self, token: str | None) -> BotIdentity:
        unauth = bot_pb2.ERROR_REASON_UNAUTHENTICATED
        if self.shutting_down:
            raise Refusal(
                grpc.StatusCode.UNAVAILABLE,
                bot_pb2.ERROR_REASON_SHUTTING_DOWN,
                "gateway shutting down; reconnect",
            )
        if not token:
            raise Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                unauth,
                "missing token: send metadata 'authorization: Bearer <token>'",
            )
        with self.admission.measure():
            identity = await self.verifier.verify(token)
        if identity is None:
            raise Refusal(grpc.StatusCode.UNAUTHENTICATED, unauth, "unknown or revoked bot token")
        return identity

    async def open_session(self, identity: BotIdentity, hello: bot_pb2.Hello, writer: Writer) -> Session:
        """Check the Hello against the bot's registration and the limits, register, send Welcome (timed as
        an admission step)."""
        with self.admission.measure():
            return await self._open_session(identity, hello, writer)

    async def _open_session(self, identity: BotIdentity, hello: bot_pb2.Hello, writer: Writer) -> Session:
        unknown = [g for g in hello.games if g not in identity.games or g not in self.known_games]
        if unknown:
            allowed = sorted(set(identity.games) & set(self.known_games))
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                bot_pb2.ERROR_REASON_UNKNOWN_GAME,
                f"games {unknown} are not registered for bot {identity.name!r} or not served here; "
                f"allowed: {allowed}",
            )
        games = tuple(hello.games) or tuple(g for g in identity.games if g in self.known_games)
        if not games:
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                bot_pb2.ERROR_REASON_UNKNOWN_GAME,
                f"bot {identity.name!r} is registered for no game this gateway serves ({list(self.known_games)})",
            )
        wanted = hello.max_concurrent_matches or 1
        capacity = max(1, min(wanted, identity.max_concurrent, self.config.max_matches_per_stream))
        async with self._open_lock:
            if self.shutting_down:  # `shutdown()`/`drain()` took their list of streams: this one is not on it
                raise _shutting_down("gateway shutting down; reconnect")
            existing = await asyncio.to_thread(sessions_for_bot, self.registry, identity.bot_id)
            count = len(
                {s.session_id for s in existing} | {s.session_id for s in self._local(identity.bot_id)}
            )
            if count >= self.config.max_sessions_per_bot:
                raise Refusal(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    bot_pb2.ERROR_REASON_TOO_MANY_SESSIONS,
                    f"bot {identity.name!r} already holds {count} stream(s); the limit is "
                    f"{self.config.max_sessions_per_bot} per bot",
                )
            session = Session(uuid.uuid4().hex, identity, games, capacity, hello, writer)
            self.sessions[session.session_id] = session
            now = time.time()
            await asyncio.to_thread(
                self.registry.register,
                SessionInfo(
                    session_id=session.session_id,
                    bot_id=identity.bot_id,
                    bot_name=identity.name,
                    gateway_id=self.gateway_id,
                    relay_address=self.config.advertised_relay,
                    decisions_address=self.config.decisions_advertise,
                    games=games,
                    capacity=capacity,
                    matches=0,
                    connected_at=now,
                    heartbeat_at=now,
                    asked=wanted,
                    bot_version=hello.bot_version[:64],
                ),
            )
        log.info(
            "session %s opened: bot %s (%s) games=%s capacity=%d",
            session.session_id,
            identity.bot_id,
            identity.name,
            games,
            capacity,
        )
        # a Welcome that cannot be written leaves the session closing (or being ended, its Error said): the
        # caller waits for that close like any other
        with contextlib.suppress(SendFailed):
            await session.send(
                bot_pb2.ServerMessage(
                    welcome=bot_pb2.Welcome(
                        session_id=session.session_id,
                        bot_id=identity.bot_id,
                        bot_name=identity.name,
                        games=games,
                        max_concurrent_matches=capacity,
                        limits=self.limits(),
                        server_time_unix_ms=now_ms(),
                        gateway_id=self.gateway_id,
                    )
                )
            )
        return session

    def _local(self, bot_id: str) -> list[Session]:
        return [s for s in self.sessions.values() if s.bot_id == bot_id]

    async def close_session(self, session: Session) -> None:
        """Forget a stream: answer its open requests as disconnected and remove it from the registry."""
        session.request_close(grpc.StatusCode.CANCELLED, "stream ended", force=True)
        close = session.closing.result()
        if self.sessions.pop(session.session_id, None) is None:
            return
        detail = f"the bot's stream ended: {close.details}" + (
            "" if close.code in _BOT_SIDE else f" ({close.code.name})"
        )
        self.closed[session.session_id] = detail
        while len(self.closed) > ENDED_MATCHES_KEPT:
            self.closed.popitem(last=False)
        for pending in list(session.pending.values()):
            pending.resolve(
                Answer(relay_pb2.OUTCOME_DISCONNECTED, detail=detail, gateway_shutdown=close.gateway_shutdown)
            )
        session.pending.clear()
        log.info("session %s closed: %s %s", session.session_id, close.code.name, close.details)
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self.registry.unregister, session.session_id)

    # --- messages from bots ----------------------------------------------------------------------------
    async def handle(self, session: Session, message: bot_pb2.BotMessage) -> None:
        """One message from a bot. A refused message gets an `Error` (the stream stays open)."""
        kind = message.WhichOneof("message")
        try:
            if kind == "decision":
                self._on_decision(session, message.decision)
            elif kind == "ping":
                await session.send(
                    bot_pb2.ServerMessage(
                        pong=bot_pb2.Pong(nonce=message.ping.nonce, server_time_unix_ms=now_ms())
                    )
                )
            elif kind == "resign":
                self._on_resign(session, message.resign)
            elif kind == "hello":
                raise Refusal(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    bot_pb2.ERROR_REASON_HELLO_EXPECTED,
                    "Hello was already received on this stream",
                    fatal=False,
                )
            else:
                raise Refusal(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    bot_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                    "empty BotMessage: set one of hello, decision, ping, resign",
                    fatal=False,
                )
        except Refusal as refusal:
            ids = {}
            if kind == "decision":
                ids = {"match_id": message.decision.match_id, "request_id": message.decision.request_id}
            elif kind == "resign":
                ids = {"match_id": message.resign.match_id}
            log.info("session %s: refused %s: %s", session.session_id, kind, refusal)
            with contextlib.suppress(SendFailed):
                await session.send(refusal.to_error(**ids))

    def _on_decision(self, session: Session, decision: bot_pb2.Decision) -> None:
        pending = session.pending.get(decision.request_id)
        if pending is None or (decision.match_id and decision.match_id != pending.match_id):
            here = decision.match_id in session.matches or decision.match_id in session.ended
            if not here or self._owned_elsewhere(session, decision.request_id):
                raise Refusal(
                    grpc.StatusCode.PERMISSION_DENIED,
                    bot_pb2.ERROR_REASON_NOT_YOUR_SEAT,
                    f"request {clip(decision.request_id)!r} of match {clip(decision.match_id)!r} is not for "
                    "a seat this stream holds",
                    fatal=False,
                )
            over = " (the match is over)" if decision.match_id not in session.matches else ""
            raise Refusal(
                grpc.StatusCode.FAILED_PRECONDITION,
                bot_pb2.ERROR_REASON_STALE_REQUEST,
                f"request {clip(decision.request_id)!r} is not open (already answered, timed out, or never "
                f"sent){over}",
                fatal=False,
            )
        del session.pending[decision.request_id]
        if pending.done:
            return
        debug = clean_debug(decision.debug) if decision.debug else ""
        too_long = oversized_action_id(decision.action_id)
        if not decision.action_id or too_long is not None:
            reason = too_long or "empty action id"
            detail = f"{reason} for request {pending.request_id!r}"
            pending.resolve(Answer(relay_pb2.OUTCOME_MALFORMED, detail=detail, debug=debug))
            self._notify(session, pending, "malformed", reason)
            return
        pending.resolve(Answer(relay_pb2.OUTCOME_OK, action_id=decision.action_id, debug=debug))
        if decision.action_id not in pending.legal:
            shown = clip(decision.action_id)
            self._notify(
                session,
                pending,
                "illegal",
                f"action {shown!r} is not legal at step {pending.step}; {legal_list(pending.legal)}",
                action_id=shown,
            )

    def _owned_elsewhere(self, session: Session, request_id: str) -> bool:
        return any(request_id in other.pending for other in self.sessions.values() if other is not session)

    def _on_resign(self, session: Session, resign: bot_pb2.Resign) -> None:
        if resign.match_id not in session.matches:
            raise Refusal(
                grpc.StatusCode.PERMISSION_DENIED,
                bot_pb2.ERROR_REASON_NOT_YOUR_SEAT,
                f"match {resign.match_id!r} is not played on this stream",
                fatal=False,
            )
        session.resigned.add(resign.match_id)
        reason = resign.reason or "no reason given"
        for request_id, pending in list(session.pending.items()):
            if pending.match_id == resign.match_id:
                del session.pending[request_id]
                pending.resolve(Answer(relay_pb2.OUTCOME_RESIGNED, detail=f"resigned: {reason}"))

    def _notify(
        self, session: Session, pending: Pending, kind: str, reason: str, action_id: str = ""
    ) -> None:
        from engine_service.gateway.protocol import FAULT_KINDS

        notice = bot_pb2.ServerMessage(
            fault_notice=bot_pb2.FaultNotice(
                match_id=pending.match_id,
                request_id=pending.request_id,
                fault=bot_pb2.Fault(
                    seat=pending.seat,
                    step=pending.step,
                    kind=FAULT_KINDS[kind],
                    reason=reason,
                    action_id=action_id,
                    fallback_action_id=pending.fallback,
                    forfeit=pending.call.fault_forfeits,
                ),
            )
        )
        task = asyncio.ensure_future(self._send_quietly(session, notice))
        task.add_done_callback(lambda t: t.exception())

    async def _send_quietly(self, session: Session, message: bot_pb2.ServerMessage) -> None:
        with contextlib.suppress(SendFailed):
            await session.send(message)

    # --- relay operations (called by workers) ----------------------------------------------------------
    async def start_match(self, session_id: str, match: bot_pb2.MatchStarted) -> relay_pb2.StartMatchResponse:
        def reply(outcome: int, detail: str = "") -> relay_pb2.StartMatchResponse:
            return relay_pb2.StartMatchResponse(outcome=outcome, detail=detail, gateway_id=self.gateway_id)

        session = self.sessions.get(session_id)
        if session is None or session.closing.done():
            return reply(
                relay_pb2.OUTCOME_NO_SESSION, f"no session {session_id} on gateway {self.gateway_id}"
            )
        if match.game_id not in session.games:
            return reply(
                relay_pb2.OUTCOME_WRONG_GAME, f"the session plays {list(session.games)}, not {match.game_id}"
            )
        slot = session.matches.get(match.match_id)
        if slot is None and self.draining:
            return reply(relay_pb2.OUTCOME_NO_SESSION, f"gateway {self.gateway_id} is draining")
        if slot is None:
            if len(session.matches) >= session.capacity:
                return reply(
                    relay_pb2.OUTCOME_AT_CAPACITY, f"the session plays {session.capacity} match(es) already"
                )
            slot = session.matches[match.match_id] = MatchSlot(match.game_id)
        slot.seats.add(match.seat)
        try:
            await session.send(bot_pb2.ServerMessage(match_started=match))
        except SendFailed as exc:
            return reply(relay_pb2.OUTCOME_DISCONNECTED, f"the bot's stream is closing: {exc}")
        await self._publish_matches(session)
        return reply(relay_pb2.OUTCOME_OK)

    def relay(self, call: relay_pb2.DecisionCall, respond: Respond) -> Pending | None:
        """Forward one decision to its bot; `respond` gets the reply when the answer is known (the bot's, the
        deadline or the stream's end), in the loop step that learns it. The request's write to the bot's
        stream starts before this returns. Returns the open request (`withdraw` it if nobody will want the
        reply), or None when it was answered at once."""
        session = self.sessions.get(call.session_id)
        if session is None:
            detail = self.closed.get(call.session_id, f"no session {call.session_id} here")
            respond(self._reply(call, Answer(relay_pb2.OUTCOME_NO_SESSION, detail=detail)))
            return None
        if call.match_id not in session.matches:
            detail = f"match {call.match_id} not started here"
            respond(self._reply(call, Answer(relay_pb2.OUTCOME_NO_SESSION, detail=detail)))
            return None
        if call.match_id in session.resigned:
            detail = "the bot resigned this match"
            respond(self._reply(call, Answer(relay_pb2.OUTCOME_RESIGNED, detail=detail)))
            return None

        def answered(pending: Pending, answer: Answer) -> None:
            self._answered(session, pending, answer, respond)

        pending = session.pending[call.request_id] = Pending(call, self._loop, answered, self.loop_lag)
        start_eagerly(self._send_request(session, pending))
        return pending

    async def _send_request(self, session: Session, pending: Pending) -> None:
        try:
            await session.send_request(pending)
        except SendFailed as exc:
            pending.resolve(Answer(relay_pb2.OUTCOME_DISCONNECTED, detail=str(exc)))

    def _answered(self, session: Session, pending: Pending, answer: Answer, respond: Respond) -> None:
        if session.pending.get(pending.request_id) is pending:
            del session.pending[pending.request_id]
        call = pending.call
        seconds = pending.bot_seconds()
        respond(self._reply(call, answer, seconds))
        if answer.outcome == relay_pb2.OUTCOME_TIMEOUT:
            self._notify(session, pending, "timeout", answer.detail)
        slot = session.matches.get(call.match_id)
        # counted just after the reply is on its way (the next loop turn), not before it
        self._loop.call_soon(
            metrics.decision_relayed,
            slot.game_id if slot else "",
            _outcome_name(answer.outcome),
            seconds,
            pending.excused,
        )

    def withdraw(self, pending: Pending) -> None:
        """The relay stream that wanted this answer is gone: the request closes unanswered (a late answer
        from the bot is then stale)."""
        pending.withdraw()
        session = self.sessions.get(pending.call.session_id)
        if session is not None and session.pending.get(pending.request_id) is pending:
            del session.pending[pending.request_id]

    def _reply(
        self, call: relay_pb2.DecisionCall, answer: Answer, seconds: float = 0.0
    ) -> relay_pb2.DecisionReply:
        return relay_pb2.DecisionReply(
            call_id=call.call_id,
            outcome=answer.outcome,
            action_id=answer.action_id,
            detail=answer.detail,
            bot_seconds=seconds,
            gateway_shutdown=answer.gateway_shutdown,
            gateway_id=self.gateway_id,
            debug=answer.debug,
        )

    async def end_match(self, session_id: str, ended: bot_pb2.MatchEnded) -> relay_pb2.EndMatchResponse:
        session = self.sessions.get(session_id)
        if session is None:
            return relay_pb2.EndMatchResponse(outcome=relay_pb2.OUTCOME_NO_SESSION)
        slot = session.matches.get(ended.match_id)
        if slot is None:
            return relay_pb2.EndMatchResponse(outcome=relay_pb2.OUTCOME_NO_SESSION)
        slot.seats.discard(ended.seat)
        if not slot.seats:
            del session.matches[ended.match_id]
            session.resigned.discard(ended.match_id)
            session.match_ended(ended.match_id)
        with contextlib.suppress(SendFailed):
            await session.send(bot_pb2.ServerMessage(match_ended=ended))
        if self.draining and not session.matches:
            self._move(session)
        await self._publish_matches(session)
        return relay_pb2.EndMatchResponse(outcome=relay_pb2.OUTCOME_OK)

    async def _publish_matches(self, session: Session) -> None:
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self.registry.set_matches, session.session_id, len(session.matches))

    # --- revocation, heartbeat, shutdown --------------------------------------------------------------
    def _revoked_threadsafe(self, bot_id: str) -> None:
        # A hub whose loop has ended (a stopped gateway in a long-lived process) holds no streams to drop.
        if self._loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # closed between the check and the call
            self._loop.call_soon_threadsafe(self.revoke, bot_id)

    def revoke(self, bot_id: str) -> None:
        """Drop every stream of a bot at once: `Error{fatal, UNAUTHENTICATED}`, then the status. A rotated
        token is revoked too (the ladder announces both alike)."""
        refusal = Refusal(
            grpc.StatusCode.UNAUTHENTICATED,
            bot_pb2.ERROR_REASON_UNAUTHENTICATED,
            REVOKED,
        )
        for session in self._local(bot_id):
            self._end(session, refusal)

    def _end(self, session: Session, refusal: Refusal, *, gateway_shutdown: bool = False) -> None:
        """`Session.end` in a task of its own (held until done): say why, then end the stream."""
        task = asyncio.ensure_future(session.end(refusal, gateway_shutdown=gateway_shutdown))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def heartbeat_loop(self) -> None:
        """Refresh this gateway's sessions in the registry and apply revocations published there."""
        next_beat = 0.0
        while True:
            try:
                now = self._loop.time()
                if now >= next_beat:
                    await asyncio.to_thread(
                        self.registry.heartbeat,
                        self.gateway_id,
                        self.config.advertised_relay,
                        list(self.sessions),
                    )
                    next_beat = now + self.config.heartbeat
                revoked, self._revocation_cursor = await asyncio.to_thread(
                    self.registry.revocations_since, self._revocation_cursor
                )
                for bot_id in revoked:
                    forget = getattr(self.verifier, "forget", None)
                    if forget is not None:  # a verifier with its own token list must stop accepting it too
                        forget(bot_id)
                    self.revoke(bot_id)
            except Exception:
                log.exception("registry heartbeat failed")
            await asyncio.sleep(min(0.5, self.config.heartbeat))

    def goodbye(self) -> bot_pb2.ServerMessage:
        return bot_pb2.ServerMessage(goodbye=bot_pb2.Goodbye(message=self.finished or ""))

    async def finish(self, message: str) -> None:
        """End every stream for good: `Goodbye{message}`, then status OK (a bot must not reconnect); streams
        opened from now on get the same at once."""
        self.finished = message
        for session in list(self.sessions.values()):
            with contextlib.suppress(SendFailed, TimeoutError):
                await asyncio.wait_for(session.send(self.goodbye()), 1.0)
            session.request_close(grpc.StatusCode.OK, f"finished: {message}", goodbye=message)

    async def drain(self) -> None:
        """Begin a rolling restart: refuse new streams, leave the registry (no worker seats a bot here again)
        and refuse new matches; a stream with no match closes at once with UNAVAILABLE, the others as their
        last match ends, so each bot reconnects (through the load balancer) to another gateway. `shutdown()`
        later moves whatever is still playing."""
        self.shutting_down = self.draining = True
        async with self._open_lock:  # a stream being opened is registered by now
            sessions = list(self.sessions.values())
        for session in sessions:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.registry.unregister, session.session_id)
            if not session.matches:
                self._move(session)

    def _move(self, session: Session) -> None:
        self._end(session, _shutting_down("gateway draining; reconnect"), gateway_shutdown=True)

    async def shutdown(self) -> None:
        """Close every stream with UNAVAILABLE (reconnect elsewhere) and leave the registry."""
        self.shutting_down = True
        refusal = _shutting_down("gateway shutting down; reconnect")
        async with self._open_lock:  # a stream being opened is registered by now (later ones are refused)
            sessions = list(self.sessions.values())
        # every stream at once: a bot slow to read its Error holds back no other
        await asyncio.gather(*(s.end(refusal, gateway_shutdown=True) for s in sessions))
        await asyncio.gather(*self._ending, return_exceptions=True)
        for session in list(self.sessions.values()):
            await self.close_session(session)
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self.registry.drop_gateway, gateway_id=self.gateway_id)
        self.loop_lag.stop()


def _shutting_down(message: str) -> Refusal:
    return Refusal(grpc.StatusCode.UNAVAILABLE, bot_pb2.ERROR_REASON_SHUTTING_DOWN, message)


def outcome_name(outcome: int) -> str:
    return _outcome_name(outcome)


@types.coroutine
def _resume(coro: Coroutine[Any, Any, T], awaited: Any) -> Generator[Any, Any, T]:
    """Drive a coroutine already started, from the point where it yielded `awaited` (what a task waits on),
    passing on what the task sends or throws (its cancellation) until the coroutine returns."""
    while True:
        try:
            sent = yield awaited
        except BaseException as exc:  # the task's cancellation goes to the coroutine
            try:
                awaited = coro.throw(exc)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
        else:
            try:
                awaited = coro.send(sent)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]


def start_eagerly(coro: Coroutine[Any, Any, T]) -> asyncio.Task[T] | None:
    """Run a coroutine's first step now, in the caller's step, and leave the rest to a task (what Python
    3.12's eager tasks do): a write starts at once (its bytes are on their way before the caller's next
    read), with no loop turn in between. None if the coroutine finished (or failed: logged) in that step."""
    try:
        awaited = coro.send(None)
    except StopIteration:
        return None
    except Exception:  # as a task's would, it fails alone, not the step that started it
        log.exception("eagerly started coroutine failed")
        return None
    return asyncio.ensure_future(_resume(coro, awaited))
