"""The scale-out rehearsal's phases over a running `Cluster`, each returning its figures (plain dicts): the
test runs them short and checks them, the bench (`make rehearse-scale-out`) runs them longer and prints them.

- `play`: matches across nodes (matches per gateway and per worker, matches whose bots were on different
  gateways, HAProxy's streams per gateway);
- `kill_gateway`: SIGKILL one gateway while matches run; its bots reconnect through HAProxy to another one;
- `drain_gateway`: SIGTERM one gateway (a rolling restart's drain) while matches run;
- `kill_worker`: SIGKILL one worker while the others play on;
- `cut_relay`: the workers lose the network to one gateway (its relay and decision ports closed) while its
  bots stay connected to it.

Every fault phase reports the matches it affected (running on the victim when it struck), how they ended
(done, cancelled unrated, error, unfinished), how many of them were rated against a registered bot
(forfeit, disconnect or timeout fault), the recovery times, and the matches finished meanwhile (rounds)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from typing import Any

from tests.scale.cluster import Cluster
from tests.workers.stack import wait_for

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def play(cluster: Cluster, matches: int, *, timeout: float = 180, say: Say = _quiet) -> dict[str, Any]:
    """Wait for `matches` more finished matches; the spread over gateways and workers so far."""
    before = cluster.done_count()
    started = time.monotonic()
    say(f"playing until {matches} more matches are done")
    wait_for(lambda: cluster.done_count() >= before + matches, timeout, f"{matches} more finished matches")
    seconds = time.monotonic() - started
    figures = cluster.spread()
    figures["rounds"] = cluster.done_count() - before
    figures["matches_per_minute"] = round(figures["rounds"] * 60 / seconds, 1)
    return figures


def _busy_gateway(cluster: Cluster, timeout: float = 90) -> tuple[str, list[int]]:
    """The gateway with the most running matches of registered bots, and those matches."""
    seen: list[Any] = []

    def pick() -> tuple[str, list[int]] | None:
        busy = [(n, cluster.running_on(n)) for n in cluster.nodes if n in cluster.procs]
        name, matches = max(busy, key=lambda x: len(x[1]))
        seen[:] = [cluster.bots_by_gateway(), cluster.running()]
        return (name, matches) if matches else None

    try:
        return wait_for(pick, timeout, "matches running on a gateway")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last seen: bots by gateway, running matches: {seen}") from None


def _phase_figures(cluster: Cluster, affected: list[int], done_before: int, started: float) -> dict[str, Any]:
    outcomes = cluster.outcomes(affected)
    return {
        "affected": len(affected),
        **outcomes,
        "lost": outcomes["error"] + outcomes["unfinished"],
        "rated_twice": cluster.rated_twice(),
        "rounds": cluster.done_count() - done_before,
        "seconds": round(time.monotonic() - started, 1),
    }


def _held_elsewhere(cluster: Cluster, name: str, bots: set[str]) -> int:
    """How many of `bots` some gateway other than `name` holds now."""
    held = cluster.bots_by_gateway()
    return sum(any(b in others for g, others in held.items() if g != name) for b in bots)


def kill_gateway(cluster: Cluster, *, restart: bool = True, say: Say = _quiet) -> dict[str, Any]:
    name, affected = _busy_gateway(cluster)
    moved = cluster.bots_by_gateway().get(name, set())
    done_before, started = cluster.done_count(), time.monotonic()
    say(f"kill -9 {name}: {len(moved)} bot(s), {len(affected)} match(es) running on it")
    cluster.procs[name].kill(signal.SIGKILL)
    wait_for(
        lambda: _held_elsewhere(cluster, name, moved) == len(moved),
        60,
        f"{name}'s bots to reconnect elsewhere",
    )
    reconnected = round(time.monotonic() - started, 2)
    say(f"  its bots are on other gateways after {reconnected}s; waiting for its matches")
    settled = cluster.settle(affected, 180)
    figures = {"gateway": name, "bots_moved": len(moved), "bots_reconnected_s": reconnected,
               "matches_settled_s": settled}  # fmt: skip
    if restart:
        cluster.start_gateway(name)
        cluster.wait_balanced(set(cluster.nodes))
        figures["back_in_lb_s"] = round(time.monotonic() - started, 2)
    figures.update(_phase_figures(cluster, affected, done_before, started))
    figures["streams_per_gateway_lb"] = cluster.spread()["streams_per_gateway_lb"]
    return figures


def drain_gateway(cluster: Cluster, *, restart: bool = True, say: Say = _quiet) -> dict[str, Any]:
    name, affected = _busy_gateway(cluster)
    proc = cluster.procs[name]
    moved = cluster.bots_by_gateway().get(name, set())
    opened_before = proc.output().count(" opened: bot ")
    done_before, started = cluster.done_count(), time.monotonic()
    say(f"SIGTERM {name} (drain): {len(moved)} bot(s), {len(affected)} match(es) running on it")
    proc.popen.send_signal(signal.SIGTERM)
    wait_for(lambda: name not in cluster.lb_up(), 30, f"HAProxy to take {name} out")
    out_of_lb = round(time.monotonic() - started, 2)
    wait_for(lambda: proc.popen.poll() is not None, cluster.drain_seconds + 30, f"{name} to exit")
    exited = round(time.monotonic() - started, 2)
    say(f"  out of HAProxy after {out_of_lb}s, exited after {exited}s; waiting for its matches")
    output = proc.output()
    settled = cluster.settle(affected, 180)
    # A bot told Goodbye at the exit reconnects after its SDK's backoff, slower on a loaded machine: wait
    # until all are back (two minutes at most), then count.
    with contextlib.suppress(AssertionError):  # the figure below says how many did not come back
        wait_for(
            lambda: _held_elsewhere(cluster, name, moved) == len(moved), 120, "the drained bots elsewhere"
        )
    figures = {
        "gateway": name,
        "bots_moved": len(moved),
        "bots_now_elsewhere": _held_elsewhere(cluster, name, moved),
        "bots_elsewhere_s": round(time.monotonic() - started, 2),
        "out_of_lb_s": out_of_lb,
        "exited_s": exited,
        "exit_code": proc.popen.returncode,
        "new_sessions_while_draining": output.count(" opened: bot ") - opened_before,
        "streams_left_at_exit": _streams_left(output),
        "matches_settled_s": settled,
    }
    if restart:
        cluster.start_gateway(name)
        cluster.wait_balanced(set(cluster.nodes))
    figures.update(_phase_figures(cluster, affected, done_before, started))
    return figures


def _streams_left(output: str) -> int:
    marker = "gateway drained: "
    lines = [line for line in output.splitlines() if marker in line]
    return int(lines[-1].split(marker)[1].split()[0]) if lines else -1


def kill_worker(cluster: Cluster, *, restart: bool = True, say: Say = _quiet) -> dict[str, Any]:
    def holder() -> tuple[str, list[int]] | None:
        by_worker: dict[str, list[int]] = {}
        for match_id in cluster.running():
            pid = cluster.lease_holder_pid(match_id)
            if pid is None:
                continue
            for proc in cluster.procs.values():
                if (
                    proc.name.startswith("worker")
                    and proc.popen.poll() is None
                    and _group(pid) == proc.popen.pid
                ):
                    by_worker.setdefault(proc.name, []).append(match_id)
        return max(by_worker.items(), key=lambda kv: len(kv[1])) if by_worker else None

    name, affected = wait_for(holder, 60, "a worker playing matches")
    others = {n: c for n, c in cluster.recorded_by_worker().items() if n != name}
    done_before, started = cluster.done_count(), time.monotonic()
    cluster.procs[name].kill(signal.SIGKILL)
    # one may have been recorded between the look and the kill (more often on a loaded machine): not in hand
    finished_first = [m for m in affected if cluster.status(m)[0] == "DONE"]
    affected = [m for m in affected if m not in finished_first]
    say(f"kill -9 {name}: {len(affected)} match(es) in hand ({len(finished_first)} recorded just before)")
    settled = cluster.settle(affected, 180)
    after = cluster.recorded_by_worker()
    figures = {
        "worker": name,
        "recorded_just_before_the_kill": len(finished_first),
        "matches_settled_s": settled,
        "recorded_by_the_others_meanwhile": sum(after[n] - c for n, c in others.items()),
        "attempts_of_affected": sorted(cluster.status(m)[1] for m in affected),
    }
    if restart:
        cluster.start_worker(name)
    figures.update(_phase_figures(cluster, affected, done_before, started))
    return figures


def _group(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def cut_relay(cluster: Cluster, *, seconds: float = 5.0, say: Say = _quiet) -> dict[str, Any]:
    """Close the relay and decision ports the workers use for the busiest gateway for `seconds`, then open
    them again."""
    name, affected = _busy_gateway(cluster)
    node = cluster.nodes[name]
    held = cluster.bots_by_gateway().get(name, set())
    done_before, started = cluster.done_count(), time.monotonic()
    say(
        f"cutting the workers off {name}'s relay for {seconds:g}s: {len(held)} bot(s), {len(affected)} match(es)"
    )
    node.relay.cut()
    time.sleep(seconds)
    node.relay.restore()
    say("  relay back; waiting for the affected matches")
    settled = cluster.settle(affected, 180)
    started_during = [
        r[0]
        for r in cluster.query(
            "SELECT id FROM matches_match WHERE status IN ('DONE', 'CANCELLED', 'ERROR') AND id > ?",
            (max(affected),),
        )
    ]
    figures = {
        "gateway": name,
        "cut_s": seconds,
        "bots_on_it": len(held),
        "matches_settled_s": settled,
        "rated_against_details": cluster.rated_against(affected),
        "later_matches_cancelled": cluster.outcomes(started_during)["cancelled"],
    }
    figures.update(_phase_figures(cluster, affected, done_before, started))
    return figures


def totals(cluster: Cluster) -> dict[str, Any]:
    statuses = dict(cluster.query("SELECT status, COUNT(*) FROM matches_match GROUP BY status"))
    return {
        "statuses": statuses,
        "rated_twice": cluster.rated_twice(),
        "rated_against_a_bot": len(cluster.rated_against()),
        **cluster.spread(),
    }
