"""One supervised hosted process: started from a ready command line, watched, restarted with exponential
backoff when it ends, its output kept in a bounded ring for its owner.

Layer: bot host plumbing. It starts and stops exactly the process it launched (bubblewrap, in a process
group of its own; its PID namespace takes every process of the sandbox with it); it must not import Django
(`ladder.hosting.text` is pure), and it never looks at a bot's files.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from ladder.hosting.text import clean_text

STARTING = "starting"
RUNNING = "running"
BACKOFF = "backoff"
STOPPED = "stopped"
FAILED = "failed"

LINE_LIMIT = 1000
SIGNAL_REASONS = {
    signal.SIGXCPU: "the CPU time limit was reached (SIGXCPU)",
    signal.SIGXFSZ: "the file size limit was reached (SIGXFSZ)",
    signal.SIGKILL: "killed (SIGKILL: the CPU limit's hard stop, or the host)",
    signal.SIGSEGV: "crashed (SIGSEGV)",
    signal.SIGABRT: "aborted (SIGABRT; often the memory limit)",
}


class CannotStart(Exception):
    """Raised by an environment factory: the process must not start (the message says why); no retry."""


class LogRing:
    """The last `max_bytes` of a process's output, as lines (each cut at LINE_LIMIT characters), kept as
    `clean_text` makes them (no NUL, invalid UTF-8 or lone surrogate reaches a report)."""

    def __init__(self, max_bytes: int = 64 * 1024) -> None:
        self.max_bytes = max_bytes
        self._lines: deque[str] = deque()
        self._size = 0
        self._lock = threading.Lock()

    def add(self, line: str | bytes) -> None:
        line = clean_text(line).rstrip("\n")[:LINE_LIMIT]
        with self._lock:
            self._lines.append(line)
            self._size += len(line) + 1
            while self._size > self.max_bytes and self._lines:
                self._size -= len(self._lines.popleft()) + 1

    def text(self) -> str:
        with self._lock:
            return "\n".join(self._lines)


def exit_reason(returncode: int) -> str:
    """Why a sandbox ended, in words: bubblewrap passes on the bot's status (128 + N for signal N)."""
    if returncode < 0 or returncode > 128:
        number = -returncode if returncode < 0 else returncode - 128
        try:
            sig = signal.Signals(number)
        except ValueError:
            return f"exited with status {returncode}"
        return SIGNAL_REASONS.get(sig, f"killed by {sig.name}")
    return f"exited with status {returncode}"


@dataclass(frozen=True)
class Backoff:
    """Restart delays: `first` seconds, doubled after each crash up to `most`; a run that lasted `stable`
    seconds starts the sequence again."""

    first: float = 1.0
    most: float = 300.0
    stable: float = 60.0

    def delay(self, crashes_in_a_row: int) -> float:
        return float(min(self.most, self.first * 2 ** max(0, crashes_in_a_row - 1)))


class HostedProcess:
    """A command line run again and again: `poll()` notices an exit and restarts after the backoff. `env` is
    the environment, or a function that makes it at every start (raising `CannotStart` to stop for good)."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | Callable[[], Mapping[str, str]],
        *,
        backoff: Backoff = Backoff(),
        log: LogRing | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_exit: Callable[[HostedProcess, str], None] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.env = env
        self.backoff = backoff
        self.log = log or LogRing()
        self.clock = clock
        self.on_exit = on_exit
        self.state = STOPPED
        self.starts = 0
        self.crashes = 0
        self.crashes_in_a_row = 0
        self.last_exit = ""
        self.restart_at = 0.0
        self._started_at = 0.0
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        try:
            env = dict(self.env() if callable(self.env) else self.env)
        except CannotStart as exc:
            self.state, self.last_exit = FAILED, str(exc)
            self.log.add(f"[host] the bot cannot start: {exc}")
            return
        self._proc = subprocess.Popen(
            self.argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            close_fds=True,
            start_new_session=True,  # its own process group: `_kill_group` reaches bwrap mid-setup too
        )
        self._reader = threading.Thread(target=self._read, args=(self._proc.stdout,), daemon=True)
        self._reader.start()
        self.starts += 1
        self._started_at = self.clock()
        self.state = RUNNING

    def _read(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            return
        for raw in iter(lambda: stream.readline(LINE_LIMIT * 4), b""):
            self.log.add(raw)
        stream.close()

    def poll(self) -> str:
        """Notice an exit (then back off) or the end of a backoff (then start again); the state."""
        if self.state == RUNNING and self._proc is not None and self._proc.poll() is not None:
            self._ended(self._proc.returncode)
        elif self.state == BACKOFF and self.clock() >= self.restart_at:
            self.start()
        return self.state

    def _ended(self, returncode: int) -> None:
        if self._reader is not None:
            self._reader.join(timeout=2)
        ran = self.clock() - self._started_at
        self.crashes += 1
        self.crashes_in_a_row = 1 if ran >= self.backoff.stable else self.crashes_in_a_row + 1
        self.last_exit = exit_reason(returncode)
        delay = self.backoff.delay(self.crashes_in_a_row)
        self.log.add(f"[host] the bot {self.last_exit}; restarting in {delay:g} s")
        self.restart_at = self.clock() + delay
        self.state = BACKOFF
        self._proc = None
        if self.on_exit is not None:
            self.on_exit(self, self.last_exit)

    def stop(self) -> None:
        """End the sandbox: SIGKILL to bwrap's process group (its PID namespace dies with it); not a crash."""
        proc, self._proc = self._proc, None
        self.state = STOPPED
        if proc is None:
            return
        _kill_group(proc.pid)
        proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=2)


def _kill_group(pgid: int) -> None:
    """SIGKILL every process of a sandbox's group (bwrap and, while it sets up, its namespace's init)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
