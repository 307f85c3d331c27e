"""A worker process's connections to the gateways: decision connections and the relay's control channels.

Layer: worker side of the relay, transport only (the seat's policy is `remote_seat.py`); never imports Django.

Connections: one `RelayConnection` per decision address per process (created lazily, so after a fork each
worker gets its own): one TCP connection that every match thread of the process shares. A thread sends its
call (tagged with a call id) and blocks until its own reply arrives or its timeout (the bot's time plus
`RELAY_MARGIN_SECONDS`): a stuck gateway never hangs a match. A connection that breaks fails every call
waiting on it with `RelayDown` (the seat handles it as a gateway loss), and the next call opens a new one.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
import time

import grpc
from google.protobuf.message import DecodeError

from engine_service.gateway.protocol import relay_pb2, relay_pb2_grpc
from engine_service.gateway.relay_frames import CLOSING, FrameBuffer, FrameError, frame

RELAY_MARGIN_SECONDS = 2.0  # beyond the bot's deadline, for the gateway's reply to come back
CONNECT_TIMEOUT_SECONDS = 5.0  # opening a decision connection, at most (and at most the call's own time)
RECV_BYTES = 64 * 1024  # per read: under malloc's mmap threshold (a 256 KiB read costs 15 µs more)
WATCH_SECONDS = 0.1  # how often a relay connection checks its reading thread's deadline
_CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.enable_retries", 0),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


class RelayDown(grpc.RpcError):  # type: ignore[misc]  # grpc has no type stubs
    """A decision connection that failed or closed, or a call whose reply did not come in time: a gRPC error
    with the code the seat treats as the gateway's (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, CANCELLED)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self._code = code
        self._details = details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


_WAITING, _LEADING, _DONE = 0, 1, 2


class _Waiter:
    """One thread waiting for the reply to its call. Its lock is released once: when the reply (or an error)
    is set, or when the thread is asked to read the connection for everyone (`promote`). State changes only
    under the connection's lock."""

    __slots__ = ("call_id", "deadline", "error", "gave_up", "lock", "reply", "sent", "state")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.state = _WAITING
        self.reply: relay_pb2.DecisionReply | None = None
        self.error: grpc.RpcError | None = None
        self.call_id = 0
        self.sent = self.deadline = 0.0
        self.gave_up = 0.0

    def settle(
        self, reply: relay_pb2.DecisionReply | None = None, error: grpc.RpcError | None = None
    ) -> None:
        if self.state == _DONE:
            return
        woke = self.state == _WAITING  # a leading thread is reading, or already woken to
        self.reply, self.error, self.state = reply, error, _DONE
        if woke:
            self.lock.release()

    def promote(self) -> None:
        self.state = _LEADING
        self.lock.release()


class _Link:
    """One TCP connection to a gateway's decision port: the calls waiting on it, the one whose thread reads
    it, and when it last answered one. Frames go out whole, one at a time (`send_lock`); a retired link
    (half-closed: the gateway is shutting down) takes no new call and answers the open ones."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.frames = FrameBuffer()
        self.waiters: dict[int, _Waiter] = {}
        self.reader: _Waiter | None = None
        self.last_reply = time.monotonic()
        self.send_lock = threading.Lock()
        self.retired = self.broken = self.closed = False

    def send(self, data: bytes) -> bool:
        """Write one frame; False if the link was retired or broken first (nothing was sent)."""
        with self.send_lock:
            if self.retired or self.broken:
                return False
            self.sock.sendall(data)
        return True

    def half_close(self) -> None:
        """No more calls here: the gateway answers what is open, then closes."""
        with self.send_lock:
            if self.retired or self.broken:
                return
            self.retired = True
            with contextlib.suppress(OSError):  # a failed write: the reading thread sees the link end
                self.sock.sendall(frame(CLOSING))

    def shut(self) -> None:
        """Wake whoever blocks on the socket (a reading thread, a stuck write)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.sock.close()


def _address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"a decision address is HOST:PORT, not {address!r}")
    return host.strip("[]"), int(port)


class RelayConnection:
    """One gateway's decision port in one process: one TCP connection (blocking, TCP_NODELAY) that every
    match thread shares, opened on first use and again after it breaks. Safe for many threads at once.

    No thread of its own reads the connection: the first waiting thread that finds no reader reads it, hands
    the other calls' replies to their threads, and when its own reply comes passes the reading on to one
    that still waits (leader/follower: a lone call gets its reply with no thread hand-off). A watchdog
    thread enforces the reading thread's timeout, which it cannot do itself while blocked on the socket.
    A connection nobody reads is checked before each call (a non-blocking read): one the gateway closed
    meanwhile (a restart, a cut network) is replaced at once, not failed."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._target = _address(address)
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._link: _Link | None = None
        self._links: set[_Link] = set()  # open links: the current one, and retired ones still answering
        self._closed = threading.Event()
        self._watchdog: threading.Thread | None = None
        self.links_opened = 0

    def decide(self, call: relay_pb2.DecisionCall, timeout: float) -> relay_pb2.DecisionReply:
        """Send one call (its `call_id` is set here) and wait for its reply; a `RelayDown` if the connection
        cannot be opened, breaks first, or no reply comes within `timeout`."""
        waiter = _Waiter()
        with self._lock:
            link = self._current(timeout)
            waiter.call_id = call.call_id = next(self._ids)
            waiter.sent = time.monotonic()
            waiter.deadline = waiter.sent + timeout
            link.waiters[call.call_id] = waiter
            leading = link.reader is None
            if leading:
                link.reader = waiter
                waiter.state = _LEADING
        self._send(link, waiter, frame(call.SerializeToString()))
        # another thread reads: wait for the reply, or to be asked to read
        if not leading and not waiter.lock.acquire(timeout=timeout):
            self._give_up(link, waiter, timeout)
            waiter.lock.acquire()  # released by now: the reply that raced in, the timeout, a promotion
        if waiter.state == _LEADING:
            self._lead(link, waiter)
        elif link.reader is waiter:  # asked to read, and settled before it could
            with self._lock:
                if link.reader is waiter:
                    self._pass_reading(link)
        if waiter.error is not None:
            raise waiter.error
        assert waiter.reply is not None
        return waiter.reply

    def _current(self, timeout: float) -> _Link:
        """The link new calls go to, opened if there is none or the idle one was closed (lock held)."""
        link = self._link
        if link is not None and link.reader is None and not self._still_open(link):
            self._break(link, RelayDown(grpc.StatusCode.UNAVAILABLE, f"relay {self.address} closed"))
            link = None
        return link or self._open(timeout)

    def _still_open(self, link: _Link) -> bool:
        """Read what an idle link holds without blocking (lock held, no reader): replies to calls that gave
        up are dropped; the gateway's close, or a retiring reply, means the link is done."""
        try:
            while data := link.sock.recv(RECV_BYTES, socket.MSG_DONTWAIT):
                replies = [relay_pb2.DecisionReply.FromString(p) for p in link.frames.feed(data)]
                if any(r.gateway_shutdown for r in replies):
                    return False
            return False  # the gateway closed it
        except BlockingIOError:
            return True
        except (OSError, FrameError, DecodeError):
            return False

    def _open(self, timeout: float) -> _Link:
        try:
            sock = socket.create_connection(self._target, timeout=min(timeout, CONNECT_TIMEOUT_SECONDS))
        except OSError as exc:
            raise RelayDown(
                grpc.StatusCode.UNAVAILABLE, f"cannot reach the decision port {self.address}: {exc}"
            ) from exc
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        link = self._link = _Link(sock)
        self._links.add(link)
        self.links_opened += 1
        if self._watchdog is None:
            self._watchdog = threading.Thread(target=self._watch, name="relay-watchdog", daemon=True)
            self._watchdog.start()
        return link

    def _send(self, link: _Link, waiter: _Waiter, data: bytes) -> None:
        try:
            sent = link.send(data)
        except OSError as exc:
            self._break(link, RelayDown(grpc.StatusCode.UNAVAILABLE, f"relay {self.address}: {exc}"))
            return
        if not sent:  # the link retired (or broke) between choosing it and writing: this call was not sent
            error = RelayDown(grpc.StatusCode.UNAVAILABLE, f"relay {self.address} is shutting down")
            with self._lock:
                if link.waiters.pop(waiter.call_id, None) is not None:
                    waiter.settle(error=error)

    def _lead(self, link: _Link, waiter: _Waiter) -> None:
        """Read the link, handing each reply to its waiter, until this thread's own call is settled; then
        pass the reading on. When the link fails or closes, fail whoever still waits on it."""
        error: grpc.RpcError | None = None
        try:
            while waiter.state != _DONE:
                data = link.sock.recv(RECV_BYTES)
                if not data:
                    error = RelayDown(grpc.StatusCode.UNAVAILABLE, f"relay {self.address} closed")
                    break
                self._deliver(link, link.frames.feed(data))
        except OSError as exc:
            error = RelayDown(grpc.StatusCode.UNAVAILABLE, f"relay {self.address}: {exc}")
        except (FrameError, DecodeError) as exc:
            error = RelayDown(
                grpc.StatusCode.INTERNAL, f"relay {self.address} sent an unreadable frame: {exc}"
            )
        if error is not None:
            self._break(link, error)
        with self._lock:
            if link.reader is waiter:
                self._pass_reading(link)

    def _deliver(self, link: _Link, payloads: list[bytes]) -> None:
        replies = [relay_pb2.DecisionReply.FromString(p) for p in payloads]
        retire = False
        with self._lock:
            link.last_reply = time.monotonic()
            for reply in replies:
                if reply.gateway_shutdown and self._link is link:  # new calls go to a new link
                    self._link, retire = None, True
                other = link.waiters.pop(reply.call_id, None)
                if other is not None:
                    other.settle(reply)
        if retire:  # half-close: the gateway answers what is open, then closes
            link.half_close()

    def _pass_reading(self, link: _Link) -> None:
        """The reading thread leaves: one still waiting on the link reads from now on; a link left with no
        waiter that takes no new call is closed (lock held)."""
        link.reader = None
        for waiter in link.waiters.values():
            link.reader = waiter
            waiter.promote()
            return
        if link.broken or link.retired:
            self._links.discard(link)
            link.close()

    def _watch(self) -> None:
        """Time out the reading threads: blocked on the socket, they cannot. Ends when no link is open."""
        while not self._closed.wait(WATCH_SECONDS):
            now = time.monotonic()
            with self._lock:
                if not self._links:
                    self._watchdog = None
                    return
                readers = [(link, link.reader) for link in self._links if link.reader is not None]
            for link, reader in readers:
                if reader.state != _DONE and now >= reader.deadline:
                    self._give_up(link, reader, reader.deadline - reader.sent)
                elif (
                    reader.gave_up
                    and now - reader.gave_up >= RELAY_MARGIN_SECONDS
                    and link.last_reply < reader.gave_up
                ):  # it timed out on a link that was answering, and nothing came since: stuck after all
                    self._break(link, RelayDown(grpc.StatusCode.DEADLINE_EXCEEDED, "relay stuck"))

    def _give_up(self, link: _Link, waiter: _Waiter, timeout: float) -> None:
        """A call timed out. If the link answered nothing since it was sent, the gateway is stuck: break the
        link (the next call opens a new one). Otherwise only this call fails."""
        error = RelayDown(grpc.StatusCode.DEADLINE_EXCEEDED, f"no relay reply within {timeout:.1f}s")
        with self._lock:
            if link.waiters.pop(waiter.call_id, None) is None:
                return  # settled meanwhile
            waiter.gave_up = time.monotonic()
            waiter.settle(error=error)
            stuck = link.last_reply < waiter.sent
        if stuck:
            self._break(link, error)

    def _break(self, link: _Link, error: grpc.RpcError) -> None:
        """Fail every call waiting on the link and shut it; its reading thread, if any, closes it."""
        with self._lock:
            if self._link is link:
                self._link = None
            link.broken = True
            waiters = list(link.waiters.values())
            link.waiters.clear()
            for waiter in waiters:
                waiter.settle(error=error)
            link.shut()
            if link.reader is None:
                self._links.discard(link)
                link.close()

    def close(self) -> None:
        with self._lock:
            links = list(self._links)
        for link in links:
            self._break(link, RelayDown(grpc.StatusCode.CANCELLED, "relay connection closed"))
        self._closed.set()


class RelayChannels:
    """Per process: one `RelayConnection` per decision address, and one gRPC channel per relay address for
    the control calls; all forgotten after a fork (sockets, gRPC channels and their threads must not cross
    one)."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._connections: dict[str, RelayConnection] = {}
        self._channels: dict[str, tuple[grpc.Channel, relay_pb2_grpc.RelayServiceStub]] = {}
        self._lock = threading.Lock()

    def _after_fork(self) -> None:
        if os.getpid() != self._pid:  # forked: the parent's connections are unusable here (lock held)
            self._pid, self._connections, self._channels = os.getpid(), {}, {}

    def connection(self, address: str) -> RelayConnection:
        with self._lock:
            self._after_fork()
            connection = self._connections.get(address)
            if connection is None:
                connection = self._connections[address] = RelayConnection(address)
            return connection

    def stub(self, address: str) -> relay_pb2_grpc.RelayServiceStub:
        with self._lock:
            self._after_fork()
            if address not in self._channels:
                channel = grpc.insecure_channel(address, options=_CHANNEL_OPTIONS)
                self._channels[address] = (channel, relay_pb2_grpc.RelayServiceStub(channel))
            return self._channels[address][1]

    def close(self) -> None:
        with self._lock:
            connections, self._connections = list(self._connections.values()), {}
            channels, self._channels = [c for c, _ in self._channels.values()], {}
        for connection in connections:
            connection.close()
        for channel in channels:
            channel.close()


CHANNELS = RelayChannels()
