"""The demo's hostile hosted bot (`demo-hostile`, runtime python): it does what a hostile hosted bot may try
against its neighbours, within its own sandbox, and still plays.

Before it connects it forks a warden, a single-threaded child that, for as long as the bot runs:
- forks sleeping children until the kernel refuses one (its process limit), then ends them, at the start
  and every FORK_EVERY seconds;
- keeps SPINNERS children spinning the CPU (forked again when its CPU limit kills one);
- keeps ALLOCATORS children each allocating and touching memory in CHUNK_MIB steps up to nearly the whole
  per-process limit, together well past the bot's memory (the kernel kills one in the bot's group; it is
  forked again ALLOC_PAUSE seconds later).
The bot itself starts the SDK once the first fork to the limit is over (threads it started while the
sleepers held every process slot would fail, and its channel would never connect), then plays uniformly
random legal actions; it shares its group's CPU and memory with its own warden, so it may play slowly, and
whatever it loses to that is its own doing.
The warden prints one `HOSTILE ...` summary line every REPORT_EVERY seconds (its owner's log).

Layer: a hosted example bot (packed by `bot_host.examples.hostile_archive`); it runs in a sandbox, so
it must use only the standard library and the Python SDK, and must not import anything of the project.
"""

from __future__ import annotations

import os
import random
import select
import signal
import time
from collections.abc import Callable, Sequence
from typing import Any

SPINNERS = 2
ALLOCATORS = 2
CHUNK_MIB = 32
ALLOC_PAUSE = 2.0
FORK_EVERY = 120.0
FIRST_ROUND_WAIT = 60.0
REPORT_EVERY = float(os.environ.get("HOSTILE_REPORT_SECONDS", "30"))
PAGE = 4096


def say(line: str) -> None:
    os.write(1, f"{line}\n".encode())  # one write: every process of the bot shares the output pipe


def spin() -> None:
    while True:
        pass


def allocate() -> None:
    """Touch memory CHUNK_MIB at a time until refused (the address-space limit) or killed; then hold it."""
    held: list[bytearray] = []
    try:
        while True:
            block = bytearray(CHUNK_MIB << 20)
            for offset in range(0, len(block), PAGE):
                block[offset] = 1
            held.append(block)
    except MemoryError:
        pass
    time.sleep(ALLOC_PAUSE)
    os._exit(0)  # let it go: the warden allocates again


def fork_role(role: Callable[[], None]) -> int | None:
    """A child running `role` (never returning), or None when the kernel refuses the fork."""
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        role()
        os._exit(0)
    return pid


def fork_to_the_limit() -> int:
    """Fork sleepers until refused; end them; how many there were."""
    sleepers: list[int] = []
    while len(sleepers) < 10_000:
        pid = fork_role(lambda: time.sleep(60))
        if pid is None:
            break
        sleepers.append(pid)
    for pid in sleepers:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return len(sleepers)


class Warden:
    """The single-threaded child that keeps the spinners and allocators going and forks to the limit."""

    def __init__(self) -> None:
        self.roles: dict[int, str] = {}
        self.counts = {"spinner died": 0, "allocator killed": 0, "allocator let go": 0, "fork refused": 0}
        self.forks_at_limit = 0
        self.retry_at: dict[str, float] = {}

    def run(self, first_round_done: int) -> None:
        """Forever; `first_round_done` (a pipe) is written and closed once the first fork to the limit is
        over, so the bot's own threads are not started while the sleepers hold every process slot."""
        next_fork = next_report = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= next_fork:
                self.forks_at_limit = fork_to_the_limit()
                next_fork = now + FORK_EVERY
                if first_round_done >= 0:
                    os.write(first_round_done, b"1")
                    os.close(first_round_done)
                    first_round_done = -1
            self.reap(now)
            self.fill(now)
            if now >= next_report:
                self.report()
                next_report = now + REPORT_EVERY
            time.sleep(0.5)

    def fill(self, now: float) -> None:
        wanted = [f"spin-{i}" for i in range(SPINNERS)] + [f"alloc-{i}" for i in range(ALLOCATORS)]
        for slot in wanted:
            if slot in self.roles.values() or self.retry_at.get(slot, 0.0) > now:
                continue
            pid = fork_role(spin if slot.startswith("spin") else allocate)
            if pid is None:
                self.counts["fork refused"] += 1
                self.retry_at[slot] = now + ALLOC_PAUSE
            else:
                self.roles[pid] = slot

    def reap(self, now: float) -> None:
        while self.roles:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            slot = self.roles.pop(pid, "")
            if slot.startswith("spin"):
                self.counts["spinner died"] += 1
            elif slot.startswith("alloc"):
                killed = os.WIFSIGNALED(status)
                self.counts["allocator killed" if killed else "allocator let go"] += 1
                self.retry_at[slot] = now + ALLOC_PAUSE

    def report(self) -> None:
        counts = ", ".join(f"{name} {n}" for name, n in self.counts.items())
        say(
            f"HOSTILE forked {self.forks_at_limit} sleepers before the limit; {len(self.roles)} children; {counts}"
        )


def start_warden() -> int:
    """The warden, forked before the SDK (and its threads) exist; returns once its first fork to the limit
    is over (or FIRST_ROUND_WAIT seconds have passed): gRPC's threads started while the sleepers hold every
    process slot fail, and its channel never connects."""
    ready, done = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready)
        try:
            Warden().run(done)
        finally:
            os._exit(1)
    os.close(done)
    select.select([ready], [], [], FIRST_ROUND_WAIT)
    os.close(ready)
    return pid


def main() -> int:
    warden = start_warden()
    from caravanserai_bot import Bot, BotRefused, LegalAction, run

    class HostileBot(Bot):  # type: ignore[misc]  # the SDK is untyped to this project's checker
        name = "hostile-example"
        version = "1"

        def __init__(self) -> None:
            self.rng = random.Random()

        def decide(self, observation: dict[str, Any], legal_actions: Sequence[LegalAction]) -> str:
            return str(self.rng.choice(legal_actions).id)

    try:
        run(HostileBot(), os.environ.get("CARAVANSERAI_TARGET"), os.environ.get("CARAVANSERAI_TOKEN", ""))
    except BotRefused as exc:
        say(f"refused: {exc}")
        return 2
    finally:
        os.kill(warden, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
