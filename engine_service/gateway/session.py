"""A bot's open stream on the gateway (`Session`) and its requests awaiting an answer (`Pending`, the bot's
clock): the state the hub (`hub.py`) works on.

A stream the gateway ends for a reason of its own (a revoked or rotated token, a drain, a shutdown, a bad
message) ends through `Session.end`: its `Error{fatal}` is written first and is the stream's last message,
then the same status. The bot's clock (DESIGN D9) is `Pending`'s: it starts the moment the request is written
to the bot's stream, the deadline timer starts at that same moment, and it stops when the answer is read (or
the timer fires, or the stream ends). Time the gateway's own loop was stalled meanwhile (`loop_lag.LoopLag`)
is taken off the bot's seconds (`Pending.excused`), and a deadline timer that fires while the stalls mean the
bot has not used its time yet is set again for the rest.

Layer: gateway core, plain asyncio; no game rules, no registry calls, never imports Django.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import grpc

from engine_service.gateway.auth import BotIdentity
from engine_service.gateway.loop_lag import LoopLag
from engine_service.gateway.protocol import bot_pb2, frame_decision_request, now_ms, relay_pb2
from engine_service.referee.seats import clip

log = logging.getLogger("caravanserai.gateway")

Writer = Callable[[bot_pb2.ServerMessage | bytes], Awaitable[None]]
ENDED_MATCHES_KEPT = 256  # per session: late answers to these are STALE_REQUEST, not NOT_YOUR_SEAT
REARM_MIN_SECONDS = 0.001  # a deadline timer left with less than this of the bot's time times out
FATAL_WRITE_SECONDS = 1.0  # how long a stream being ended waits for its `Error{fatal}` to be written


class Refusal(Exception):
    """A refused bot message: a gRPC status code, a protocol `ErrorReason` and a message for the owner."""

    def __init__(self, code: grpc.StatusCode, reason: int, message: str, *, fatal: bool = True) -> None:
        self.code = code
        self.reason = reason
        self.message = message
        self.fatal = fatal
        super().__init__(f"{code.name}: {message}")

    def to_error(self, *, match_id: str = "", request_id: str = "") -> bot_pb2.ServerMessage:
        return bot_pb2.ServerMessage(
            error=bot_pb2.Error(
                status_code=self.code.value[0],
                reason=self.reason,
                message=self.message,
                match_id=clip(match_id),
                request_id=clip(request_id),
                fatal=self.fatal,
            )
        )


class SendFailed(Exception):
    """The bot's stream could not take a message (it is closing)."""


@dataclass
class Answer:
    outcome: int
    action_id: str = ""
    detail: str = ""
    gateway_shutdown: bool = False
    debug: str = ""  # the bot's `Decision.debug`, cleaned (`clean_debug`)


class Pending:
    """A decision request open on a bot's stream, and the bot's clock for it (DESIGN D9). The first answer
    (the bot's, the deadline timer's or the stream's end) is handed to `on_answer` at once. The clock runs
    from the request written to the answer read, less `excused`: the seconds `lag` found the loop stalled
    in between."""

    def __init__(
        self,
        call: relay_pb2.DecisionCall,
        loop: asyncio.AbstractEventLoop,
        on_answer: Callable[[Pending, Answer], None],
        lag: LoopLag,
    ) -> None:
        self.call = call
        self.match_id = call.match_id
        self.request_id = call.request_id
        self.seat = call.seat
        self.answer: Answer | None = None
        self.sent_at: float | None = None
        self.answered_at: float | None = None
        self.excused = 0.0  # seconds of the loop's stalls between written and read, not the bot's
        self._lag = lag
        self._stall_mark = 0.0  # the loop's stalled seconds when the request was written
        self._loop = loop
        self._on_answer = on_answer
        self._timer: asyncio.TimerHandle | None = None

    @property
    def done(self) -> bool:
        return self.answer is not None

    @property
    def step(self) -> int:
        tail = self.request_id.rsplit(":", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    @property
    def legal(self) -> Sequence[str]:
        legal: Sequence[str] = self.call.legal_action_ids
        return legal

    @property
    def fallback(self) -> str:
        return self.call.legal_action_ids[0] if self.call.legal_action_ids else ""

    def start(self) -> bytes:
        """At the moment of writing: start the clock and the deadline timer, frame the request."""
        # the clock reads time.monotonic(), not the loop's time: uvloop's is cached per loop turn, in ms
        self.sent_at = time.monotonic()
        self._stall_mark = self._lag.stalled(self.sent_at)
        limit_ms = self.call.time_limit_ms
        self._timer = self._loop.call_later(limit_ms / 1000.0, self._expire)
        return frame_decision_request(self.call.decision_request, now_ms() + limit_ms)

    def _excused_until(self, now: float) -> float:
        if self.sent_at is None:
            return 0.0
        return max(0.0, min(now - self.sent_at, self._lag.stalled(now) - self._stall_mark))

    def _expire(self) -> None:
        """The deadline timer: a timeout, unless the loop's stalls mean the bot still has time (the timer
        fired late, or the wait was ours); then it is set again for what the bot has left."""
        limit = self.call.time_limit_ms / 1000.0
        now = time.monotonic()
        assert self.sent_at is not None  # the timer starts with the clock
        left = limit - (now - self.sent_at - self._excused_until(now))
        if left >= REARM_MIN_SECONDS and self.answer is None:
            self._timer = self._loop.call_later(left, self._expire)
            return
        excused = self._excused_until(now)
        ours = f" (and {excused:.2f}s of the gateway's own stalls, not counted)" if excused >= 0.005 else ""
        self.resolve(Answer(relay_pb2.OUTCOME_TIMEOUT, detail=f"no answer within {limit:.2f}s{ours}"))

    def resolve(self, answer: Answer) -> None:
        """The first answer wins (the bot's, the timer's or the stream's end); the clock stops there."""
        if self.answer is None:
            self.answered_at = time.monotonic()
            self.excused = self._excused_until(self.answered_at)
            self.answer = answer
            self.stop_timer()
            self._on_answer(self, answer)

    def withdraw(self) -> None:
        """Nobody waits for the answer any more (the worker's stream ended): stop the timer, tell no one."""
        if self.answer is None:
            self.answer = Answer(relay_pb2.OUTCOME_UNSPECIFIED, detail="withdrawn")
            self.stop_timer()

    def stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def bot_seconds(self) -> float:
        """The bot's time: from written to read (or the timeout, or the stream's end), less `excused`."""
        if self.sent_at is None or self.answered_at is None:
            return 0.0
        return max(0.0, self.answered_at - self.sent_at - self.excused)


@dataclass
class MatchSlot:
    game_id: str
    seats: set[int] = field(default_factory=set)


@dataclass
class Close:
    code: grpc.StatusCode
    details: str
    gateway_shutdown: bool = False
    goodbye: str | None = None  # a final close: `Goodbye` was sent, the stream ends OK


class Session:
    """One bot stream: its identity, capacity, matches, open requests and a serialised writer."""

    def __init__(
        self,
        session_id: str,
        identity: BotIdentity,
        games: tuple[str, ...],
        capacity: int,
        hello: bot_pb2.Hello,
        writer: Writer,
    ) -> None:
        self.session_id = session_id
        self.identity = identity
        self.games = games
        self.capacity = capacity
        self.hello = hello
        self.connected_at = time.time()
        self.matches: dict[str, MatchSlot] = {}
        self.pending: dict[str, Pending] = {}
        self.resigned: set[str] = set()
        self.ended: OrderedDict[str, None] = OrderedDict()  # the last matches that ended on this stream
        self.closing: asyncio.Future[Close] = asyncio.get_running_loop().create_future()
        self.fatal: Refusal | None = None  # set by `end()`: its Error is the last message of the stream
        self._writer = writer
        self._lock = asyncio.Lock()

    @property
    def bot_id(self) -> str:
        return self.identity.bot_id

    async def send(self, message: bot_pb2.ServerMessage | bytes) -> None:
        self._check_open()
        async with self._lock:
            self._check_open()
            await self._write(message)

    async def send_request(self, pending: Pending) -> None:
        """Write a decision request; its clock starts as it is written (after any write ahead of it)."""
        self._check_open()
        async with self._lock:
            self._check_open()
            await self._write(pending.start())

    def _check_open(self) -> None:
        """`SendFailed` once the stream is closing, or being ended (nothing may follow the fatal Error)."""
        if self.closing.done():
            raise SendFailed(self.closing.result().details)
        if self.fatal is not None:
            raise SendFailed(self.fatal.message)

    async def end(self, refusal: Refusal, *, gateway_shutdown: bool = False) -> None:
        """End the stream for `refusal`, as BOTS.md promises: its `Error{fatal}` first (after any write in
        flight, and as the stream's last message), then the same status. Until then no other close counts
        (a read failing as the bot reacts, a half-close). A bot that does not take the Error within
        FATAL_WRITE_SECONDS gets the status alone."""
        if self.closing.done() or self.fatal is not None:
            return
        self.fatal = refusal
        try:
            async with asyncio.timeout(FATAL_WRITE_SECONDS), self._lock:
                if not self.closing.done():
                    await self._writer(refusal.to_error())
        except Exception as exc:  # a write that failed or timed out: the status still follows
            log.info("session %s: the fatal Error was not written: %r", self.session_id, exc)
        finally:
            self.request_close(refusal.code, refusal.message, gateway_shutdown=gateway_shutdown, force=True)

    async def _write(self, message: bot_pb2.ServerMessage | bytes) -> None:
        try:
            await self._writer(message)
        except Exception as exc:
            self.request_close(grpc.StatusCode.CANCELLED, f"writing to the bot's stream failed: {exc}")
            raise SendFailed(str(exc)) from exc

    def request_close(
        self,
        code: grpc.StatusCode,
        details: str,
        *,
        gateway_shutdown: bool = False,
        goodbye: str | None = None,
        force: bool = False,
    ) -> None:
        """The stream ends with this status (the first request wins). While `end()` writes its Error only a
        `force`d close counts: `end()`'s own, or the call's end (nothing can reach the bot then)."""
        if self.fatal is not None and not force:
            return
        if not self.closing.done():
            self.closing.set_result(Close(code, details, gateway_shutdown, goodbye))

    def match_ended(self, match_id: str) -> None:
        self.ended[match_id] = None
        self.ended.move_to_end(match_id)
        while len(self.ended) > ENDED_MATCHES_KEPT:
            self.ended.popitem(last=False)
