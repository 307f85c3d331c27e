"""The remote seat: the referee's `Seat` for a connected bot, used in match worker processes.

Layer: worker side of the relay. It finds the bot's stream in the session registry, makes the relay's
control calls (StartMatch, EndMatch: synchronous gRPC to the gateway's relay address) and sends decisions
to the gateway's decision port (framed TCP, `relay_frames`), and turns the answers into action ids or
`SeatFault`s. It holds no game rules and never imports Django.

Connections: one `RelayConnection` per decision address per process (created lazily, so after a fork each
worker gets its own): one TCP connection that every match thread of the process shares. A thread sends its
call (tagged with a call id) and blocks until its own reply arrives or its timeout (the bot's time plus
`RELAY_MARGIN_SECONDS`): a stuck gateway never hangs a match. A connection that breaks fails every call
waiting on it with the gateway-down handling below, and the next call opens a new one. The bot's
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
import itertools
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from engine_service.gateway.protocol import (
    add_legal_actions,
    bot_pb2,
    dumps,
    match_ended_to_proto,
    relay_pb2,
    relay_pb2_grpc,
)
from engine_service.gateway.registry import (
    HostState,
    SessionInfo,
    SessionRegistry,
    bot_host_states,
    sessions_for_bot,
)
from engine_service.gateway.relay_frames import CLOSING, FrameBuffer, FrameError, frame
from engine_service.referee.seats import (
    DecisionRequest,
    MatchAborted,
    MatchInfo,
    Seat,
    SeatFault,
    SeatUnavailable,
)

RELAY_MARGIN_SECONDS = 2.0  # beyond the bot's deadline, for the gateway's reply to come back
CONTROL_TIMEOUT_SECONDS = 5.0  # StartMatch / EndMatch
CONNECT_TIMEOUT_SECONDS = 5.0  # opening a decision connection, at most (and at most the call's own time)
RECV_BYTES = 64 * 1024  # per read: under malloc's mmap threshold (a 256 KiB read costs 15 µs more)
POLL_SECONDS = 0.05
WATCH_SECONDS = 0.1  # how often a relay connection checks its reading thread's deadline
GATEWAY_RETURN_SECONDS = 60.0  # in all, a seat's wait with no gateway alive (or admitting, after a loss)
HOST_RETURN_SECONDS = 120.0  # in all, a seat's wait for a hosted bot whose bot host is down
_GATEWAY_DOWN = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
)
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
