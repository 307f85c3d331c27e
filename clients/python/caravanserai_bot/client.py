"""Connection handling: one stream to the gateway, several matches at once, reconnect with backoff.

`Client(bot, target, token).play()` is a coroutine that runs until `stop()` is called, `max_matches`
matches have ended, the server says `Goodbye` (nothing more for this bot there, for example a local runner
that played all its matches: `client.finished` holds its message), or the server refuses the bot for good
(`BotRefused`: bad token, bad Hello). Transient
failures (gateway restart, network) reconnect with exponential backoff and jitter; the server resumes the
bot's matches on the new stream.

The Hello's `bot_version` is `$CARAVANSERAI_BOT_VERSION` when it is set (the ladder's bot host sets it to the
version the owner uploaded, so that is the version the ladder shows and rates), else `Bot.version`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc

from caravanserai_bot import __version__
from caravanserai_bot._proto import bot_pb2, bot_pb2_grpc
from caravanserai_bot.bot import (
    Bot,
    Fault,
    LegalAction,
    Match,
    MatchResult,
    Request,
    ServerError,
    TimeControl,
    decide_explained,
)

log = logging.getLogger("caravanserai_bot")

SDK = f"caravanserai-python/{__version__}"
# Refusals a reconnect cannot fix.
FATAL = (
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.UNIMPLEMENTED,
)
# HTTP/2 keepalive: a ping every 20 s (the gateway tolerates one every 5 s).
CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    # Each reconnection really dials: gRPC otherwise shares subchannels between channels of a process, and a
    # new channel reports the old one's cached "connection refused" until gRPC's own backoff (up to 2 min)
    # ends, long after the gateway is back.
    ("grpc.use_local_subchannel_pool", 1),
]


_STATUS_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}


class BotRefused(Exception):
    """The server refused the bot in a way a reconnect cannot fix (the status and its details)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self.code = code
        self.details = details
        super().__init__(f"{code.name}: {details}")


def hello_version(bot: Bot) -> str:
    """The version the Hello reports: $CARAVANSERAI_BOT_VERSION if set and not blank, else `bot.version`."""
    return os.environ.get("CARAVANSERAI_BOT_VERSION", "").strip() or bot.version


def _fault(f: bot_pb2.Fault) -> Fault:
    kind = bot_pb2.FaultKind.Name(f.kind).removeprefix("FAULT_KIND_").lower()
    return Fault(f.seat, f.step, kind, f.reason, f.action_id, f.fallback_action_id, f.forfeit)


# Reconnect delays double from 0.25 s up to this, with jitter: it stays well inside the server's reconnect
# grace (10 s, counted only while a gateway admits at normal speed), so a restart never costs a match.
MAX_BACKOFF_SECONDS = 4.0


class Client:
    def __init__(
        self,
        bot: Bot,
        target: str | None = None,
        token: str | None = None,
        *,
        reconnect: bool = True,
        initial_backoff: float = 0.25,
        max_backoff: float = MAX_BACKOFF_SECONDS,
        max_matches: int | None = None,
    ) -> None:
        self.bot = bot
        self.target = target or os.environ.get("CARAVANSERAI_TARGET", "127.0.0.1:50051")
        self.token = token if token is not None else os.environ.get("CARAVANSERAI_TOKEN", "")
        self.reconnect = reconnect
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_matches = max_matches
        self.matches: dict[str, Match] = {}
        self.results: list[MatchResult] = []
        self.faults: list[tuple[str, Fault]] = []
        self.errors: list[ServerError] = []
        self.welcome: bot_pb2.Welcome | None = None
        self.finished: str | None = None  # the server's Goodbye: play() returns and does not reconnect
        self.connections = 0
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool = ThreadPoolExecutor(
            max_workers=max(1, bot.max_concurrent_matches), thread_name_prefix="decide"
        )
        self._write_lock: asyncio.Lock | None = None
        self._call: Any = None
        self.connected = threading.Event()

    # --- running -----------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop playing (thread-safe): the stream is closed and `play()` returns."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)

    async def play(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        backoff = self.initial_backoff
        try:
            while not self._stop.is_set():
                try:
                    welcomed = await self._connect_once()
                    if self._done() or self.finished is not None:
                        return
                    log.info("stream ended; reconnecting")
                except grpc.aio.AioRpcError as exc:
                    welcomed = False
                    if exc.code() in FATAL:
                        raise BotRefused(exc.code(), exc.details() or "") from None
                    log.warning("stream failed: %s %s", exc.code().name, exc.details())
                if not self.reconnect:
                    return
                if welcomed:
                    backoff = self.initial_backoff
                delay = backoff * (0.5 + random.random() / 2)
                backoff = min(self.max_backoff, backoff * 2)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), delay)
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def run(self) -> None:
        """Blocking `play()` on a fresh event loop."""
        asyncio.run(self.play())

    def _done(self) -> bool:
        return self.max_matches is not None and len(self.results) >= self.max_matches

    async def _connect_once(self) -> bool:
        """One stream, until it ends. True if the server welcomed the bot on it."""
        assert self._stop is not None
        self._write_lock = asyncio.Lock()
        welcomed = False
        async with grpc.aio.insecure_channel(self.target, options=CHANNEL_OPTIONS) as channel:
            stub = bot_pb2_grpc.BotServiceStub(channel)
            call = stub.Connect(metadata=(("authorization", f"Bearer {self.token}"),))
            self._call = call
            self.connections += 1
            hello = bot_pb2.Hello(
                bot_name=self.bot.name,
                bot_version=hello_version(self.bot),
                sdk=SDK,
                games=list(self.bot.games),
                max_concurrent_matches=self.bot.max_concurrent_matches,
            )
            await call.write(bot_pb2.BotMessage(hello=hello))
            stopper = asyncio.ensure_future(self._stop.wait())
            tasks: set[asyncio.Task[None]] = set()
            try:
                while True:
                    read = asyncio.ensure_future(call.read())
                    done, _ = await asyncio.wait({read, stopper}, return_when=asyncio.FIRST_COMPLETED)
                    if stopper in done:
                        read.cancel()
                        call.cancel()
                        return welcomed
                    message = read.result()
                    if message is grpc.aio.EOF:  # the stream ended; a failure raises from read() instead
                        code = await call.code()
                        if code != grpc.StatusCode.OK:
                            raise grpc.aio.AioRpcError(
                                code,
                                await call.initial_metadata(),
                                await call.trailing_metadata(),
                                await call.details(),
                            )
                        return welcomed
                    kind = message.WhichOneof("message")
                    if kind == "welcome":
                        welcomed = True
                        self.welcome = message.welcome
                        self.connected.set()
                        log.info(
                            "connected as %s (session %s, %d match(es) at once)",
                            message.welcome.bot_name,
                            message.welcome.session_id,
                            message.welcome.max_concurrent_matches,
                        )
                    elif kind == "decision_request":
                        task = asyncio.ensure_future(self._decide(call, message.decision_request))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                    elif kind == "match_started":
                        self._match_started(message.match_started)
                    elif kind == "match_ended":
                        self._match_ended(message.match_ended)
                        if self._done():
                            call.cancel()
                            return welcomed
                    elif kind == "goodbye":
                        self.finished = message.goodbye.message
                        log.info("the server said goodbye: %s", self.finished)
                    elif kind == "fault_notice":
                        fault = _fault(message.fault_notice.fault)
                        self.faults.append((message.fault_notice.match_id, fault))
                        self.bot.on_fault(message.fault_notice.match_id, fault)
                    elif kind == "error":
                        e = message.error
                        error = ServerError(
                            _STATUS_NAMES.get(e.status_code, str(e.status_code)),
                            bot_pb2.ErrorReason.Name(e.reason).removeprefix("ERROR_REASON_"),
                            e.message,
                            e.match_id,
                            e.request_id,
                            e.fatal,
                        )
                        self.errors.append(error)
                        self.bot.on_error(error)
            finally:
                stopper.cancel()
                for task in tasks:
                    task.cancel()
                self._call = None
                self.connected.clear()

    # --- messages ----------------------------------------------------------------------------------------
    def _match_started(self, m: bot_pb2.MatchStarted) -> None:
        known = m.match_id in self.matches
        match = Match(
            match_id=m.match_id,
            game_id=m.game_id,
            num_players=m.num_players,
            seat=m.seat,
            opponents=tuple(m.opponents),
            options=json.loads(m.options_json or "{}"),
            time_control=TimeControl(
                m.time_control.decision_ms / 1000,
                m.time_control.time_bank_ms / 1000,
                m.time_control.max_faults,
            ),
            resumed=m.resumed,
        )
        self.matches[m.match_id] = match
        if not known:
            self.bot.on_match_start(match)
        else:
            log.info("match %s resumed on this stream", m.match_id)

    def _match_ended(self, e: bot_pb2.MatchEnded) -> None:
        result = MatchResult(
            match_id=e.match_id,
            seat=e.seat,
            scores=tuple(e.scores),
            ranks=tuple(e.ranks),
            forfeits=tuple(e.forfeits),
            reason=e.reason,
            faults=tuple(_fault(f) for f in e.faults),
            result=json.loads(e.result_json or "{}"),
        )
        self.results.append(result)
        self.bot.on_match_end(self.matches.pop(e.match_id, None), result)

    async def _decide(self, call: Any, r: bot_pb2.DecisionRequest) -> None:
        request = Request(
            match=self.matches.get(r.match_id),
            match_id=r.match_id,
            request_id=r.request_id,
            step=r.step,
            observation=json.loads(r.observation_json),
            legal_actions=tuple(
                LegalAction(a.id, a.kind, json.loads(a.details_json or "{}")) for a in r.legal_actions
            ),
            time_limit_seconds=r.time_limit_ms / 1000,
            time_bank_seconds=r.time_bank_ms / 1000,
        )
        loop = asyncio.get_running_loop()
        action_id, debug, error = await loop.run_in_executor(self._pool, decide_explained, self.bot, request)
        if error is not None:
            # an empty answer: the server records a "malformed" fault at once and plays the fallback
            log.error("decide() raised at step %d of match %s", r.step, r.match_id, exc_info=error)
        assert self._write_lock is not None
        async with self._write_lock:
            await call.write(
                bot_pb2.BotMessage(
                    decision=bot_pb2.Decision(
                        match_id=r.match_id, request_id=r.request_id, action_id=action_id, debug=debug
                    )
                )
            )

    async def resign(self, match_id: str, reason: str = "") -> None:
        """Give up a match now; it is scored as a forfeit. Call it on the client's event loop."""
        if self._call is None or self._write_lock is None:
            raise RuntimeError("not connected")
        async with self._write_lock:
            await self._call.write(
                bot_pb2.BotMessage(resign=bot_pb2.Resign(match_id=match_id, reason=reason))
            )

    def resign_threadsafe(self, match_id: str, reason: str = "") -> None:
        """`resign` from any thread (for example from inside `decide`)."""
        if self._loop is None:
            raise RuntimeError("not playing")
        asyncio.run_coroutine_threadsafe(self.resign(match_id, reason), self._loop)


def run(bot: Bot, target: str | None = None, token: str | None = None, **options: Any) -> Client:
    """Play until stopped: the simplest entry point of a bot script. Returns the client (results, faults)."""
    client = Client(bot, target, token, **options)
    client.run()
    return client
