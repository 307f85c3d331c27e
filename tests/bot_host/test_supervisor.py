"""The supervisor without a sandbox: exits are noticed and explained, restarts back off and reset after a
stable run, output is kept bounded; and the sandbox's command line refuses what it must."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from bot_host.sandbox import (
    Limits,
    Runtime,
    SandboxError,
    SandboxSpec,
    check_socket_dir,
    sandbox_argv,
    sandbox_env,
)
from bot_host.supervisor import (
    BACKOFF,
    FAILED,
    RUNNING,
    Backoff,
    CannotStart,
    HostedProcess,
    LogRing,
    exit_reason,
)
from tests.engine_service.gateway.harness import WAIT


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def wait_exit(process: HostedProcess) -> None:
    deadline = time.monotonic() + WAIT
    while process.poll() == RUNNING and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_crash_is_explained_and_restarted_after_a_doubling_backoff() -> None:
    clock = Clock()
    exits: list[str] = []
    process = HostedProcess(
        ["/bin/sh", "-c", "echo starting; exit 3"],
        {},
        backoff=Backoff(first=1.0, most=4.0, stable=60.0),
        clock=clock,
        on_exit=lambda _, reason: exits.append(reason),
    )
    process.start()
    delays = []
    for _ in range(4):
        wait_exit(process)
        assert process.state == BACKOFF
        delays.append(process.restart_at - clock.now)
        clock.now = process.restart_at - 0.1
        assert process.poll() == BACKOFF  # not before its time
        clock.now = process.restart_at
        assert process.poll() == RUNNING
    assert delays == [1.0, 2.0, 4.0, 4.0]
    assert exits == ["exited with status 3"] * 4
    assert "[host] the bot exited with status 3; restarting in 4 s" in process.log.text()
    process.stop()


def test_a_run_that_lasted_starts_the_backoff_again() -> None:
    clock = Clock()
    process = HostedProcess(
        ["/bin/sh", "-c", "exit 1"], {}, backoff=Backoff(first=1.0, stable=10.0), clock=clock
    )
    process.start()
    wait_exit(process)
    clock.now = process.restart_at
    process.poll()
    clock.now += 11  # the second run lasted longer than `stable`
    wait_exit(process)
    assert process.crashes_in_a_row == 1 and process.restart_at - clock.now == 1.0


def test_stop_ends_the_process_and_is_not_a_crash() -> None:
    process = HostedProcess(["/bin/sleep", "30"], {})
    process.start()
    pid = process.pid
    process.stop()
    assert process.state == "stopped" and process.crashes == 0
    assert pid is not None and not Path(f"/proc/{pid}").exists()


def test_exit_reasons_name_the_limits() -> None:
    assert "CPU time limit" in exit_reason(128 + signal.SIGXCPU)
    assert "file size limit" in exit_reason(-signal.SIGXFSZ)
    assert exit_reason(2) == "exited with status 2"
    assert "SIGKILL" in exit_reason(128 + signal.SIGKILL)
    assert exit_reason(-signal.SIGHUP) == "killed by SIGHUP"


def test_the_log_ring_keeps_only_the_last_bytes() -> None:
    ring = LogRing(max_bytes=100)
    for i in range(50):
        ring.add(f"line {i:02d}\n")
    text = ring.text()
    assert len(text) <= 100 and text.endswith("line 49") and "line 00" not in text
    ring.add("x" * 5000)
    assert len(ring.text()) <= 1000


def test_the_sandbox_refuses_a_root_uid_and_an_entry_outside_the_bot(tmp_path: Path) -> None:
    runtime = Runtime(name="sh", command=("/bin/sh",))
    with pytest.raises(SandboxError, match="unprivileged"):
        SandboxSpec(app_dir=tmp_path, entry="bot.sh", runtime=runtime, uid=0, socket_dir=tmp_path)
    for entry in ("../x.sh", "/etc/passwd", ""):
        with pytest.raises(SandboxError, match="relative path"):
            SandboxSpec(app_dir=tmp_path, entry=entry, runtime=runtime, uid=61000, socket_dir=tmp_path)
    with pytest.raises(SandboxError, match="positive"):
        Limits(memory_bytes=0)


def test_the_command_line_drops_privileges_and_carries_no_token(tmp_path: Path) -> None:
    spec = SandboxSpec(
        app_dir=tmp_path, entry="bot.sh", runtime=Runtime("sh", ("/bin/sh",)), uid=61003, socket_dir=tmp_path
    )
    argv = sandbox_argv(spec)
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv
    assert argv.index("/usr/bin/prlimit") < argv.index("/usr/bin/setpriv") < argv.index("/bin/sh")
    assert "--reuid=61003" in argv and "--no-new-privs" in argv and "--bounding-set=-all" in argv
    env = sandbox_env(spec, token="secret-token")
    assert env["CARAVANSERAI_TOKEN"] == "secret-token" and not any("secret-token" in a for a in argv)
    assert env["CARAVANSERAI_TARGET"] == "unix:/run/caravanserai/bot.sock"


def test_the_socket_directory_must_hold_only_the_socket(tmp_path: Path) -> None:
    (tmp_path / "bot.sock").touch()
    assert check_socket_dir(tmp_path / "bot.sock") == tmp_path
    (tmp_path / "tokens.json").touch()
    with pytest.raises(SandboxError, match="only the gateway socket"):
        check_socket_dir(tmp_path / "bot.sock")
    with pytest.raises(SandboxError, match="must be named"):
        check_socket_dir(tmp_path / "gw.sock")


def test_an_environment_that_cannot_be_made_fails_the_process_for_good() -> None:
    made: list[int] = []

    def env() -> dict[str, str]:
        made.append(1)
        if len(made) > 1:
            raise CannotStart("its token was revoked")
        return {}

    clock = Clock()
    process = HostedProcess(["/bin/sh", "-c", "exit 1"], env, backoff=Backoff(first=1.0), clock=clock)
    process.start()
    wait_exit(process)
    clock.now = process.restart_at
    assert process.poll() == FAILED and process.last_exit == "its token was revoked"
    clock.now += 100
    assert process.poll() == FAILED and len(made) == 2  # never tried again
    assert "[host] the bot cannot start: its token was revoked" in process.log.text()


def test_output_with_nul_and_invalid_utf8_is_kept_cleaned() -> None:
    process = HostedProcess(["/bin/sh", "-c", r"printf 'nul\000here \377\376 end\n'; exit 1"], {})
    process.start()
    wait_exit(process)
    assert "nul\ufffdhere \ufffd\ufffd end" in process.log.text() and "\x00" not in process.log.text()
    ring = LogRing()
    ring.add("[host] a name with a lone surrogate: '\udce9'")
    assert ring.text() == "[host] a name with a lone surrogate: '\ufffd'"
