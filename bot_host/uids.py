"""Unique uids for running hosted bots, shared by every bot host on the machine.

A uid is handed out under an exclusive `flock` on `<directory>/lock` (default /run/caravanserai-bot-host/
uids, CARAVANSERAI_BOT_HOST_UID_DIR), which every host on the machine takes, and recorded as a lease file
`<directory>/<uid>` naming the host process that holds it. A uid is free only when no live host holds its
lease and no process on the machine runs with it (real, effective, saved or file-system uid): a sandbox
that outlived its host keeps its uid until its last process is gone. Before a uid is handed out again its
kernel keyrings (user and user-session, which outlive every process of the uid) are cleared and whatever it
left in the machine's temporary directories is removed, so nothing passes from one bot to the next.

Layer: bot host plumbing. It reads /proc and runs one short helper as the uid to clear its keyrings; it
must not import Django, and it never touches a uid outside its range.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_DIR = Path("/run/caravanserai-bot-host/uids")
DEFAULT_COUNT = 1000
TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
SETPRIV = "/usr/bin/setpriv"
HELPER_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3")  # reachable by any uid, unlike /root/...
# KEYCTL_CLEAR (7) on KEY_SPEC_USER_KEYRING (-4) and KEY_SPEC_USER_SESSION_KEYRING (-5); the system-call
# number comes from the command line (the host resolves it for its own architecture with libseccomp).
CLEAR_KEYRINGS = (
    "import ctypes, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "bad = [s for s in (-4, -5) if libc.syscall(int(sys.argv[1]), 7, s) != 0]\n"
    "sys.exit(1 if bad else 0)\n"
)


class UidError(RuntimeError):
    """No uid can be handed out (the message says why)."""


def uid_dir() -> Path:
    return Path(os.environ.get("CARAVANSERAI_BOT_HOST_UID_DIR") or DEFAULT_DIR)


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks (with the pid, it names one process for good)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def uids_in_use(proc: Path = Path("/proc")) -> set[int]:
    """Every uid some process on the machine runs with (real, effective, saved or file-system)."""
    found: set[int] = set()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("Uid:"):
                    found.update(int(v) for v in line.split()[1:])
                    break
    return found


def _keyctl_number() -> int:
    import pyseccomp  # Debian's libseccomp2; the host refuses to start without it

    return int(pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, "keyctl"))


def clear_keyrings(uid: int) -> None:
    """Empty the uid's user and user-session keyrings, running a tiny helper as that uid."""
    python = next((p for p in HELPER_PYTHONS if os.access(p, os.X_OK)), None)
    if python is None:
        raise UidError(f"cannot clear uid {uid}'s keyrings: none of {HELPER_PYTHONS} exists")
    drop = [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]
    done = subprocess.run(
        [*drop, "--", python, "-I", "-S", "-c", CLEAR_KEYRINGS, str(_keyctl_number())],
        env={},
        cwd="/",
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise UidError(f"cannot clear uid {uid}'s keyrings: {done.stderr.decode(errors='replace')[-300:]}")


def remove_temp_files(uid: int, dirs: Sequence[str] = TEMP_DIRS) -> list[str]:
    """Remove what the uid owns at the top of the machine's temporary directories; what was removed."""
    removed = []
    for directory in dirs:
        with contextlib.suppress(FileNotFoundError):
            for entry in os.scandir(directory):
                with contextlib.suppress(FileNotFoundError):
                    if entry.stat(follow_symlinks=False).st_uid != uid:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path)
                    else:
                        os.unlink(entry.path)
                    removed.append(entry.path)
    return removed


@dataclass
class UidPool:
    """Uids `first` .. `first + count - 1`, handed out to this host's bots under the machine-wide lock."""

    first: int
    count: int = DEFAULT_COUNT
    directory: Path = field(default_factory=uid_dir)
    temp_dirs: Sequence[str] = TEMP_DIRS
    holder: str = field(default_factory=lambda: f"{os.getpid()} {_start_time(os.getpid())}")

    def __post_init__(self) -> None:
        if self.first < 1000 or self.count < 1:
            raise UidError(f"a uid range must be unprivileged (1000 or more), not {self.first}+{self.count}")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing lets go of the lock

    def _held(self, uid: int) -> bool:
        """Whether a live host process holds the uid's lease."""
        try:
            pid, started = (self.directory / str(uid)).read_text().split()[:2]
        except (FileNotFoundError, ValueError):
            return False
        return _start_time(int(pid)) == started

    def allocate(self) -> int:
        """A uid no live host holds and no process runs with, cleared, and now held by this host."""
        with self._locked():
            busy = uids_in_use()
            for uid in range(self.first, self.first + self.count):
                if uid in busy or self._held(uid):
                    continue
                clear_keyrings(uid)
                remove_temp_files(uid, self.temp_dirs)
                (self.directory / str(uid)).write_text(self.holder + "\n")
                return uid
        raise UidError(f"every uid of {self.first}..{self.first + self.count - 1} is in use on this machine")

    def release(self, uid: int) -> None:
        """Let go of a uid this host holds (it stays unused while any process of it lives)."""
        with self._locked():
            lease = self.directory / str(uid)
            with contextlib.suppress(FileNotFoundError):
                if lease.read_text().strip() == self.holder:
                    lease.unlink()
