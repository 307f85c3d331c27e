"""Hosted bots are bots like any other: a sandboxed Python bot and a sandboxed Node bot play whole matches
through the gateway's Unix-domain socket and the relay with no fault, also next to a hosted bot spinning in
forked children, and a host restart in the middle of a match is an incident the reconnect grace absorbs,
never the bot's fault."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from bot_host.examples import example_archive
from bot_host.host import BotHost
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import make_policy
from engine_service.referee import DecisionRequest, HouseSeat, MatchRecord, TimeControl, run_match, verify
from tests.bot_host.conftest import LIMITS, HostRig, bot_archive
from tests.engine_service.gateway.harness import GAME
from tests.engine_service.gateway.test_relay import house

pytestmark = pytest.mark.slow


class SlowHouse(HouseSeat):
    """A house seat that thinks a while, so the match is still running when the host goes away."""

    def __init__(self, seed: int, decided: threading.Event) -> None:
        super().__init__(make_policy("random", seed), f"slow-house-{seed}")
        self.decided = decided

    def decide(self, request: DecisionRequest) -> str:
        self.decided.set()
        time.sleep(0.1)
        return super().decide(request)


CLOCK = TimeControl(decision_seconds=5.0, time_bank_seconds=10.0, max_faults=1)


@pytest.mark.parametrize("runtime", ["python", "node"])
def test_a_hosted_bot_plays_a_whole_match_without_faults(rig: HostRig, runtime: str) -> None:
    bot_id = 3 if runtime == "python" else 4
    rig.source.add(bot_id, example_archive(runtime))
    assert rig.until(lambda: rig.connected(bot_id)), rig.log(bot_id)
    seat = RemoteSeat(str(bot_id), f"hosted-{bot_id}", rig.registry)
    record = run_match(GAME, 2, 71, [seat, house(72)], time_control=CLOCK)
    assert record.result is not None and record.faults == []
    verify(record)
    assert rig.host.running[bot_id].process.crashes == 0


def test_a_hosted_bot_keeps_its_clock_next_to_a_bot_that_spins_in_forked_children(rig: HostRig) -> None:
    """The spinner's whole tree gets its one core (its group's quota) and the same weight as any bot, so
    the other bot still answers within its clock on a machine the spinner would otherwise fill."""
    rig.with_limits(replace(LIMITS, cpu_seconds=600))  # the spinner is held back, never killed
    rig.source.add(5, bot_archive("fork_spin.py"))
    assert rig.until(lambda: rig.logged(5, "SPINNERS 3")), rig.log(5)
    rig.source.add(3, example_archive("python"))
    assert rig.until(lambda: rig.connected(3)), rig.log(3)
    seat = RemoteSeat("3", "hosted-3", rig.registry)
    record = run_match(GAME, 2, 91, [seat, house(92)], time_control=CLOCK)
    assert record.result is not None and record.faults == []
    assert rig.host.running[5].cgroup.cpu_usage_ns() > 0 and rig.host.running[5].process.starts == 1


def play_in_a_thread(
    seat: RemoteSeat, seed: int, clock: TimeControl
) -> tuple[threading.Thread, list[MatchRecord]]:
    """A match of the hosted seat against a slow house seat, started in a thread, once the house decided."""
    records: list[MatchRecord] = []
    decided = threading.Event()
    seats = [seat, SlowHouse(seed + 1, decided)]
    match = threading.Thread(
        target=lambda: records.append(run_match(GAME, 2, seed, seats, time_control=clock))
    )
    match.start()
    assert decided.wait(30)
    return match, records


def test_a_host_restart_mid_match_is_no_fault_of_the_bot(rig: HostRig) -> None:
    rig.source.add(3, example_archive("python"))
    assert rig.until(lambda: rig.connected(3)), rig.log(3)
    seat = RemoteSeat("3", "hosted-3", rig.registry, reconnect_grace=20.0)
    match, records = play_in_a_thread(seat, 81, CLOCK)
    rig.host.shutdown()  # the host goes away: its sandboxes die with it
    assert not rig.connected(3) or rig.until(lambda: not rig.connected(3), timeout=15)
    rig.host = BotHost(rig.host.settings, rig.source, rig.host.runtimes)  # a new host process, same source
    assert rig.until(lambda: rig.connected(3)), rig.log(3)
    assert match.is_alive()  # the host came back before the match ended
    match.join(300)
    [record] = records
    assert record.result is not None and record.faults == [] and record.forfeits == []


SHORT = TimeControl(decision_seconds=1.0, time_bank_seconds=0.0, max_faults=1)


def test_a_host_down_for_longer_than_the_bots_clock_is_a_server_incident(rig: HostRig) -> None:
    """The host says in the registry that it is up, and that it stops: a hosted bot whose stream ended while
    its host was down is waited for (excused), however long past its own deadline the host stays away."""
    rig.host = BotHost(rig.host.settings, rig.source, rig.host.runtimes, presence=rig.registry)
    rig.source.add(3, example_archive("python"))
    assert rig.until(lambda: rig.connected(3)), rig.log(3)
    seat = RemoteSeat("3", "hosted-3", rig.registry, reconnect_grace=5.0)
    match, records = play_in_a_thread(seat, 83, SHORT)
    rig.host.shutdown()  # it says it stops, then its sandboxes die with it
    assert wait(lambda: any(i["kind"] == "bot_host_lost" for i in seat.incidents), 60), seat.incidents
    time.sleep(3 * SHORT.decision_seconds)  # the host stays away well past the bot's own deadline
    assert match.is_alive()
    rig.host = BotHost(rig.host.settings, rig.source, rig.host.runtimes, presence=rig.registry)
    assert rig.until(lambda: rig.connected(3)), rig.log(3)
    match.join(300)
    [record] = records
    assert record.result is not None and record.faults == [] and record.forfeits == []
    kinds = [i["kind"] for i in record.incidents]
    assert "bot_host_lost" in kinds and "resumed" in kinds, record.incidents


def wait(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False
