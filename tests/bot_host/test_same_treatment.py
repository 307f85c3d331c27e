"""Hosted bots are bots like any other: a sandboxed Python bot and a sandboxed Node bot play whole matches
through the gateway's Unix-domain socket and the relay with no fault, also next to a hosted bot spinning in
forked children, and a host restart in the middle of a match is an incident the reconnect grace absorbs,
never the bot's fault.

Whatever the machine's load: the bots play under `PATIENT` deadlines, the host goes away between two
decisions of the house seat (which waits for it), and a host away for longer than the bot's deadline is
away that long on the seat's clock (`SeatClock`), not slept for."""

from __future__ import annotations

import re
import threading
from dataclasses import replace

import pytest

from bot_host.examples import example_archive
from bot_host.host import BotHost
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import make_policy
from engine_service.referee import DecisionRequest, HouseSeat, MatchRecord, TimeControl, run_match, verify
from tests.bot_host.conftest import LIMITS, HostRig, bot_archive
from tests.engine_service.gateway.harness import GAME, PATIENT, WAIT, SeatClock, wait_for
from tests.engine_service.gateway.test_relay import house

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("treatment_gateway")]  # the module's gateway, once

DEADLINE = PATIENT.decision_seconds + PATIENT.time_bank_seconds  # a first decision's, with the whole bank


@pytest.mark.parametrize("runtime", ["python", "node"])
def test_a_hosted_bot_plays_a_whole_match_without_faults(rig: HostRig, runtime: str) -> None:
    bot_id = 3 if runtime == "python" else 4
    rig.source.add(bot_id, example_archive(runtime))
    assert rig.until(lambda: rig.connected(bot_id)), rig.log(bot_id)
    seat = RemoteSeat(str(bot_id), f"hosted-{bot_id}", rig.registry)
    record = run_match(GAME, 2, 71, [seat, house(72)], time_control=PATIENT)
    assert record.result is not None and record.faults == []
    verify(record)
    assert rig.host.running[bot_id].process.crashes == 0


def test_a_hosted_bot_keeps_its_clock_next_to_a_bot_that_spins_in_forked_children(rig: HostRig) -> None:
    """The spinner's whole tree gets its one core (its group's quota) and the same weight as any bot, so
    the other bot still plays its match, no fault, on a machine the spinner would otherwise fill."""
    rig.with_limits(replace(LIMITS, cpu_seconds=600))  # the spinner is held back, never killed
    rig.source.add(5, bot_archive("fork_spin.py"))
    assert rig.until(lambda: rig.logged(5, "SPINNERS 3")), rig.log(5)
    rig.source.add(3, example_archive("python"))
    assert rig.until(lambda: rig.connected(3)), rig.log(3)
    seat = RemoteSeat("3", "hosted-3", rig.registry)
    record = run_match(GAME, 2, 91, [seat, house(92)], time_control=PATIENT)
    assert record.result is not None and record.faults == []
    assert rig.host.running[5].cgroup.cpu_usage_ns() > 0 and rig.host.running[5].process.starts == 1


class HeldHouse(HouseSeat):
    """A house seat whose second decision waits until the host is gone: the host goes away mid-match."""

    def __init__(self, seed: int) -> None:
        super().__init__(make_policy("random", seed), f"held-house-{seed}")
        self.steps: list[int] = []
        self.decided = threading.Event()
        self.host_gone = threading.Event()

    def decide(self, request: DecisionRequest) -> str:
        self.steps.append(request.step)
        if len(self.steps) == 2:
            self.host_gone.wait(WAIT)
        self.decided.set()
        return super().decide(request)


def play_in_a_thread(
    seat: RemoteSeat, seed: int, control: TimeControl = PATIENT
) -> tuple[threading.Thread, list[MatchRecord], HeldHouse]:
    """A match of the hosted seat against a held house seat, started in a thread, once the house decided."""
    records: list[MatchRecord] = []
    held = HeldHouse(seed + 1)
    match = threading.Thread(
        target=lambda: records.append(run_match(GAME, 2, seed, [seat, held], time_control=control))
    )
    match.start()
    assert held.decided.wait(WAIT)
    return match, records, held


def played_on(record: MatchRecord, held: HeldHouse) -> bool:
    """Whether the hosted seat decided after the house's second decision (made once the host was gone)."""
    return any(seat == 0 for seat, _ in record.actions[held.steps[1] + 1 :])


def test_a_host_restart_mid_match_is_no_fault_of_the_bot(rig: HostRig) -> None:
    rig.source.add(3, example_archive("python"))
    assert rig.until(lambda: rig.connected(3)), rig.log(3)
    seat = RemoteSeat("3", "hosted-3", rig.registry, reconnect_grace=WAIT)
    # with no presence in the registry, the wait for its host to come back is the bot's own time: a bank
    # that a host restart on a busy machine does not use up
    match, records, held = play_in_a_thread(seat, 81, replace(PATIENT, time_bank_seconds=2 * WAIT))
    rig.host.shutdown()  # the host goes away: its sandboxes die with it
    held.host_gone.set()
    wait_for(lambda: not rig.connected(3), what="its stream to end")  # never stepping the stopped host
    rig.host = BotHost(rig.host.settings, rig.source, rig.host.runtimes)  # a new host process, same source
    assert rig.until(lambda: rig.connected(3)), rig.log(3)
    match.join(300)
    [record] = records
    assert record.result is not None and record.faults == [] and record.forfeits == []
    assert played_on(record, held)  # the bot came back mid-match and played on


def test_a_host_down_for_longer_than_the_bots_clock_is_a_server_incident(rig: HostRig) -> None:
    """The host says in the registry that it is up, and that it stops: a hosted bot whose stream ended while
    its host was down is waited for (excused), however long past its own deadline the host stays away."""
    rig.host = BotHost(rig.host.settings, rig.source, rig.host.runtimes, presence=rig.registry)
    rig.source.add(3, example_archive("python"))
    assert rig.until(lambda: rig.connected(3)), rig.log(3)
    clock = SeatClock()
    seat = RemoteSeat(
        "3", "hosted-3", rig.registry, reconnect_grace=WAIT, host_return=100 * DEADLINE, clock=clock
    )
    match, records, held = play_in_a_thread(seat, 83)
    rig.host.shutdown()  # it says it stops, then its sandboxes die with it
    held.host_gone.set()
    wait_for(
        lambda: any(i["kind"] == "bot_host_lost" for i in seat.incidents), what="the seat to see it down"
    )
    clock.stride = DEADLINE / 2  # the host stays away, on the seat's clock, well past the bot's own deadline
    wait_for(lambda: clock.ahead >= 3 * DEADLINE, what="the seat to wait through three deadlines")
    clock.stride = 0.0
    rig.host = BotHost(rig.host.settings, rig.source, rig.host.runtimes, presence=rig.registry)
    assert rig.until(lambda: rig.connected(3)), rig.log(3)
    match.join(300)
    [record] = records
    assert record.result is not None and record.faults == [] and record.forfeits == []
    kinds = [i["kind"] for i in record.incidents]
    assert "bot_host_lost" in kinds and "resumed" in kinds, record.incidents
    [resumed] = [i for i in record.incidents if i["kind"] == "resumed"]
    down = re.search(r"\(([\d.]+)s of it with its host down\)", resumed["reason"])
    assert down is not None and float(down[1]) > DEADLINE, resumed  # away for longer than the bot's clock
    assert played_on(record, held)
