"""Matches through the relay with misbehaving bots: every fault gets its status, a recorded reason, and the
match still ends, with a record that replays to the same result.

Whatever the machine's load: bots that answer play under `PATIENT` deadlines; a bot that times out does so
by answering only after its fault notice; a seat whose bot left for good has its clock moved past the
deadline it would wait out; a gateway down for longer than the grace is down that long on the seat's clock.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import grpc
import pytest

from engine_service.gateway.protocol import bot_pb2
from engine_service.gateway.registry import SqliteRegistry, online_bots
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import make_policy
from engine_service.referee import (
    HouseSeat,
    MatchAborted,
    MatchRecord,
    SeatUnavailable,
    TimeControl,
    run_match,
    verify,
)
from engine_service.referee.match import final_ranks
from tests.engine_service.gateway.harness import (
    GAME,
    PATIENT,
    SESSION_TTL,
    TOLERANT,
    WAIT,
    BotProcess,
    RawBot,
    SeatClock,
    Stack,
    first_legal,
    start_stack,
    wait_for,
    wait_for_bot,
)

pytestmark = pytest.mark.xdist_group("relay_stack")  # the module's gateway, started once

FAST = TimeControl(decision_seconds=0.5, time_bank_seconds=0.5, max_faults=1)  # for bots that time out


def house(seed: int) -> HouseSeat:
    return HouseSeat(make_policy("random", seed), f"house-{seed}")


def replay_matches(record: MatchRecord) -> None:
    """The record replays to the very result the referee reported."""
    state = verify(record)
    assert record.result is not None
    assert state.result().to_json() == record.result["game"]
    assert final_ranks(state.result().ranks, record.forfeits) == record.result["ranks"]


def test_first_legal_raw_bot_plays_a_clean_match(stack: Stack) -> None:
    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=first_legal).connect()
    wait_for_bot(stack.registry, "raw1")
    record = run_match(
        GAME, 2, 5, [RemoteSeat("raw1", "raw-one", stack.registry), house(1)], time_control=PATIENT
    )
    replay_matches(record)
    assert record.faults == [] and record.seats[0].kind == "remote" and record.seats[0].bot_id == "raw1"
    assert all(
        a == r.legal_actions[0].id
        for (s, a), r in zip([x for x in record.actions if x[0] == 0], bot.requests, strict=True)
    )
    started = bot.messages("match_started")[0]
    assert (
        started.match_id == record.match_id and started.seat == 0 and list(started.opponents) == ["house-1"]
    )
    assert started.time_control.decision_ms == PATIENT.decision_seconds * 1000
    assert started.time_control.max_faults == PATIENT.max_faults
    ended = wait_for(lambda: bot.messages("match_ended"), what="MatchEnded")[0]
    assert (
        list(ended.scores) == record.result["game"]["scores"] and list(ended.ranks) == record.result["ranks"]
    )
    bot.close()


def test_stale_request_and_wrong_seat_are_refused(stack: Stack) -> None:
    outsider = RawBot(stack.gateway.target, "tok-raw3").connect()
    seen: dict[str, bot_pb2.DecisionRequest] = {}

    def seat0(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        seen["last0"] = request
        if len(bot.requests) == 1:
            # an outsider (not in the match) and the opponent both try to answer this open request
            outsider.answer(request, request.legal_actions[-1].id)
            wait_for(outsider.errors, what="the outsider refused first")
        bot.answer(request)
        if len(bot.requests) == 1:
            bot.answer(request)  # a second answer to the same request: stale

    def seat1(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        if len(bot.requests) == 1 and "last0" in seen:
            bot.answer(seen["last0"], "stolen")  # the opponent answering seat 0's (already answered) request
        bot.answer(request)

    a = RawBot(stack.gateway.target, "tok-raw1", behaviour=seat0).connect()
    b = RawBot(stack.gateway.target, "tok-raw2", behaviour=seat1).connect()
    wait_for_bot(stack.registry, "raw1")
    wait_for_bot(stack.registry, "raw2")
    seats = [RemoteSeat("raw1", "raw-one", stack.registry), RemoteSeat("raw2", "raw-two", stack.registry)]
    record = run_match(GAME, 2, 6, seats, time_control=PATIENT)
    replay_matches(record)
    assert record.faults == []
    assert record.actions[0] == (0, a.requests[0].legal_actions[0].id)  # the outsider's answer did not count

    denied = wait_for(lambda: outsider.errors(), what="outsider refusal")[0]
    assert denied.status_code == grpc.StatusCode.PERMISSION_DENIED.value[0]
    assert denied.reason == bot_pb2.ERROR_REASON_NOT_YOUR_SEAT and not denied.fatal
    stale = wait_for(lambda: a.errors(), what="stale refusal")[0]
    assert stale.status_code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert stale.reason == bot_pb2.ERROR_REASON_STALE_REQUEST and stale.request_id == a.requests[0].request_id
    opponent = wait_for(lambda: b.errors(), what="opponent refusal")[0]
    assert opponent.reason in (bot_pb2.ERROR_REASON_STALE_REQUEST, bot_pb2.ERROR_REASON_NOT_YOUR_SEAT)
    for bot in (a, b, outsider):
        bot.close()


def test_illegal_and_malformed_answers_are_faults_with_fallbacks(stack: Stack) -> None:
    def sloppy(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        n = len(bot.requests)
        bot.answer(request, "fly-to-daidu" if n == 1 else "" if n == 2 else None)

    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=sloppy).connect()
    wait_for_bot(stack.registry, "raw1")
    record = run_match(
        GAME, 2, 7, [RemoteSeat("raw1", "raw-one", stack.registry), house(2)], time_control=TOLERANT
    )
    replay_matches(record)
    illegal, malformed = record.faults
    assert illegal.kind == "illegal" and illegal.action_id == "fly-to-daidu" and "legal:" in illegal.reason
    assert illegal.fallback_action == bot.requests[0].legal_actions[0].id and not illegal.forfeit
    assert malformed.kind == "malformed" and "empty action id" in malformed.reason
    assert record.forfeits == []
    notices = wait_for(lambda: len(bot.messages("fault_notice")) >= 2 and bot.messages("fault_notice"))
    assert [n.fault.kind for n in notices[:2]] == [bot_pb2.FAULT_KIND_ILLEGAL, bot_pb2.FAULT_KIND_MALFORMED]
    ended = wait_for(lambda: bot.messages("match_ended"), what="MatchEnded")[0]
    assert [f.kind for f in ended.faults] == [bot_pb2.FAULT_KIND_ILLEGAL, bot_pb2.FAULT_KIND_MALFORMED]
    assert ended.faults[0].step == illegal.step and ended.faults[0].reason == illegal.reason
    bot.close()


def notified(bot: RawBot, request: bot_pb2.DecisionRequest) -> bool:
    """Whether the bot has been told of a fault on `request`."""
    return any(n.request_id == request.request_id for n in bot.messages("fault_notice"))


def test_slow_bot_times_out_then_forfeits(stack: Stack) -> None:
    def slow(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        if len(bot.requests) <= 2:  # answer after the deadline: once told of the timeout
            wait_for(lambda: notified(bot, request), what="the timeout notice")
        bot.answer(request)

    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=slow).connect()
    wait_for_bot(stack.registry, "raw1")
    record = run_match(
        GAME, 2, 8, [RemoteSeat("raw1", "raw-one", stack.registry), house(3)], time_control=FAST
    )
    replay_matches(record)
    assert len(bot.requests) == 2  # never asked again once forfeited: nothing more to wait for
    first, second = record.faults
    assert first.kind == second.kind == "timeout"
    assert "no answer within 1.00s" in first.reason  # decision time plus the whole bank
    assert "no answer within 0.50s" in second.reason  # the bank is spent
    assert second.forfeit and record.forfeits == [0] and record.result["ranks"][0] == 2
    notice = wait_for(lambda: bot.messages("fault_notice"), what="timeout notice")[0]
    assert notice.fault.kind == bot_pb2.FAULT_KIND_TIMEOUT
    stale = wait_for(lambda: bot.errors(), what="late answer refused")[0]
    assert stale.reason == bot_pb2.ERROR_REASON_STALE_REQUEST
    bot.close()


def test_bot_that_disconnects_mid_match_forfeits(stack: Stack) -> None:
    clock = SeatClock()

    def quitter(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        if len(bot.requests) == 5:
            clock.skip()  # it never comes back: the seat's wait for it ends at once
            bot.close()
            return
        bot.answer(request)

    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=quitter).connect()
    wait_for_bot(stack.registry, "raw1")
    seat = RemoteSeat("raw1", "raw-one", stack.registry, clock=clock)
    record = run_match(GAME, 2, 9, [seat, house(4)], time_control=PATIENT)
    replay_matches(record)
    [fault] = record.faults
    assert fault.kind == "disconnect" and fault.forfeit and record.forfeits == [0]
    assert "stream ended" in fault.reason and "did not reconnect" in fault.reason
    assert fault.step == bot.requests[4].step


def test_resign_forfeits(stack: Stack) -> None:
    def resigner(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        if len(bot.requests) == 3:
            bot.send(bot_pb2.BotMessage(resign=bot_pb2.Resign(match_id=request.match_id, reason="hopeless")))
            return
        bot.answer(request)

    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=resigner).connect()
    wait_for_bot(stack.registry, "raw1")
    record = run_match(
        GAME, 2, 10, [house(5), RemoteSeat("raw1", "raw-one", stack.registry)], time_control=PATIENT
    )
    replay_matches(record)
    [fault] = record.faults
    assert fault.kind == "resign" and "hopeless" in fault.reason and fault.forfeit and record.forfeits == [1]
    bot.send(bot_pb2.BotMessage(resign=bot_pb2.Resign(match_id="someone-elses")))
    denied = wait_for(lambda: bot.errors(), what="refusal")[0]
    assert denied.reason == bot_pb2.ERROR_REASON_NOT_YOUR_SEAT
    bot.close()


def test_revoked_token_drops_the_stream_at_once(stack: Stack) -> None:
    clock = SeatClock()

    def player(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        if len(bot.requests) == 4:
            clock.skip()  # a revoked bot cannot come back: the seat's wait for it ends at once
            stack.registry.publish_revocation("revoke")  # what the ladder does when the owner revokes
            return
        bot.answer(request)

    bot = RawBot(stack.gateway.target, "tok-revoke", behaviour=player).connect()
    wait_for_bot(stack.registry, "revoke")
    seat = RemoteSeat("revoke", "revoked", stack.registry, clock=clock)
    record = run_match(GAME, 2, 11, [seat, house(6)], time_control=PATIENT)
    replay_matches(record)
    assert bot.wait_closed() == grpc.StatusCode.UNAUTHENTICATED and "revoked" in bot.details
    [fault] = record.faults
    assert fault.kind == "disconnect" and fault.forfeit and "UNAUTHENTICATED" in fault.reason
    again = RawBot(stack.gateway.target, "tok-revoke").connect(wait=False)
    assert again.wait_closed() == grpc.StatusCode.UNAUTHENTICATED
    bot.close()
    again.close()


def test_several_matches_at_once_on_one_stream(stack: Stack) -> None:
    all_open = threading.Event()

    def held(bot: RawBot, request: bot_pb2.DecisionRequest) -> None:
        all_open.wait(WAIT)  # each match's first answer waits until the three are open at once
        bot.answer(request)

    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=held, capacity=3).connect()
    wait_for_bot(stack.registry, "raw1")
    records: list[MatchRecord] = []

    def one(seed: int) -> None:
        seat = RemoteSeat("raw1", "raw-one", stack.registry)
        records.append(run_match(GAME, 2, seed, [seat, house(seed)], time_control=PATIENT))

    def open_matches() -> int:
        return max((b.matches for b in online_bots(stack.registry) if b.bot_id == "raw1"), default=0)

    threads = [threading.Thread(target=one, args=(20 + i,)) for i in range(3)]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: open_matches() == 3, what="three matches open on the stream at once")
    finally:
        all_open.set()
    for t in threads:
        t.join(WAIT)
    assert len(records) == 3 and all(r.faults == [] for r in records)
    for record in records:
        replay_matches(record)
    assert len({m.match_id for m in bot.messages("match_ended")}) == 3
    bot.close()


def test_no_stream_at_start_calls_the_match_off_and_tells_the_seated_bot(stack: Stack) -> None:
    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=first_legal).connect()
    wait_for_bot(stack.registry, "raw1")
    seats = [
        RemoteSeat("raw1", "raw-one", stack.registry, reconnect_grace=0.5),
        RemoteSeat("nobody", "ghost", stack.registry, reconnect_grace=0.5),
    ]
    with pytest.raises(SeatUnavailable, match=r"no stream open .* called off, unrated"):
        run_match(GAME, 2, 12, seats, time_control=PATIENT)
    [ended] = wait_for(lambda: bot.messages("match_ended"), what="the seated bot to hear of it")
    assert ended.reason == "aborted" and ended.end_reason == bot_pb2.END_REASON_ABORTED
    assert bot.messages("decision_request") == []  # nobody played: nothing to forfeit
    bot.close()


def test_gateway_restart_mid_match_resumes_on_the_new_gateway(tmp_path: Path) -> None:
    stack = start_stack(tmp_path)
    bot = BotProcess("random", stack.gateway.target, "tok-alpha", tmp_path, "--seed", "4")
    try:
        wait_for_bot(stack.registry, "alpha")
        first_id = stack.gateway.gateway_id
        restarts: list[str] = []

        def on_step(state, record) -> None:
            if state.step == 30:
                stack.gateway.restart()  # SIGTERM: streams closed with UNAVAILABLE, then a new process
                restarts.append("graceful")
            elif state.step == 90:
                stack.gateway.kill()  # a crash: no goodbye at all
                stack.gateway.start()
                restarts.append("crash")

        seat = RemoteSeat("alpha", "py-random", stack.registry, reconnect_grace=WAIT)
        record = run_match(GAME, 2, 13, [seat, house(8)], time_control=PATIENT, on_step=on_step)
        replay_matches(record)
        assert restarts == ["graceful", "crash"] and stack.gateway.gateway_id != first_id
        assert record.faults == [] and record.forfeits == []
        kinds = [i["kind"] for i in record.incidents]
        assert kinds == ["gateway_lost", "resumed", "gateway_lost", "resumed"]
        assert all(i["seat"] == 0 for i in record.incidents)
        output = wait_for(
            lambda: "ended: rank" in bot.output() and bot.output(), what="bot to hear the result"
        )
        assert "UNAVAILABLE" in output and "gateway shutting down; reconnect" in output
        assert "resumed on this stream" in output
        scores = record.result["game"]["scores"]
        assert f"scores {scores}" in output
    finally:
        bot.stop()
        stack.gateway.stop()


def test_the_reconnect_grace_counts_from_when_a_gateway_is_back(tmp_path: Path) -> None:
    """A gateway down for longer than the grace: the bot that reconnects soon after it is back plays on.
    The downtime is the seat's: while the gateway is down, each reading of the seat's clock is a quarter of
    the grace later, so the wait sees it down for several graces, and the grace left once it is back is
    what the machine needs to start it again and the bot to reconnect."""
    stack = start_stack(tmp_path)
    bot = BotProcess("random", stack.gateway.target, "tok-alpha", tmp_path, "--seed", "5")
    clock, grace = SeatClock(), WAIT
    try:
        wait_for_bot(stack.registry, "alpha")

        def back_after_several_graces() -> None:
            wait_for(lambda: clock.ahead >= 3 * grace, what="the seat to wait through three graces")
            clock.stride = 0.0
            stack.gateway.start()

        def on_step(state, record) -> None:
            if state.step == 20:
                stack.gateway.kill()
                clock.stride = grace / 4
                threading.Thread(target=back_after_several_graces).start()

        seat = RemoteSeat(
            "alpha",
            "py-random",
            stack.registry,
            reconnect_grace=grace,
            gateway_return=10 * grace,
            clock=clock,
        )
        record = run_match(GAME, 2, 15, [seat, house(8)], time_control=PATIENT, on_step=on_step)
        replay_matches(record)
        assert record.faults == [] and record.forfeits == []
        assert [i["kind"] for i in record.incidents] == ["gateway_lost", "resumed"]
        down = re.search(r"\(([\d.]+)s of it with no gateway admitting", record.incidents[1]["reason"])
        assert down is not None and float(down[1]) > grace, record.incidents  # down longer than the grace
    finally:
        bot.stop()
        stack.gateway.stop()


def test_no_gateway_left_aborts_the_match_unrated(tmp_path: Path) -> None:
    stack = start_stack(tmp_path)
    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=first_legal).connect()
    try:
        wait_for_bot(stack.registry, "raw1")

        def on_step(state, record) -> None:
            if state.step == 10:
                stack.gateway.kill()

        seat = RemoteSeat("raw1", "raw-one", stack.registry, reconnect_grace=1.0, gateway_return=1.0)
        with pytest.raises(MatchAborted, match="no gateway alive"):
            run_match(GAME, 2, 14, [seat, house(9)], time_control=PATIENT, on_step=on_step)
    finally:
        bot.close()
        stack.gateway.stop()


def test_redis_registry_end_to_end(tmp_path: Path) -> None:
    import os
    import uuid

    from engine_service.gateway.registry import RedisRegistry

    url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/5"
    prefix = f"cvs:test:{uuid.uuid4().hex[:8]}"
    stack = start_stack(tmp_path, env={"REDIS_URL": url, "CARAVANSERAI_REGISTRY_PREFIX": prefix})
    registry = RedisRegistry(url, prefix=prefix, ttl=SESSION_TTL)
    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=first_legal).connect()
    try:
        wait_for_bot(registry, "raw1")
        assert not SqliteRegistry(tmp_path / "registry.sqlite3").sessions()  # Redis, not the file
        record = run_match(
            GAME, 2, 15, [RemoteSeat("raw1", "raw-one", registry), house(10)], time_control=PATIENT
        )
        replay_matches(record)
        assert record.faults == []
    finally:
        bot.close()
        stack.gateway.stop()
        for key in registry.client.scan_iter(f"{prefix}:*"):
            registry.client.delete(key)


def test_the_version_in_the_bots_hello_is_recorded_with_its_seat(stack: Stack) -> None:
    bot = RawBot(stack.gateway.target, "tok-raw1", behaviour=first_legal)
    bot.connect(
        bot_pb2.Hello(bot_name="raw", bot_version="git-1a2b3c", games=[GAME], max_concurrent_matches=1)
    )
    wait_for_bot(stack.registry, "raw1")
    seat = RemoteSeat("raw1", "raw-one", stack.registry)
    record = run_match(GAME, 2, 31, [seat, house(3)], time_control=PATIENT)
    assert record.seats[0].version == "git-1a2b3c" and record.seats[1].version == ""
    assert MatchRecord.from_json(record.to_json()).seats[0].version == "git-1a2b3c"
    assert "version" not in record.to_json()["seats"][1]  # a seat with no version reads as before
    bot.close()
