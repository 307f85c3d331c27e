"""Framing of the relay's decision leg: length-prefixed messages on a plain TCP connection.

Layer: gateway plumbing shared by the worker side (`relay_connection.RelayConnection`, blocking sockets) and the
gateway side (`servicers.DecisionLink`, an asyncio Protocol). Each frame is a 4-byte big-endian length and
that many bytes of one serialized message: `relay.v1.DecisionCall` from worker to gateway,
`relay.v1.DecisionReply` back. An empty frame from the worker (`CLOSING`; a call is never empty, its
`call_id` is at least 1) says it sends no more calls: the gateway answers what is open, then closes. A
connection that ends without it is a worker gone: what was open on it is withdrawn (TCP alone cannot tell
a half-close from a process that died). Pure: no I/O, no protobuf decoding (the caller decodes frames).
Why not gRPC on this leg: a gRPC hop in Python costs more than a decision's whole relay budget
(`python -m bench relay` measures a grpc.aio byte proxy beside a raw ping-pong), so only the bot's own leg
is gRPC.
"""

from __future__ import annotations

HEADER_BYTES = 4
MAX_FRAME_BYTES = 64 * 1024 * 1024  # as the gRPC relay's message cap
CLOSING = b""  # the payload of the worker's last frame: no more calls on this connection


class FrameError(ValueError):
    """A frame that announces more bytes than `MAX_FRAME_BYTES`: the connection is out of step or hostile."""


def frame(payload: bytes) -> bytes:
    """One frame: the payload's length, then the payload."""
    if len(payload) > MAX_FRAME_BYTES:
        raise FrameError(f"a frame of {len(payload)} bytes is over the limit of {MAX_FRAME_BYTES}")
    return len(payload).to_bytes(HEADER_BYTES, "big") + payload


class FrameBuffer:
    """Bytes read from a connection, cut into the payloads of the whole frames among them (the rest waits
    for the next read)."""

    __slots__ = ("_buffer", "_limit")

    def __init__(self, limit: int = MAX_FRAME_BYTES) -> None:
        self._buffer = bytearray()
        self._limit = limit

    def __len__(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        """The payloads of every frame completed by `data`, in order; `FrameError` for an oversized one."""
        if not self._buffer:  # the usual read: whole frames, nothing left over from before
            size = self._size(data, 0)
            if size is not None and len(data) == HEADER_BYTES + size:
                return [data[HEADER_BYTES:]]
        buffer = self._buffer
        buffer += data
        payloads = []
        start = 0
        while (size := self._size(buffer, start)) is not None:
            end = start + HEADER_BYTES + size
            if end > len(buffer):
                break
            payloads.append(bytes(buffer[start + HEADER_BYTES : end]))
            start = end
        del buffer[:start]
        return payloads

    def _size(self, data: bytes | bytearray, start: int) -> int | None:
        if len(data) - start < HEADER_BYTES:
            return None
        size = int.from_bytes(data[start : start + HEADER_BYTES], "big")
        if size > self._limit:
            raise FrameError(f"a frame announces {size} bytes, over the limit of {self._limit}")
        return size
