"""Thin gRPC servicers over the hub: the bot stream (`BotService.Connect`) and the internal relay.

Layer: gateway edge. Each method translates gRPC (metadata, streams, statuses) to `Hub` calls and back; the
logic lives in `hub`. Undecodable bytes from a bot become a `Malformed` value (not a crash in the gRPC
core), so the bot gets INVALID_ARGUMENT with the decoder's message. The bot stream's serializer lets
`bytes` through unchanged (relayed decision requests arrive framed, never decoded). The relay's `Decisions`
stream answers each call from its own task, so no call waits for another (the task's first step, up to the
write to the bot, runs at once, as the call is read); it holds no state beyond them.

How a bot's stream ended is told apart as far as gRPC lets a server see it: a half-close (the bot ended its
side; the call is not cancelled within `HALF_CLOSE_SETTLE_SECONDS` of the last message) and a cancelled
call. gRPC's server API reports a client's cancel and a broken connection (a killed process, a network
failure, a keepalive timeout) alike, as a cancelled call; the reason says so. The gateway's own reasons
(revocation, shutdown, a malformed or oversized message, a failed write) are named as such.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import types
from collections.abc import AsyncIterator, Coroutine, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from google.protobuf.message import DecodeError

from engine_service.gateway.auth import token_from_metadata
from engine_service.gateway.hub import Hub, Refusal, SendFailed, Session
from engine_service.gateway.protocol import (
    BOT_SERVICE,
    bot_pb2,
    relay_pb2,
    relay_pb2_grpc,
    serialize_server_message,
)

log = logging.getLogger("caravanserai.gateway")
T = TypeVar("T")

HALF_CLOSE_SETTLE_SECONDS = 0.2  # a cancelled call's reads end first, its cancellation follows at once
HALF_CLOSED = "the bot half-closed its stream (it ended its side of the call)"
CANCELLED = (
    "the bot's call was cancelled or its connection broke (a cancel, a process that exited or was "
    "killed, a network failure: gRPC reports these alike to a server)"
)


@dataclass(frozen=True)
class Malformed:
    """Bytes from a bot that are not a `BotMessage`."""

    size: int
    error: str


@dataclass(frozen=True)
class Oversized:
    """A message from a bot over the gateway's `max_message_bytes` (not decoded)."""

    size: int
    limit: int


def decode_bot_message(data: bytes, limit: int | None = None) -> bot_pb2.BotMessage | Malformed | Oversized:
    if limit is not None and len(data) > limit:
        return Oversized(len(data), limit)
    message = bot_pb2.BotMessage()
    try:
        message.ParseFromString(data)
    except DecodeError as exc:
        return Malformed(len(data), str(exc) or "not a BotMessage")
    return message


class BotServicer:
    """`caravanserai.bot.v1.BotService`: one long-lived stream per bot connection."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    async def Connect(
        self,
        request_iterator: AsyncIterator[bot_pb2.BotMessage | Malformed | Oversized],
        context: grpc.aio.ServicerContext,
    ) -> None:
        hub = self.hub
        if hub.finished is not None:  # nothing more here: say so, and end the stream OK
            with contextlib.suppress(Exception):
                await context.write(hub.goodbye())
            return
        try:
            identity = await hub.authenticate(token_from_metadata(context.invocation_metadata()))
        except Refusal as refusal:
            await context.abort(refusal.code, refusal.message)
        messages = request_iterator.__aiter__()
        try:
            first = await asyncio.wait_for(anext(messages), hub.config.hello_timeout)
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"no Hello within {hub.config.hello_timeout:g}s of connecting",
            )
        except StopAsyncIteration:
            return
        if isinstance(first, Oversized):
            refusal = _oversized(first)
            with contextlib.suppress(Exception):
                await context.write(refusal.to_error())
            await context.abort(refusal.code, refusal.message)
        if isinstance(first, Malformed):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"malformed message ({first.size} bytes): {first.error}"
            )
        if first.WhichOneof("message") != "hello":
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"the first message must be Hello, not {first.WhichOneof('message') or 'an empty message'}",
            )
        try:
            session = await hub.open_session(identity, first.hello, context.write)
        except Refusal as refusal:
            with contextlib.suppress(Exception):
                await context.write(refusal.to_error())
            await context.abort(refusal.code, refusal.message)
        except SendFailed:
            return
        reader = asyncio.create_task(self._read(messages, session))
        try:
            close = await asyncio.shield(session.closing)  # the future itself must outlive a cancel
        except asyncio.CancelledError:
            session.request_close(grpc.StatusCode.CANCELLED, CANCELLED)
            raise
        finally:
            reader.cancel()
            # shielded: a cancelled call's servicer may be cancelled again, and the session must still leave
            # the registry (else it counts against the bot's stream limit until it expires)
            await asyncio.shield(hub.close_session(session))
        if close.code not in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED):
            await context.abort(close.code, close.details)

    async def _read(
        self, messages: AsyncIterator[bot_pb2.BotMessage | Malformed | Oversized], session: Session
    ) -> None:
        try:
            async for message in messages:
                if isinstance(message, Oversized):
                    refusal = _oversized(message)
                    with contextlib.suppress(SendFailed):
                        await session.send(refusal.to_error())
                    session.request_close(refusal.code, refusal.message)
                    return
                if isinstance(message, Malformed):
                    refusal = Refusal(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        bot_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                        f"malformed message ({message.size} bytes): {message.error}",
                    )
                    with contextlib.suppress(SendFailed):
                        await session.send(refusal.to_error())
                    session.request_close(refusal.code, refusal.message)
                    return
                await self.hub.handle(session, message)
            # a cancelled call's reads end too, and the cancellation follows: wait for it before saying
            # the bot half-closed
            await asyncio.sleep(HALF_CLOSE_SETTLE_SECONDS)
            session.request_close(grpc.StatusCode.OK, HALF_CLOSED)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            session.request_close(grpc.StatusCode.CANCELLED, f"reading the bot's stream failed: {exc}")


def _oversized(message: Oversized) -> Refusal:
    return Refusal(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        bot_pb2.ERROR_REASON_MALFORMED_MESSAGE,
        f"a message of {message.size} bytes is over the limit of {message.limit} bytes (max_message_bytes)",
    )


def bot_service_handler(
    servicer: BotServicer, max_message_bytes: int | None = None
) -> grpc.GenericRpcHandler:
    """The BotService handler with the tolerant decoder (the generated one would crash on garbage bytes; a
    message over `max_message_bytes` is refused with an `Error` before the stream ends) and the pass-through
    serializer (a relayed request is written as the bytes it arrived as)."""
    return grpc.method_handlers_generic_handler(
        BOT_SERVICE,
        {
            "Connect": grpc.stream_stream_rpc_method_handler(
                servicer.Connect,
                request_deserializer=lambda data: decode_bot_message(data, max_message_bytes),
                response_serializer=serialize_server_message,
            )
        },
    )


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
    3.12's eager tasks do): a relayed call's write to the bot starts before the relay stream's next read,
    with no loop turn in between. None if the coroutine finished (or failed: logged) in that step."""
    try:
        awaited = coro.send(None)
    except StopIteration:
        return None
    except Exception:  # as a task's would, it fails alone, not the stream that read the call
        log.exception("relayed call failed")
        return None
    return asyncio.ensure_future(_resume(coro, awaited))


class RelayServicer(relay_pb2_grpc.RelayServiceServicer):
    """`caravanserai.relay.v1.RelayService`: what workers' remote seats call."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    async def StartMatch(
        self, request: relay_pb2.StartMatchRequest, context: grpc.aio.ServicerContext
    ) -> relay_pb2.StartMatchResponse:
        return await self.hub.start_match(request.session_id, request.match)

    async def Decisions(
        self, request_iterator: AsyncIterator[relay_pb2.DecisionCall], context: grpc.aio.ServicerContext
    ) -> None:
        """Many decisions on one stream: each call gets its own task and is answered when its bot answers."""
        lock = asyncio.Lock()  # one write at a time on the stream
        open_calls: set[asyncio.Task[None]] = set()

        async def answer(call: relay_pb2.DecisionCall) -> None:
            reply = await self.hub.decide(call)
            async with lock:
                with contextlib.suppress(Exception):  # the worker's stream is gone: its waiters fail there
                    await context.write(reply)

        try:
            async for call in request_iterator:
                task = start_eagerly(answer(call))
                if task is not None:
                    open_calls.add(task)
                    task.add_done_callback(open_calls.discard)
            if open_calls:  # the worker closed its side: answer what is still open
                await asyncio.gather(*open_calls)
        finally:
            for task in open_calls:
                task.cancel()

    async def EndMatch(
        self, request: relay_pb2.EndMatchRequest, context: grpc.aio.ServicerContext
    ) -> relay_pb2.EndMatchResponse:
        return await self.hub.end_match(request.session_id, request.ended)
