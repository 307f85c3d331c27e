"""Thin adapters over the hub: the bot stream (`BotService.Connect`), the relay's control calls (gRPC) and
its decision leg (framed TCP).

Layer: gateway edge. Each method translates gRPC (metadata, streams, statuses) or frames to `Hub` calls and
back; the logic lives in `hub`. Undecodable bytes from a bot become a `Malformed` value (not a crash in the
gRPC core), so the bot gets INVALID_ARGUMENT with the decoder's message. The bot stream's serializer lets
`bytes` through unchanged (relayed decision requests arrive framed, never decoded). The decision leg
(`DecisionLink`, an asyncio Protocol: no stream reader, no task per call) starts each call's write to its
bot as the call's frame is read, and writes each reply in the loop step that learns the answer, in the order
the answers come: no call waits for another, and no task is woken between the bot's answer and the reply's
write. It holds no state beyond the calls still open.

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
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import cast

import grpc
from google.protobuf.message import DecodeError

from engine_service.gateway.auth import token_from_metadata
from engine_service.gateway.hub import Hub
from engine_service.gateway.protocol import (
    BOT_SERVICE,
    bot_pb2,
    relay_pb2,
    relay_pb2_grpc,
    serialize_server_message,
)
from engine_service.gateway.relay_frames import CLOSING, FrameBuffer, FrameError, frame
from engine_service.gateway.session import Pending, Refusal, Session

log = logging.getLogger("caravanserai.gateway")

READ_BYTES = 64 * 1024  # a decision connection's read buffer
HALF_CLOSE_SETTLE_SECONDS = 0.2  # a cancelled call's reads end first, its cancellation follows at once
REFUSAL_READ_SECONDS = 1.0  # how long a refused stream waits for the bot's first message before it ends
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
            await _take_first_message(context)
            await context.abort(refusal.code, refusal.message)
        # read with `context.read()`, not through `request_iterator` (an async generator over it: a layer
        # less for every message)
        try:
            first = await asyncio.wait_for(context.read(), hub.config.hello_timeout)
        except TimeoutError:
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"no Hello within {hub.config.hello_timeout:g}s of connecting",
            )
        if first is grpc.aio.EOF:
            return
        if isinstance(first, Oversized):
            oversized = _oversized(first)
            with contextlib.suppress(Exception):
                await context.write(oversized.to_error())
            await context.abort(oversized.code, oversized.message)
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
        reader = asyncio.create_task(self._read(context, session))
        try:
            close = await asyncio.shield(session.closing)  # the future itself must outlive a cancel
        except asyncio.CancelledError:
            session.request_close(grpc.StatusCode.CANCELLED, CANCELLED, force=True)
            raise
        finally:
            reader.cancel()
            # shielded: a cancelled call's servicer may be cancelled again, and the session must still leave
            # the registry (else it counts against the bot's stream limit until it expires)
            await asyncio.shield(hub.close_session(session))
        if close.code not in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED):
            await context.abort(close.code, close.details)

    async def _read(self, context: grpc.aio.ServicerContext, session: Session) -> None:
        try:
            while (message := await context.read()) is not grpc.aio.EOF:
                if isinstance(message, Oversized):
                    await session.end(_oversized(message))
                    return
                if isinstance(message, Malformed):
                    refusal = Refusal(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        bot_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                        f"malformed message ({message.size} bytes): {message.error}",
                    )
                    await session.end(refusal)
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


async def _take_first_message(context: grpc.aio.ServicerContext) -> None:
    """Before refusing a stream, read the bot's first message (its Hello, sent as it connects) if it comes
    within REFUSAL_READ_SECONDS: a grpc.aio client whose write is still in flight when the stream ends can
    report INTERNAL ("Internal error from Core") instead of the refusal, and the SDK would then retry a token
    that can never work."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(context.read(), REFUSAL_READ_SECONDS)


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


class RelayServicer(relay_pb2_grpc.RelayServiceServicer):  # type: ignore[misc]  # generated, unchecked
    """`caravanserai.relay.v1.RelayService`: what workers' remote seats call."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    async def StartMatch(
        self, request: relay_pb2.StartMatchRequest, context: grpc.aio.ServicerContext
    ) -> relay_pb2.StartMatchResponse:
        return await self.hub.start_match(request.session_id, request.match)

    async def EndMatch(
        self, request: relay_pb2.EndMatchRequest, context: grpc.aio.ServicerContext
    ) -> relay_pb2.EndMatchResponse:
        return await self.hub.end_match(request.session_id, request.ended)


class DecisionLink(asyncio.BufferedProtocol):
    """One worker process's decision connection (the relay's decision leg, `relay_frames`), read into a
    buffer of its own (a `BufferedProtocol`: asyncio's plain `data_received` allocates 256 KiB per read,
    which costs more than the rest of the read): each
    `DecisionCall` frame is handed to `Hub.relay` as it is read, which starts its write to the bot at once;
    each `DecisionReply` is written in the loop step that learns the answer (the bot reader's, the deadline
    timer's), in the order the answers come. When the worker closes its side (the empty `CLOSING` frame),
    what is still open is answered before the connection closes; when the connection ends without it (the
    worker is gone), what is open is withdrawn. A frame that does not read as a `DecisionCall` closes the
    connection (the worker fails its waiters and reconnects)."""

    def __init__(self, hub: Hub, links: set[DecisionLink]) -> None:
        self.hub = hub
        self._links = links
        self._frames = FrameBuffer()
        self._open: dict[int, Pending] = {}
        self._transport: asyncio.Transport | None = None
        self._half_closed = False
        self._buffer = memoryview(bytearray(READ_BYTES))

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport (asyncio's own or uvloop's, which is not an `asyncio.Transport` subclass)
        self._transport = cast(asyncio.Transport, transport)
        self._links.add(self)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(bytes(self._buffer[:nbytes]))

    def data_received(self, data: bytes) -> None:
        """Hand each call of the frames completed by `data` to the hub."""
        try:
            payloads = self._frames.feed(data)
            for payload in payloads:
                if payload == CLOSING:
                    self._closing()
                    return
                call = relay_pb2.DecisionCall.FromString(payload)
                pending = self.hub.relay(call, self._respond)
                if pending is not None and not pending.done:
                    self._open[call.call_id] = pending
        except (FrameError, DecodeError) as exc:
            log.warning("decision link from %s: unreadable frame (%s); closing it", self._peer(), exc)
            self.close()

    def _respond(self, reply: relay_pb2.DecisionReply) -> None:
        self._open.pop(reply.call_id, None)
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        transport.write(frame(reply.SerializeToString()))
        if self._half_closed and not self._open:
            transport.close()

    def _closing(self) -> None:
        """The worker sends no more calls: answer what is open, then close."""
        self._half_closed = True
        if not self._open and self._transport is not None:
            self._transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._links.discard(self)
        self._transport = None
        for pending in self._open.values():
            self.hub.withdraw(pending)
        self._open.clear()

    def close(self) -> None:
        """Close after writing what is already written (the replies of a gateway shutting down)."""
        if self._transport is not None:
            self._transport.close()

    def _peer(self) -> str:
        peer = self._transport.get_extra_info("peername") if self._transport else None
        return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "a worker"
