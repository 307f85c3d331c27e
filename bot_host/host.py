"""The bot host: runs every hosted version assigned to this machine, each in its own sandbox, and tells the
ladder how each is doing.

Each step it asks its `Source` which versions it should run (at most `max_processes`), unpacks a new
version's archive (checked again, `ladder.hosting.archives`) into its state directory, starts it in a
sandbox under its own uid (unique on the machine, `bot_host.uids`: the process-count limit is per uid, so
one bot's fork bomb cannot starve another) and its own control group (`bot_host.cgroups`: one memory,
process and CPU budget for its whole tree), polls the processes (a crashed one restarts after its backoff),
stops the versions no longer assigned, and reports each one's state, last exit and bounded log.

One bot never stalls the others: each bot's part of a step (stop, start, poll, report) is guarded, so an
exception there, a refused or unwritable archive, or a database error in its report is logged with the bot's
id and the step goes on to the next bot. A start that failed through no fault of the bot's (the ladder
unreachable, this machine's disk) is tried again after a backoff, and the owner sees "waiting" with why.

Presence: each step ends by telling the gateways' session registry (`Presence`) which bots this host runs
and that it is up for the next few polls; a host stopping says so first. A hosted bot's stream that ends
while its host is not up (restarting, crashed, stopped) is the server's incident, not the bot's disconnect:
its seat waits for it, excused (`RemoteSeat`).

Layer: bot host service. It talks to the ladder only through `Source` (`bot_host.ladder_source` is the
Django one); it never gives a bot's code anything but its own directory, its token (in its environment)
and the gateway's socket.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ParamSpec, Protocol

from bot_host import cgroups, metrics
from bot_host.sandbox import Limits, Runtime, SandboxSpec, check_socket_dir, sandbox_argv, sandbox_env
from bot_host.supervisor import Backoff, HostedProcess, LogRing
from bot_host.uids import UidPool
from ladder.hosting.archives import ArchiveError, ArchiveLimits, UnpackError, read_archive, unpack

log = logging.getLogger("caravanserai.bot_host")
P = ParamSpec("P")


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
    uid: int  # its own on the machine (`bot_host.uids`)
    process: HostedProcess
    cgroup: cgroups.BotCgroup
    reported: tuple[str, str, int, int, str] = ("", "", 0, 0, "")


@dataclass(frozen=True)
class _Retry:
    """A start that failed through no fault of the bot's: how many times in a row, and when to try again."""

    assignment: Assignment
    failures: int
    at: float


class Presence(Protocol):
    """Where the host says which bots it runs and until when it is up (the gateways' session registry)."""

    def report_host(self, host_id: str, bot_ids: list[str], ready_until: float) -> None: ...


PRESENCE_CLAIM_STEPS = 3  # a host's "up" lasts this many polls: a host that stops stepping is soon down


class BotHost:
    def __init__(
        self,
        settings: HostSettings,
        source: Source,
        runtimes: Mapping[str, Runtime],
        *,
        clock: Callable[[], float] = time.monotonic,
        presence: Presence | None = None,
    ) -> None:
        self.settings = settings
        self.presence = presence
        self.source = source
        self.runtimes = runtimes
        self.clock = clock
        self.running: dict[int, _Running] = {}
        self.failed: dict[int, Assignment] = {}
        self.retries: dict[int, _Retry] = {}
        self.socket_dir = check_socket_dir(settings.socket_path)
        self.versions_dir = settings.state_dir / "versions"
        self.cgroups = cgroups.detect()  # refused here when the machine cannot limit each bot
        self.uids = UidPool(settings.uid_base)

    def _free_slot(self) -> int:
        """A uid for the next bot: no other bot on the machine has it, and no process of it lives."""
        return self.uids.allocate()

    def _version_dir(self, assignment: Assignment) -> Path:
        """The version's files, unpacked once per checksum from what `read_archive` accepts here again (the
        reader of the upload); ArchiveError if refused, UnpackError if this machine could not write it."""
        target = self.versions_dir / assignment.sha256
        if target.is_dir():
            return target
        archive = read_archive(
            self.source.archive(version_id=assignment.version_id), self.settings.archive_limits
        )
        if archive.sha256 != assignment.sha256:
            raise ArchiveError("archive", "the stored archive does not match its checksum")
        partial = self.versions_dir / f".{assignment.sha256}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        try:
            unpack(archive, partial)
            partial.rename(target)
        except OSError as exc:  # unpack's own are UnpackErrors already
            raise UnpackError(
                "archive", f"could not put the version in place: {exc.strerror or exc}"
            ) from exc
        finally:
            shutil.rmtree(partial, ignore_errors=True)  # nothing left after a rename
        return target

    def _start(self, assignment: Assignment) -> None:
        runtime = self.runtimes.get(assignment.runtime)
        ring = LogRing(self.settings.log_bytes)
        if runtime is None:
            ring.add(f"[host] this machine has no {assignment.runtime} runtime")
            self._report_failure(assignment, ring, f"runtime {assignment.runtime} unavailable")
            return
        try:
            app_dir = self._version_dir(assignment)
        except UnpackError as exc:  # this machine's fault, not the bot's: tried again later
            self._defer(assignment, f"this host could not unpack it: {exc.message}")
            return
        except ArchiveError as exc:
            ring.add(f"[host] the archive was refused: {exc.message}")
            self._report_failure(assignment, ring, "archive refused")
            return
        uid = self._free_slot()
        group: cgroups.BotCgroup | None = None
        try:
            group = self.cgroups.create(f"bot-{uid}", self.settings.limits.bot_limits())
            process = self._process(assignment, runtime, app_dir, uid, group, ring)
            process.start()
        except Exception:  # nothing of a start that failed is kept: its group and uid go back
            if group is not None:
                group.remove()
            self.uids.release(uid)
            raise
        metrics.STARTS.labels(assignment.runtime).inc()
        self.running[assignment.bot_id] = _Running(assignment, uid, process, group)
        log.info("hosted bot %s version %s started (uid %d)", assignment.bot_id, assignment.version_id, uid)

    def _process(
        self,
        assignment: Assignment,
        runtime: Runtime,
        app_dir: Path,
        uid: int,
        group: cgroups.BotCgroup,
        ring: LogRing,
    ) -> HostedProcess:
        """The supervised sandbox of one bot, not started yet."""
        spec = SandboxSpec(
            app_dir=app_dir,
            entry=assignment.entry,
            runtime=runtime,
            uid=uid,
            socket_dir=self.socket_dir,
            limits=self.settings.limits,
            bwrap=self.settings.bwrap,
            cgroup_procs=group.procs_files(),
        )

        def env() -> Mapping[str, str]:  # made at every start: the token may have changed
            token = self.source.token(bot_id=assignment.bot_id, version_id=assignment.version_id)
            return sandbox_env(spec, token=token, extra=self.settings.extra_env)

        return HostedProcess(
            sandbox_argv(spec),
            env,
            backoff=self.settings.backoff,
            log=ring,
            on_exit=self._crashed(assignment),
        )

    def _crashed(self, assignment: Assignment) -> Callable[[HostedProcess, str], None]:
        def on_exit(process: HostedProcess, reason: str) -> None:
            metrics.CRASHES.labels(assignment.runtime).inc()
            log.info("hosted bot %s %s", assignment.bot_id, reason)

        return on_exit

    def _report_failure(self, assignment: Assignment, ring: LogRing, detail: str) -> None:
        """The bot cannot run (its archive, its runtime): not tried again until its assignment changes, once
        the owner has been told."""
        report = Report(assignment.bot_id, assignment.version_id, "failed", detail, 0, 0, ring.text())
        self.source.report(host_id=self.settings.host_id, report=report)
        self.failed[assignment.bot_id] = assignment

    def _defer(self, assignment: Assignment, why: str) -> None:
        """A start that failed through no fault of the bot's: tried again after a backoff that doubles while
        it keeps failing; its owner sees "waiting" and why, if the ladder can be reached."""
        held = self.retries.get(assignment.bot_id)
        failures = held.failures + 1 if held is not None and held.assignment == assignment else 1
        delay = self.settings.backoff.delay(failures)
        self.retries[assignment.bot_id] = _Retry(assignment, failures, self.clock() + delay)
        log.warning("hosted bot %s: %s; trying again in %g s", assignment.bot_id, why, delay)
        text = f"[host] {why}; trying again in {delay:g} s"
        report = Report(assignment.bot_id, assignment.version_id, "waiting", why, 0, 0, text)
        self._guarded(
            assignment.bot_id, "report", self.source.report, host_id=self.settings.host_id, report=report
        )

    def _stop(self, bot_id: int) -> None:
        entry = self.running.pop(bot_id)
        entry.process.stop()
        entry.cgroup.remove()  # whatever of the bot outlived its sandbox ends with its group
        self.uids.release(entry.uid)
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
        entry.reported = key  # only once told: a report that failed is sent again at the next step

    def _guarded(
        self, bot_id: int, what: str, action: Callable[P, object], *args: P.args, **kwargs: P.kwargs
    ) -> bool:
        """One bot's part of a step; an exception is logged with the bot's id and never reaches the others."""
        try:
            action(*args, **kwargs)
        except Exception:
            log.exception("hosted bot %s: %s failed", bot_id, what)
            return False
        return True

    def _due(self, assignment: Assignment) -> bool:
        """Whether to start `assignment` now: not running, not failed for good, not waiting for a retry."""
        bot_id = assignment.bot_id
        if bot_id in self.running or self.failed.get(bot_id) == assignment:
            return False
        retry = self.retries.get(bot_id)
        return retry is None or self.clock() >= retry.at

    def _poll(self, entry: _Running) -> None:
        before = entry.process.starts
        entry.process.poll()
        if entry.process.starts > before:
            metrics.RESTARTS.labels(entry.assignment.runtime).inc()
        self._report(entry)

    def step(self) -> None:
        """Bring the running set in line with the assignments, poll every process, report changes; each
        bot's part guarded, so one bot's failure never skips another bot."""
        wanted = {
            a.bot_id: a
            for a in self.source.assignments(host_id=self.settings.host_id, limit=self.settings.max_processes)
        }
        for bot_id, entry in list(self.running.items()):
            if wanted.get(bot_id) != entry.assignment:
                self._guarded(bot_id, "stop", self._stop, bot_id)
        self.failed = {b: a for b, a in self.failed.items() if wanted.get(b) == a}
        self.retries = {b: r for b, r in self.retries.items() if wanted.get(b) == r.assignment}
        for bot_id, assignment in wanted.items():
            if not self._due(assignment) or len(self.running) >= self.settings.max_processes:
                continue
            if not self._guarded(bot_id, "start", self._start, assignment):
                self._defer(assignment, "the host could not start it (a fault on the host's side)")
            elif bot_id in self.running:
                self.retries.pop(bot_id, None)
        for entry in list(self.running.values()):
            self._guarded(entry.assignment.bot_id, "poll", self._poll, entry)
        metrics.set_running(self.running.values())
        self._say_up(time.time() + PRESENCE_CLAIM_STEPS * self.settings.poll_seconds)

    def _say_up(self, until: float) -> None:
        """Tell the gateways' registry which bots this host runs, and until when it is up (0: it stops), so
        a seat whose hosted bot dropped while its host restarts waits for it instead of forfeiting it."""
        if self.presence is None:
            return
        bots = sorted({*self.running, *self.retries})
        try:
            self.presence.report_host(self.settings.host_id, [str(b) for b in bots], until)
        except Exception:  # its claim lapses by itself: seats then wait for these bots, excused
            log.exception("bot host %s could not report its presence", self.settings.host_id)

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.step()
            except Exception:  # a failed step (the ladder unreachable) is retried; the bots keep running
                log.exception("bot host step failed")
            stop.wait(self.settings.poll_seconds)
        self.shutdown()

    def shutdown(self) -> None:
        self._say_up(0.0)  # before the sandboxes go: their matches wait for them, as for a restart
        for bot_id in list(self.running):
            self._guarded(bot_id, "stop", self._stop, bot_id)
