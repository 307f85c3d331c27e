"""Fixtures for the bot host: a real gateway serving a Unix-domain socket, an in-memory `Source` standing
in for the ladder, archives built from files, and a `BotHost` with small limits, stepped by the test.

The gateway is the module's, started once (the modules with several tests that use it run as one xdist
group): each test's host finds it with no session and no host report left from the test before."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from bot_host.examples import pack
from bot_host.host import Assignment, BotHost, HostSettings, Report
from bot_host.runtimes import available_runtimes
from bot_host.sandbox import Limits, Runtime
from bot_host.supervisor import Backoff
from engine_service.gateway.registry import SqliteRegistry, sessions_for_bot
from ladder.hosting.archives import ArchiveLimits, read_archive
from tests.engine_service.gateway.harness import (
    EXAMPLES,
    ROOT,
    SESSION_TTL,
    WAIT,
    GatewayProcess,
    Token,
    wait_for,
)

BOTS = Path(__file__).resolve().parent / "bots"
BOT_IDS = range(1, 9)
# The machine-wide uid pool (`bot_host.uids`) keeps every run's bots apart: no uid is handed out while
# another host holds it or any process of it lives.
UID_BASE = 62000
LIMITS = Limits(
    cpu_seconds=3, memory_bytes=768 << 20, processes=32, file_bytes=4 << 20, open_files=128, tmp_bytes=8 << 20
)
# The kernel lets a process that is being killed or is exiting charge past its group's memory limit ("allow
# memory usage go over the limit temporarily by force charging", mm/memcontrol.c): a group whose allocators
# are killed may peak a few pages above its limit (one page was seen under load).
DYING_CHARGE_BYTES = 1 << 20


def within_memory_limit(peak_bytes: int, limit_bytes: int) -> bool:
    """The group's peak held to its limit, but for what dying processes may force-charge."""
    return peak_bytes <= limit_bytes + DYING_CHARGE_BYTES


def make_archive(files: dict[str, str], *, runtime: str = "python", entry: str = "bot.py") -> bytes:
    manifest = {"runtime": runtime, "entry": entry, "version": "1"}
    return pack(
        {name: text.encode() for name, text in {"caravanserai.json": json.dumps(manifest), **files}.items()}
    )


def bot_archive(script: str) -> bytes:
    return make_archive({"bot.py": (BOTS / script).read_text()})


def example_archive() -> bytes:
    return make_archive({"bot.py": (EXAMPLES / "random_bot.py").read_text()})


@dataclass
class FakeSource:
    """The ladder's side of the host, in memory: what to run, the archives, the tokens, the reports."""

    archives: dict[int, bytes] = field(default_factory=dict)
    wanted: dict[int, Assignment] = field(default_factory=dict)
    reports: dict[int, Report] = field(default_factory=dict)

    def add(self, bot_id: int, archive: bytes) -> Assignment:
        parsed = read_archive(archive, ArchiveLimits())
        version_id = 100 * bot_id + len(self.archives)
        self.archives[version_id] = archive
        assignment = Assignment(
            bot_id, version_id, parsed.manifest.runtime, parsed.manifest.entry, parsed.sha256
        )
        self.wanted[bot_id] = assignment
        return assignment

    def assignments(self, *, host_id: str, limit: int) -> list[Assignment]:
        return list(self.wanted.values())[:limit]

    def archive(self, *, version_id: int) -> bytes:
        return self.archives[version_id]

    def token(self, *, bot_id: int, version_id: int) -> str:
        return f"tok-{bot_id}"

    def report(self, *, host_id: str, report: Report) -> None:
        self.reports[report.bot_id] = report


@dataclass
class HostRig:
    host: BotHost
    source: FakeSource
    gateway: GatewayProcess
    registry: SqliteRegistry
    state_dir: Path
    victim: bytes

    def until(self, condition: Callable[[], bool], timeout: float = WAIT) -> bool:
        """Step the host until `condition()` holds; whether it did within `timeout` seconds (generous: a
        sandboxed runtime starts slowly on a loaded machine, and a met condition returns at once)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.host.step()
            if condition():
                return True
            time.sleep(0.2)
        return False

    def connected(self, bot_id: int) -> bool:
        return bool(sessions_for_bot(self.registry, str(bot_id)))

    def log(self, bot_id: int) -> str:
        return self.host.running[bot_id].process.log.text()

    def logged(self, bot_id: int, text: str) -> bool:
        return bot_id in self.host.running and text in self.log(bot_id)

    def state_of(self, *bot_ids: int) -> str:
        """What the host knows of each bot (running or not, its log, its last report), for a failure."""
        parts = []
        for bot_id in bot_ids:
            running = self.host.running.get(bot_id)
            state = f"running, {running.process.state}" if running else "not running"
            log = self.log(bot_id)[-2000:] if running else ""
            parts.append(
                f"bot {bot_id}: {state}, connected {self.connected(bot_id)},"
                f" report {self.source.reports.get(bot_id)}, failed {bot_id in self.host.failed},"
                f" retry {self.host.retries.get(bot_id)}\n{log}"
            )
        return "\n".join(parts)

    def with_limits(self, limits: Limits, **env: str) -> None:
        """The host replaced by one with other limits and more environment (before it runs anything)."""
        assert not self.host.running
        settings = self.host.settings
        changed = replace(settings, limits=limits, extra_env={**settings.extra_env, **env})
        self.host = BotHost(changed, self.source, self.host.runtimes)


@pytest.fixture(scope="module")
def runtimes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Runtime]:
    return available_runtimes(tmp_path_factory.mktemp("runtime"), ROOT)


@dataclass
class HostedGateway:
    """A gateway process for hosted bots, on a Unix-domain socket."""

    process: GatewayProcess
    socket_path: Path


@pytest.fixture(scope="module")
def hosted_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostedGateway]:
    workdir = tmp_path_factory.mktemp("hosted-gateway")
    socket_path = workdir / "gateway" / "bot.sock"
    socket_path.parent.mkdir()
    tokens = [Token(f"tok-{i}", str(i), f"hosted-{i}") for i in BOT_IDS]
    gateway = GatewayProcess(
        tokens, workdir, workdir / "registry.sqlite3", env={"CARAVANSERAI_GATEWAY_UDS": str(socket_path)}
    ).start()
    yield HostedGateway(gateway, socket_path)
    gateway.stop()


@pytest.fixture
def rig(tmp_path: Path, runtimes: dict[str, Runtime], hosted_gateway: HostedGateway) -> Iterator[HostRig]:
    gateway, socket_path = hosted_gateway.process, hosted_gateway.socket_path
    source = FakeSource()
    victim = example_archive()
    ladder_db = tmp_path / "ladder.sqlite3"  # where the ladder keeps its database, as far as a bot knows
    ladder_db.write_bytes(b"SQLite format 3\0")
    secrets = [
        tmp_path
        / "host"
        / "versions"
        / read_archive(victim, ArchiveLimits()).sha256
        / "bot.py",  # another bot
        gateway.tokens_file,  # the gateway's tokens
        ROOT / "ladder" / "settings" / "base.py",
        ladder_db,
        ROOT / "manage.py",
    ]
    settings = HostSettings(
        host_id="test-host",
        state_dir=tmp_path / "host",
        socket_path=socket_path,
        max_processes=4,
        uid_base=UID_BASE,
        limits=LIMITS,
        backoff=Backoff(first=0.5, most=2.0, stable=30.0),
        log_bytes=16 * 1024,
        poll_seconds=0.2,
        extra_env={
            "PROBE_GATEWAY_PORT": str(gateway.bot_port),
            "PROBE_PATHS": ":".join(str(p) for p in secrets),
        },
    )
    host = BotHost(settings, source, runtimes)
    registry = SqliteRegistry(gateway.registry_path, ttl=SESSION_TTL)
    made = HostRig(host, source, gateway, registry, settings.state_dir, victim)
    yield made
    made.host.shutdown()  # the host the test left there (some replace it)
    registry.report_host(settings.host_id, [], 0.0)  # a report of its bots would outlive the test
    wait_for(lambda: not registry.sessions(), what="the test's bots to leave the gateway")
