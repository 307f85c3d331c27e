"""A bot host that never stalls: one bot's failing report, failing start, refused archive or unwritable
version never skips another bot, and what a bot prints is stored cleaned. The host is real (unpacking,
supervision, backoff, the machine's uid pool and control groups); the sandbox is replaced by running the
unpacked entry point with /bin/sh, so these tests need no gateway and no bubblewrap."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

import bot_host.host as host_module
from bot_host.host import Assignment, BotHost, HostSettings, Report
from bot_host.ladder_source import LadderSource
from bot_host.sandbox import Runtime, SandboxSpec
from bot_host.supervisor import Backoff
from ladder.bots.services import bot_create
from ladder.hosting.models import HostedBot
from ladder.hosting.services import hosted_version_upload
from tests.bot_host.conftest import LIMITS, UID_BASE, FakeSource, make_archive
from tests.engine_service.gateway.harness import WAIT
from tests.ladder.hosting.hostile import HOSTILE

SH = {"python": Runtime("python", ("/bin/sh",))}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FlakySource(FakeSource):
    """The fake ladder, with a database that fails for some bots' reports or archives."""

    broken_reports: set[int] = field(default_factory=set)
    broken_archives: set[int] = field(default_factory=set)

    def report(self, *, host_id: str, report: Report) -> None:
        if report.bot_id in self.broken_reports:
            raise RuntimeError("DataError: a stand-in for the database refusing this report")
        super().report(host_id=host_id, report=report)

    def archive(self, *, version_id: int) -> bytes:
        if version_id // 100 in self.broken_archives:
            raise RuntimeError("OperationalError: a stand-in for the database being unreachable")
        return super().archive(version_id=version_id)

    def add_raw(self, bot_id: int, data: bytes) -> Assignment:
        """An assignment for an archive as stored, never read here (a hostile one the upload let through)."""
        version_id = 100 * bot_id
        self.archives[version_id] = data
        sha = hashlib.sha256(data).hexdigest()
        self.wanted[bot_id] = Assignment(bot_id, version_id, "python", "bot.py", sha)
        return self.wanted[bot_id]


@dataclass
class Rig:
    host: BotHost
    source: FlakySource
    clock: Clock

    def until(self, condition: Callable[[], bool], timeout: float = WAIT) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.host.step()
            if condition():
                return True
            time.sleep(0.02)
        return False


def bare_argv(spec: SandboxSpec) -> list[str]:
    return [*spec.runtime.command, str(spec.app_dir / spec.entry)]


def make_host(tmp_path: Path, source: FakeSource | LadderSource, clock: Clock) -> BotHost:
    socket = tmp_path / "gateway" / "bot.sock"
    socket.parent.mkdir(exist_ok=True)
    settings = HostSettings(
        host_id="isolation",
        state_dir=tmp_path / "host",
        socket_path=socket,
        max_processes=16,
        uid_base=UID_BASE,
        limits=LIMITS,
        backoff=Backoff(first=0.05, most=0.2, stable=30.0),
    )
    return BotHost(settings, source, SH, clock=clock)


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    monkeypatch.setattr(host_module, "sandbox_argv", bare_argv)
    source, clock = FlakySource(), Clock()
    host = make_host(tmp_path, source, clock)
    yield Rig(host, source, clock)
    host.shutdown()


def crashing(word: str) -> bytes:
    return make_archive({"bot.py": f"echo {word}; exit 3\n"})


def test_a_bot_whose_report_raises_never_stops_the_next_from_restarting(rig: Rig) -> None:
    rig.source.add(1, crashing("first"))
    rig.source.add(2, crashing("second"))
    rig.source.broken_reports = {1}  # every report of bot 1 fails, as a NUL did on PostgreSQL

    def second_restarted() -> bool:
        report = rig.source.reports.get(2)
        return report is not None and report.starts >= 3 and report.crashes >= 2

    assert rig.until(second_restarted), rig.source.reports
    assert rig.host.running[1].process.starts >= 2  # bot 1 itself is still supervised
    assert 1 not in rig.source.reports
    rig.source.broken_reports.clear()
    assert rig.until(lambda: 1 in rig.source.reports)  # its report goes out once the ladder takes it


def sleeper() -> bytes:
    return make_archive({"bot.py": "exec sleep 60\n"})


def test_a_start_that_raises_is_tried_again_later_and_the_next_bot_starts(rig: Rig) -> None:
    rig.source.add(1, sleeper())
    rig.source.add(2, make_archive({"bot.py": "exec sleep 61\n"}))
    rig.source.broken_archives = {1}
    rig.host.step()
    assert 2 in rig.host.running and 1 not in rig.host.running
    waiting = rig.source.reports[1]
    assert waiting.state == "waiting" and "host's side" in waiting.detail and "trying again" in waiting.log
    rig.source.broken_archives.clear()
    rig.host.step()
    assert 1 not in rig.host.running  # not before its backoff
    rig.clock.now += 1.0
    rig.host.step()
    assert 1 in rig.host.running and not rig.host.retries


def test_a_sandbox_that_cannot_start_gives_back_its_uid_and_control_group(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: object) -> None:
        raise OSError("the sandbox could not be started")

    rig.source.add(1, sleeper())
    with monkeypatch.context() as patched:
        patched.setattr(host_module.HostedProcess, "start", refuse)
        rig.host.step()  # the failure is the host's: the bot waits, nothing of the start is kept
    assert 1 not in rig.host.running and rig.source.reports[1].state == "waiting"
    pool = rig.host.uids
    assert [
        p for p in pool.directory.iterdir() if p.name != "lock" and p.read_text().strip() == pool.holder
    ] == []
    rig.clock.now += 1.0
    rig.host.step()
    assert 1 in rig.host.running


def test_hostile_archives_are_refused_by_the_host_and_the_good_bot_runs(rig: Rig) -> None:
    cases = sorted(HOSTILE)
    for bot_id, case in enumerate(cases, start=1):
        rig.source.add_raw(bot_id, HOSTILE[case][0])
    good = rig.source.add(len(cases) + 1, sleeper())
    rig.host.step()  # raises nothing
    assert list(rig.host.running) == [good.bot_id]
    for bot_id, case in enumerate(cases, start=1):
        report = rig.source.reports[bot_id]
        assert (report.state, report.detail) == ("failed", "archive refused"), case
        assert all(word in report.log for word in HOSTILE[case][1]), (case, report.log)
    versions = rig.host.versions_dir
    assert [p.name for p in versions.iterdir()] == [good.sha256]  # nothing of a refused one written
    rig.host.step()
    assert set(rig.source.reports) == {*range(1, len(cases) + 2)} and list(rig.host.running) == [good.bot_id]


def test_an_unwritable_version_waits_for_the_host_instead_of_failing_the_bot(rig: Rig) -> None:
    first = rig.source.add(1, sleeper())
    rig.source.add(2, make_archive({"bot.py": "exec sleep 61\n"}))
    rig.host.versions_dir.mkdir(parents=True)
    blocker = rig.host.versions_dir / f".{first.sha256}.partial"
    blocker.write_text("a file where the host unpacks: mkdir fails with EEXIST")
    rig.host.step()
    assert 2 in rig.host.running and 1 not in rig.host.running and 1 not in rig.host.failed
    report = rig.source.reports[1]
    assert report.state == "waiting" and "could not unpack" in report.detail, report
    blocker.unlink()
    rig.clock.now += 1.0
    rig.host.step()
    assert 1 in rig.host.running


@pytest.mark.django_db
def test_a_bot_printing_nul_and_invalid_utf8_is_stored_cleaned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the ladder's own source and database (PostgreSQL when DATABASE_URL is set)."""
    monkeypatch.setattr(host_module, "sandbox_argv", bare_argv)
    owner = get_user_model().objects.create_user("nul-owner", password="pw-nul-owner")
    bot, _token = bot_create(owner=owner, name="Nul", games=["expedition-v1"])
    script = r"printf 'nul\000here \377\376 end\n'; exit 1" + "\n"
    hosted_version_upload(bot_id=bot.pk, user=owner, data=make_archive({"bot.py": script}))
    source = LadderSource(state_dir=tmp_path / "host")
    host = make_host(tmp_path, source, Clock())
    try:
        deadline = time.monotonic() + WAIT
        while "end" not in HostedBot.objects.get(bot=bot).log and time.monotonic() < deadline:
            host.step()
            time.sleep(0.02)
    finally:
        host.shutdown()
        source.release(host_id="isolation")
    log = HostedBot.objects.get(bot=bot).log
    assert "nul\ufffdhere \ufffd\ufffd end" in log and "\x00" not in log, log
