"""The multiplexed relay: many seats of one process share one decision connection per gateway, answered in
any order; a broken or stuck connection fails its waiters and the next call opens a new one, one closed while
idle is replaced without failing a call, and one a shutting-down gateway retires still answers what is open;
a worker that closes its side still gets the replies open on it, a call whose worker connection is gone is
withdrawn, and an unreadable frame closes only its connection; the bot's time is the gateway's measure;
relayed requests pass through the gateway as framed bytes.

Nothing here is timed: a bot's time is checked by relations that hold on any machine (it excludes the
worker's injected delays; with the seconds the gateway excused for its own stalls it covers the bot's
injected thinking), and each ordering is forced by an event."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from engine_service.games import Action
from engine_service.gateway.protocol import (
    add_legal_actions,
    bot_pb2,
    frame_decision_request,
    relay_pb2,
    serialize_server_message,
)
from engine_service.gateway.relay_connection import RelayChannels, RelayConnection
from engine_service.gateway.relay_frames import CLOSING, FrameBuffer, frame
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.referee import DecisionRequest, MatchInfo
from tests.engine_service.gateway.harness import (
    GAME,
    PATIENT,
    WAIT,
    RawBot,
    Stack,
    first_legal,
    wait_for,
    wait_for_bot,
)

pytestmark = pytest.mark.xdist_group("multiplexed_relay_stack")  # the module's gateway, started once

LEGAL = [Action("pass", "pass", {}), Action("go", "move", {"to": "kashgar"})]
SECONDS = PATIENT.decision_seconds
LIMIT_MS = int(SECONDS * 1000)


def start_seat(seat: RemoteSeat, match_id: str) -> RemoteSeat:
    seat.start(MatchInfo(match_id, GAME, 2, {}, 0, ["house"], SECONDS, 0.0))
    return seat


def seat_in_match(stack: Stack, bot_id: str, match_id: str, channels: RelayChannels) -> RemoteSeat:
    return start_seat(RemoteSeat(bot_id, bot_id, stack.registry, channels=channels), match_id)


def relay_counters(stack: Stack) -> tuple[float, float]:
    """The gateway's count of decisions relayed, and of the seconds it excused bots for its own stalls."""
    seen = stack.metrics()
    return (
        seen.get("caravanserai_gateway_decisions_total", 0.0),
        seen.get("caravanserai_gateway_excused_seconds_total", 0.0),
    )


def excused_since(stack: Stack, before: tuple[float, float], decisions: int) -> float:
    """The seconds the gateway excused since `before` (its counters then), once it has counted `decisions`
    more decisions (it counts each just after sending its reply)."""

    def counted() -> tuple[float, float] | None:
        now = relay_counters(stack)
        return now if now[0] >= before[0] + decisions else None

    after = wait_for(counted, what="the decisions counted")
    return float(after[1] - before[1])


def request(match_id: str, step: int) -> DecisionRequest:
    return DecisionRequest(
        match_id=match_id,
        game_id=GAME,
        seat=0,
        step=step,
        request_id=f"{match_id}:{step}",
        observation={"step": step, "hand": ["silk", "pepper"]},
        legal_actions=LEGAL,
        deadline_seconds=SECONDS,
        time_bank_seconds=0.0,
    )


def test_a_slow_bot_does_not_delay_fast_ones_on_the_shared_stream(stack: Stack) -> None:
    fast_done = threading.Event()

    def slow(bot: RawBot, r: bot_pb2.DecisionRequest) -> None:
        fast_done.wait(WAIT)  # after every fast match: never, had they queued behind this request
        bot.answer(r, "go")

    bots = [
        RawBot(stack.gateway.target, "tok-raw1", behaviour=slow, capacity=1).connect(),
        RawBot(stack.gateway.target, "tok-raw2", behaviour=first_legal, capacity=4).connect(),
        RawBot(stack.gateway.target, "tok-raw3", behaviour=first_legal, capacity=4).connect(),
    ]
    channels = RelayChannels()
    try:
        for bot_id in ("raw1", "raw2", "raw3"):
            wait_for_bot(stack.registry, bot_id)
        slow_seat = seat_in_match(stack, "raw1", "mux-slow", channels)
        fast = [seat_in_match(stack, f"raw{2 + i % 2}", f"mux-fast-{i}", channels) for i in range(8)]
        answers: dict[str, list[str]] = {}
        finished: dict[str, float] = {}

        def play(seat: RemoteSeat, match_id: str, steps: int) -> None:
            answers[match_id] = [seat.decide(request(match_id, s)) for s in range(steps)]
            finished[match_id] = time.monotonic()

        slow_thread = threading.Thread(target=play, args=(slow_seat, "mux-slow", 1))
        slow_thread.start()
        wait_for(lambda: bots[0].requests, what="the slow request open at its bot")
        threads = [threading.Thread(target=play, args=(s, f"mux-fast-{i}", 10)) for i, s in enumerate(fast)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
        fast_done.set()
        slow_thread.join(WAIT)
        assert answers["mux-slow"] == ["go"]
        assert all(answers[f"mux-fast-{i}"] == ["pass"] * 10 for i in range(8))
        assert (
            max(finished[f"mux-fast-{i}"] for i in range(8)) < finished["mux-slow"]
        )  # answered out of order
        assert channels.connection(stack.gateway.ready["decisions_address"]).links_opened == 1
    finally:
        channels.close()
        for bot in bots:
            bot.close()


def test_bot_seconds_is_the_gateway_measured_time(stack: Stack) -> None:
    """On a busy machine the bot's measured time may be below its thinking (the gateway's stalls are
    excused) and its wall time far above: only these relations hold whatever the load."""
    think, delay = 0.3, 0.25

    def thinker(bot: RawBot, r: bot_pb2.DecisionRequest) -> None:
        time.sleep(think)
        bot.answer(r)

    class SlowWorker(RemoteSeat):
        """Adds worker-side delay before sending and after the reply: none of it is the bot's."""

        def _relay(self, *args: Any, **kwargs: Any) -> relay_pb2.DecisionReply:
            time.sleep(delay)
            reply = super()._relay(*args, **kwargs)
            time.sleep(delay)
            return reply

    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=thinker).connect()
    channels = RelayChannels()
    try:
        wait_for_bot(stack.registry, "raw1")
        seat = start_seat(SlowWorker("raw1", "raw1", stack.registry, channels=channels), "clock-1")
        decision = request("clock-1", 0)
        before = relay_counters(stack)
        started = time.monotonic()
        assert seat.decide(decision) == "pass"
        elapsed = time.monotonic() - started
        excused = excused_since(stack, before, 1)
        charged = decision.extra["bot_seconds"]
        assert elapsed >= think + 2 * delay
        assert charged <= elapsed - 2 * delay  # the worker's delays are not the bot's
        assert charged + excused >= think  # its thinking is, but for the gateway's own stalls
        assert decision.extra["excused_seconds"] == 0.0
    finally:
        channels.close()
        bot.close()


def relay_call(seat: RemoteSeat, decision: DecisionRequest, call_id: int) -> relay_pb2.DecisionCall:
    """The `DecisionCall` a remote seat sends, written by hand (to drive a `Decisions` stream directly)."""
    assert seat.session is not None
    message = bot_pb2.DecisionRequest(
        match_id=decision.match_id,
        request_id=decision.request_id,
        seat=decision.seat,
        step=decision.step,
        observation_json="{}",
        time_limit_ms=LIMIT_MS,
    )
    add_legal_actions(message, decision.legal_actions)
    return relay_pb2.DecisionCall(
        call_id=call_id,
        session_id=seat.session.session_id,
        match_id=decision.match_id,
        request_id=decision.request_id,
        seat=decision.seat,
        time_limit_ms=LIMIT_MS,
        legal_action_ids=[a.id for a in decision.legal_actions],
        decision_request=message.SerializeToString(),
    )


def open_link(stack: Stack) -> socket.socket:
    """A decision connection to the gateway, opened by hand (to drive it directly)."""
    host, port = str(stack.gateway.ready["decisions_address"]).rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=WAIT)


def read_replies(sock: socket.socket) -> list[relay_pb2.DecisionReply]:
    """Every reply until the gateway closes the connection."""
    frames = FrameBuffer()
    replies = []
    while data := sock.recv(65536):
        replies += [relay_pb2.DecisionReply.FromString(p) for p in frames.feed(data)]
    return replies


def test_a_worker_that_closes_its_side_still_gets_the_replies_open_on_it(stack: Stack) -> None:
    think = 0.3

    def late(bot: RawBot, r: bot_pb2.DecisionRequest) -> None:
        time.sleep(think)
        bot.answer(r)

    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=late, capacity=2).connect()
    channels = RelayChannels()
    try:
        wait_for_bot(stack.registry, "raw1")
        seats = [seat_in_match(stack, "raw1", f"half-close-{i}", channels) for i in range(2)]
        calls = [relay_call(seat, request(f"half-close-{i}", 0), i + 1) for i, seat in enumerate(seats)]
        before = relay_counters(stack)
        started = time.monotonic()
        with open_link(stack) as sock:
            # the worker closes its side with both open
            sock.sendall(b"".join(frame(c.SerializeToString()) for c in calls) + frame(CLOSING))
            replies = read_replies(sock)
        elapsed = time.monotonic() - started
        assert sorted(r.call_id for r in replies) == [1, 2]
        assert all(r.outcome == relay_pb2.OUTCOME_OK and r.action_id == "pass" for r in replies)
        assert all(r.bot_seconds <= elapsed for r in replies)  # the bot's time, measured at the gateway
        assert sum(r.bot_seconds for r in replies) + excused_since(stack, before, 2) >= 2 * think
    finally:
        channels.close()
        bot.close()


def test_a_call_whose_worker_connection_ends_is_withdrawn_and_the_late_answer_is_stale(stack: Stack) -> None:
    held: list[bot_pb2.DecisionRequest] = []

    def hold_the_first(bot: RawBot, r: bot_pb2.DecisionRequest) -> None:
        if held:
            bot.answer(r)
        else:
            held.append(r)

    bot = RawBot(stack.gateway.target, "tok-raw2", behaviour=hold_the_first).connect()
    channels = RelayChannels()
    try:
        wait_for_bot(stack.registry, "raw2")
        seat = seat_in_match(stack, "raw2", "withdrawn-1", channels)
        with open_link(stack) as sock:
            sock.sendall(frame(relay_call(seat, request("withdrawn-1", 0), 1).SerializeToString()))
            wait_for(lambda: held, what="the request at the bot")
        # the worker's connection is gone with the call open (no CLOSING frame: a worker that died)
        wait_for(lambda: pending(stack) == 0, what="the gateway to withdraw the call")
        bot.answer(held[0])
        errors = wait_for(bot.errors, what="the late answer refused")
        assert errors[0].reason == bot_pb2.ERROR_REASON_STALE_REQUEST and not errors[0].fatal
        assert seat.decide(request("withdrawn-1", 1)) == "pass"  # the session plays on
    finally:
        channels.close()
        bot.close()


def pending(stack: Stack) -> float:
    """The decisions the gateway holds open for an answer."""
    return stack.metrics()["caravanserai_gateway_pending_decisions"]


def test_an_unreadable_frame_closes_that_connection_only(stack: Stack) -> None:
    bot = RawBot(stack.gateway.target, "tok-raw3", behaviour=first_legal).connect()
    channels = RelayChannels()
    try:
        wait_for_bot(stack.registry, "raw3")
        seat = seat_in_match(stack, "raw3", "garbage-1", channels)
        with open_link(stack) as sock:
            sock.sendall(frame(b"\xff\xff\xff not a DecisionCall"))
            assert read_replies(sock) == []  # closed, nothing answered
        with open_link(stack) as sock:
            sock.sendall((1 << 31).to_bytes(4, "big"))  # a frame of 2 GiB announced
            assert read_replies(sock) == []
        assert seat.decide(request("garbage-1", 0)) == "pass"  # the gateway plays on
    finally:
        channels.close()
        bot.close()


Handler = Callable[[socket.socket, int], Any]


class FakeDecisionPort:
    """A gateway's decision port played by the test: each accepted connection runs `handler(sock, n)`
    (n counts the connections from 1) in a thread; `ended[n]` is what it returned."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.ended: dict[int, Any] = {}
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._run, args=(sock, self.connections), daemon=True).start()

    def _run(self, sock: socket.socket, n: int) -> None:
        self.ended[n] = self.handler(sock, n)

    def close(self) -> None:
        self.listener.close()


def calls_on(sock: socket.socket) -> Iterator[relay_pb2.DecisionCall]:
    """The calls a worker sends on a connection, until it closes its side (`CLOSING`) or the connection."""
    frames = FrameBuffer()
    with contextlib.suppress(OSError):
        while data := sock.recv(65536):
            for payload in frames.feed(data):
                if payload == CLOSING:
                    return
                yield relay_pb2.DecisionCall.FromString(payload)


def ok(call_: relay_pb2.DecisionCall, **fields: Any) -> bytes:
    return frame(
        relay_pb2.DecisionReply(
            call_id=call_.call_id, outcome=relay_pb2.OUTCOME_OK, action_id="pass", **fields
        ).SerializeToString()
    )


def answer_all(sock: socket.socket) -> None:
    for c in calls_on(sock):
        sock.sendall(ok(c))
    sock.close()


def breaks_after_two_calls(sock: socket.socket, n: int) -> None:
    """The first connection reads two calls and then drops (a gateway going away); later ones answer."""
    if n > 1:
        return answer_all(sock)
    for held, _ in enumerate(calls_on(sock), start=1):
        if held == 2:
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            return


def silent(sock: socket.socket, n: int) -> None:
    """A stuck gateway: it reads calls and never answers."""
    for _ in calls_on(sock):
        pass


@pytest.fixture
def fake_port(request: pytest.FixtureRequest) -> Iterator[FakeDecisionPort]:
    port = FakeDecisionPort(request.param)
    yield port
    port.close()


def call(match_id: str) -> relay_pb2.DecisionCall:
    return relay_pb2.DecisionCall(
        session_id="s", match_id=match_id, request_id=f"{match_id}:0", time_limit_ms=1000
    )


@pytest.mark.parametrize("fake_port", [breaks_after_two_calls], indirect=True)
def test_a_broken_connection_fails_its_waiters_and_the_next_call_reconnects(
    fake_port: FakeDecisionPort,
) -> None:
    connection = RelayConnection(fake_port.address)
    errors: list[grpc.StatusCode] = []

    def wait(match_id: str) -> None:
        try:
            connection.decide(call(match_id), timeout=WAIT)
        except grpc.RpcError as exc:
            errors.append(exc.code())

    threads = [threading.Thread(target=wait, args=(f"m{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert errors == [grpc.StatusCode.UNAVAILABLE] * 2
    assert connection.decide(call("m3"), timeout=WAIT).action_id == "pass"
    assert connection.links_opened == 2 and fake_port.connections == 2
    connection.close()


@pytest.mark.parametrize("fake_port", [silent], indirect=True)
def test_a_stuck_gateway_times_out_the_waiter_and_the_connection_is_reopened(
    fake_port: FakeDecisionPort,
) -> None:
    connection = RelayConnection(fake_port.address)
    started = time.monotonic()
    with pytest.raises(grpc.RpcError) as info:
        connection.decide(call("m1"), timeout=0.5)
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started >= 0.5  # its whole timeout, then given up
    with pytest.raises(grpc.RpcError):
        connection.decide(call("m2"), timeout=0.5)
    assert connection.links_opened == 2 and fake_port.connections == 2
    connection.close()


def closes_when_idle(sock: socket.socket, n: int) -> None:
    """Answers one call, then closes the connection while the worker has nothing open (a restart, a cut)."""
    for c in calls_on(sock):
        sock.sendall(ok(c))
        break
    sock.close()


@pytest.mark.parametrize("fake_port", [closes_when_idle], indirect=True)
def test_a_connection_closed_while_idle_is_replaced_without_failing_a_call(
    fake_port: FakeDecisionPort,
) -> None:
    connection = RelayConnection(fake_port.address)
    assert connection.decide(call("m1"), timeout=WAIT).action_id == "pass"
    wait_for(lambda: 1 in fake_port.ended, what="the gateway to close the idle connection")
    assert connection.decide(call("m2"), timeout=WAIT).action_id == "pass"
    assert connection.links_opened == 2 and fake_port.connections == 2
    connection.close()


def retires_on_the_first_call(sock: socket.socket, n: int) -> int | None:
    """The first connection answers its first call saying the gateway shuts down, answers whatever else
    comes until the worker half-closes, and closes (returns how many came after); later ones answer."""
    if n > 1:
        return answer_all(sock)
    calls = calls_on(sock)
    sock.sendall(ok(next(calls), gateway_shutdown=True))
    held = list(calls)  # until the worker's half-close
    for c in held:
        sock.sendall(ok(c))
    sock.close()
    return len(held)


@pytest.mark.parametrize("fake_port", [retires_on_the_first_call], indirect=True)
def test_a_gateway_shutting_down_retires_the_connection_and_still_answers_what_is_open(
    fake_port: FakeDecisionPort,
) -> None:
    connection = RelayConnection(fake_port.address)
    assert connection.decide(call("m1"), timeout=WAIT).gateway_shutdown
    assert connection.decide(call("m2"), timeout=WAIT).action_id == "pass"  # on a new connection
    wait_for(lambda: 1 in fake_port.ended, what="the first connection to see the worker's half-close")
    assert fake_port.ended[1] == 0 and connection.links_opened == 2 and fake_port.connections == 2
    connection.close()


def test_a_framed_request_reads_as_the_request_with_the_gateways_deadline() -> None:
    inner = bot_pb2.DecisionRequest(
        match_id="m",
        request_id="m:7",
        seat=1,
        step=7,
        observation_json='{"hand":["silk"]}',
        legal_actions=[bot_pb2.LegalAction(id="pass", kind="pass", details_json="{}")],
        time_limit_ms=1500,
    )
    framed = frame_decision_request(inner.SerializeToString(), 1_900_000_000_123)
    message = bot_pb2.ServerMessage.FromString(framed)
    expected = bot_pb2.DecisionRequest()
    expected.CopyFrom(inner)
    expected.deadline_unix_ms = 1_900_000_000_123
    assert message.WhichOneof("message") == "decision_request" and message.decision_request == expected
    assert serialize_server_message(framed) is framed
    pong = bot_pb2.ServerMessage(pong=bot_pb2.Pong(nonce=3))
    assert serialize_server_message(pong) == pong.SerializeToString()
