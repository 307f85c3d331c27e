"""The bot host: runs every hosted version assigned to this machine, each in its own sandbox, and tells the
ladder how each is doing.

Each step it asks its `Source` which versions it should run (at most `max_processes`), unpacks a new
version's archive (checked again, `ladder.hosting.archives`) into its state directory, starts it in a
sandbox under its slot's own uid (`uid_base + slot`: the process-count limit is per uid, so one bot's fork
bomb cannot starve another), polls the processes (a crashed one restarts after its backoff), stops the
versions no longer assigned, and reports each one's state, last exit and bounded log to the source.

Layer: bot host service. It talks to the ladder only through `Source` (`bot_host.ladder_source` is the
Django one); it never gives a bot's code anything but its own directory, its token (in its environment)
and the gateway's socket.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from bot_host import metrics
from bot_host.sandbox import Limits, Runtime, SandboxSpec, check_socket_dir, sandbox_argv, sandbox_env
from bot_host.supervisor import Backoff, HostedProcess, LogRing
from ladder.hosting.archives import ArchiveError, ArchiveLimits, read_archive, unpack

log = logging.getLogger("caravanserai.bot_host")


@dataclass(frozen=True)
class Assignment:
    """One hosted version this host should run (the ladder's `HostedVersion`, active for its bot)."""

    bot_id: int
    version_id: int
    runtime: str
    entry: str
    sha256: str


@dataclass(frozen=True)
class Report:
    bot_id: int
    version_id: int
    state: str
    detail: str
    starts: int
    crashes: int
    log: str


class Source(Protocol):
    def assignments(self, *, host_id: str, limit: int) -> list[Assignment]: ...
    def archive(self, *, version_id: int) -> bytes: ...
    def token(self, *, bot_id: int, version_id: int) -> str: ...
    def report(self, *, host_id: str, report: Report) -> None: ...


@dataclass(frozen=True)
class HostSettings:
    host_id: str
    state_dir: Path
    socket_path: Path
    max_processes: int = 8
    uid_base: int = 61000
    limits: Limits = field(default_factory=Limits)
    archive_limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    backoff: Backoff = field(default_factory=Backoff)
    log_bytes: int = 64 * 1024
    poll_seconds: float = 1.0
    bwrap: str = "/usr/bin/bwrap"
    extra_env: Mapping[str, str] = field(default_factory=dict)


@dataclass
class _Running:
    assignment: Assignment
    slot: int
    process: HostedProcess
    reported: tuple[str, str, int, int, str] = ("", "", 0, 0, "")


class BotHost:
    def __init__(self, settings: HostSettings, source: Source, runtimes: Mapping[str, Runtime]) -> None:
        self.settings = settings
        self.source = source
        self.runtimes = runtimes
        self.running: dict[int, _Running] = {}
        self.failed: dict[int, Assignment] = {}
        self.socket_dir = check_socket_dir(settings.socket_path)
        self.versions_dir = settings.state_dir / "versions"

    def _free_slot(self) -> int:
        taken = {r.slot for r in self.running.values()}
        return next(s for s in range(self.settings.max_processes) if s not in taken)

    def _version_dir(self, assignment: Assignment) -> Path:
        target = self.versions_dir / assignment.sha256
        if not target.is_dir():
            archive = read_archive(
                self.source.archive(version_id=assignment.version_id), self.settings.archive_limits
            )
            if archive.sha256 != assignment.sha256:
                raise ArchiveError("archive", "the stored archive does not match its checksum")
            partial = self.versions_dir / f".{assignment.sha256}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            unpack(archive, partial)
            partial.rename(target)
        return target

    def _start(self, assignment: Assignment) -> None:
        runtime = self.runtimes.get(assignment.runtime)
        slot = self._free_slot()
        ring = LogRing(self.settings.log_bytes)
        if runtime is None:
            ring.add(f"[host] this machine has no {assignment.runtime} runtime")
            self._report_failure(assignment, ring, f"runtime {assignment.runtime} unavailable")
            return
        try:
            app_dir = self._version_dir(assignment)
        except ArchiveError as exc:
            ring.add(f"[host] the archive was refused: {exc.message}")
            self._report_failure(assignment, ring, "archive refused")
            return
        spec = SandboxSpec(
            app_dir=app_dir,
            entry=assignment.entry,
            runtime=runtime,
            uid=self.settings.uid_base + slot,
            socket_dir=self.socket_dir,
            limits=self.settings.limits,
            bwrap=self.settings.bwrap,
        )

        def env() -> Mapping[str, str]:  # made at every start: the token may have changed
            token = self.source.token(bot_id=assignment.bot_id, version_id=assignment.version_id)
            return sandbox_env(spec, token=token, extra=self.settings.extra_env)

        process = HostedProcess(
            sandbox_argv(spec),
            env,
            backoff=self.settings.backoff,
            log=ring,
            on_exit=self._crashed(assignment),
        )
        process.start()
        metrics.STARTS.labels(assignment.runtime).inc()
        self.running[assignment.bot_id] = _Running(assignment, slot, process)
        log.info("hosted bot %s version %s started (slot %d)", assignment.bot_id, assignment.version_id, slot)

    def _crashed(self, assignment: Assignment) -> Callable[[HostedProcess, str], None]:
        def on_exit(process: HostedProcess, reason: str) -> None:
            metrics.CRASHES.labels(assignment.runtime).inc()
            log.info("hosted bot %s %s", assignment.bot_id, reason)

        return on_exit

    def _report_failure(self, assignment: Assignment, ring: LogRing, detail: str) -> None:
        self.failed[assignment.bot_id] = assignment
        report = Report(assignment.bot_id, assignment.version_id, "failed", detail, 0, 0, ring.text())
        self.source.report(host_id=self.settings.host_id, report=report)

    def _stop(self, bot_id: int) -> None:
        entry = self.running.pop(bot_id)
        entry.process.stop()
        self._report(entry, final=True)
        if all(r.assignment.sha256 != entry.assignment.sha256 for r in self.running.values()):
            shutil.rmtree(
                self.versions_dir / entry.assignment.sha256, ignore_errors=True
            )  # unpacked again if needed

    def _report(self, entry: _Running, *, final: bool = False) -> None:
        p = entry.process
        state = "stopped" if final else p.state
        text = p.log.text()
        key = (state, p.last_exit, p.starts, p.crashes, text)
        if key == entry.reported:
            return
        entry.reported = key
        report = Report(
            entry.assignment.bot_id,
            entry.assignment.version_id,
            state,
            p.last_exit,
            p.starts,
            p.crashes,
            text,
        )
        self.source.report(host_id=self.settings.host_id, report=report)

    def step(self) -> None:
        """Bring the running set in line with the assignments, poll every process, report changes."""
        wanted = {
            a.bot_id: a
            for a in self.source.assignments(host_id=self.settings.host_id, limit=self.settings.max_processes)
        }
        for bot_id, entry in list(self.running.items()):
            if wanted.get(bot_id) != entry.assignment:
                self._stop(bot_id)
        self.failed = {b: a for b, a in self.failed.items() if wanted.get(b) == a}
        for bot_id, assignment in wanted.items():
            if bot_id in self.running or self.failed.get(bot_id) == assignment:
                continue
            if len(self.running) < self.settings.max_processes:
                self._start(assignment)
        for entry in self.running.values():
            before = entry.process.starts
            entry.process.poll()
            if entry.process.starts > before:
                metrics.RESTARTS.labels(entry.assignment.runtime).inc()
            self._report(entry)
        metrics.set_running(self.running.values())

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.step()
            except Exception:  # a failed step (the ladder unreachable) is retried; the bots keep running
                log.exception("bot host step failed")
            stop.wait(self.settings.poll_seconds)
        self.shutdown()

    def shutdown(self) -> None:
        for bot_id in list(self.running):
            self._stop(bot_id)
