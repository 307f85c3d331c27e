"""The sandbox of one hosted bot process: the bubblewrap command line, its limits and its environment.

The command starts with `bot_host.launch`, which joins the bot's control groups (`bot_host.cgroups`: the
whole tree's memory, processes and CPU share) and becomes bubblewrap with the system-call filter
(`bot_host.seccomp_filter`: no namespaces, mounts, keyring, io_uring, ptrace, bpf, ...). bubblewrap
(Debian's `bubblewrap`) runs as root, without a user namespace, so that it may bind paths only root can
reach (an interpreter under /root, the SDK); inside the new mount, PID, network, IPC, UTS and cgroup
namespaces it runs `prlimit` (the per-process rlimits) and then `setpriv`, which drops to the bot's own
unprivileged uid/gid (unique on the machine, `bot_host.uids`) with no capabilities, no supplementary groups
and no_new_privs before it executes the bot. The bot sees: /usr and the runtime read-only, its unpacked
version read-only at /bot, the SDK read-only under /opt/caravanserai, a size-limited tmpfs /tmp (its only
writable place), a private /proc whose PID 1 (bubblewrap, with the host's paths on its command line) is an
empty directory, a minimal /dev, and the directory holding the gateway's Unix-domain socket at
/run/caravanserai (its only way out: the new network namespace has nothing but loopback). Nothing else of
the host exists inside.

The bot's version: `sandbox_env` passes the version the owner uploaded (the `version` of the unpacked
`caravanserai.json`, which the upload checked and which names the ladder's `HostedVersion`) as
CARAVANSERAI_BOT_VERSION; both SDKs send it as the Hello's `bot_version`, so the ladder shows and rates the
uploaded version.

Layer: bot host plumbing. Pure but for reading that manifest: it builds argument lists and environments; it
starts nothing, and it must not import Django or read the ladder's settings.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot_host.cgroups import BotLimits

BOT_DIR = "/bot"
SDK_DIR = "/opt/caravanserai"
SOCKET_DIR = "/run/caravanserai"
TMP_DIR = "/tmp"
SOCKET_NAME = "bot.sock"
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
SANDBOX_PROCESSES = 3  # the launcher-turned-bwrap, bwrap's PID 1 and the bot's first process
LAUNCHER = (sys.executable, "-I", "-m", "bot_host.launch")
MANIFEST = "caravanserai.json"  # ladder.hosting.archives.MANIFEST, checked at upload and at unpack
MANIFEST_MAX_BYTES = 64 * 1024
VERSION_MAX_CHARS = 64


class SandboxError(ValueError):
    """A sandbox that cannot be built as asked (the message says what is wrong)."""


@dataclass(frozen=True)
class Limits:
    """The limits of one hosted bot: its rlimits, its control group's budget and the size of its /tmp.

    `cpu_seconds` is CPU time per process start (SIGXCPU then, SIGKILL a second later): a restart begins a
    new window. `memory_bytes` is each process's address space (RLIMIT_AS) and the memory of the bot's
    whole process tree (its cgroup, no swap); `processes` the processes and threads of the bot's uid
    (RLIMIT_NPROC) and of its cgroup; `cpu_cores` the CPU its whole tree may use at once (cgroup quota;
    every bot has the same weight when the machine is busy); `file_bytes` the largest file it may write
    (RLIMIT_FSIZE)."""

    cpu_seconds: int = 3600
    memory_bytes: int = 1 << 30
    processes: int = 64
    file_bytes: int = 16 << 20
    open_files: int = 256
    tmp_bytes: int = 64 << 20
    cpu_cores: float = 1.0

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "memory_bytes", "processes", "file_bytes", "open_files", "tmp_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise SandboxError(f"limit {name} must be a positive integer, not {value!r}")
        if not isinstance(self.cpu_cores, int | float) or not 0.01 <= self.cpu_cores <= 1024:
            raise SandboxError(f"limit cpu_cores must be between 0.01 and 1024, not {self.cpu_cores!r}")

    def bot_limits(self) -> BotLimits:
        """The bot's control group budget (its processes plus the sandbox's own few)."""
        return BotLimits(self.memory_bytes, self.processes + SANDBOX_PROCESSES, float(self.cpu_cores))

    def prlimit_args(self, reserved_bytes: int = 0) -> list[str]:
        """prlimit's options; a process's address space is the memory limit plus what the runtime reserves
        without using it (`Runtime.reserved_bytes`: the cgroup bounds what is used)."""
        cpu = f"{self.cpu_seconds}:{self.cpu_seconds + 1}"
        return [
            f"--cpu={cpu}",
            f"--as={self.memory_bytes + reserved_bytes}",
            f"--nproc={self.processes}",
            f"--fsize={self.file_bytes}",
            f"--nofile={self.open_files}",
            "--core=0",
        ]


@dataclass(frozen=True)
class Runtime:
    """How one runtime runs inside the sandbox: the command before the entry point, what it needs bound
    read-only (host path -> sandbox path) and its environment."""

    name: str
    command: tuple[str, ...]
    binds: tuple[tuple[str, str], ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    reserved_bytes: int = 0  # address space each process reserves before it runs a line, never used


@dataclass(frozen=True)
class SandboxSpec:
    app_dir: Path
    entry: str
    runtime: Runtime
    uid: int
    socket_dir: Path
    limits: Limits = Limits()
    bwrap: str = "/usr/bin/bwrap"
    prlimit: str = "/usr/bin/prlimit"
    setpriv: str = "/usr/bin/setpriv"
    cgroup_procs: tuple[str, ...] = ()  # the bot's groups' process lists, joined before bwrap starts
    launcher: tuple[str, ...] = LAUNCHER

    def __post_init__(self) -> None:
        if self.uid < 1000:
            raise SandboxError(f"a sandbox uid must be an unprivileged id (1000 or more), not {self.uid}")
        parts = Path(self.entry).parts
        if not self.entry or Path(self.entry).is_absolute() or ".." in parts:
            raise SandboxError(f"the entry point must be a relative path inside the bot, not {self.entry!r}")


def _root_filesystem() -> list[str]:
    return [
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin",
        "--symlink", "usr/sbin", "/sbin",
        "--proc", "/proc",
        "--perms", "0555", "--tmpfs", "/proc/1",  # bwrap's own PID 1: its command line names host paths
        "--dev", "/dev",
    ]  # fmt: skip


def _parents(dests: list[str]) -> list[str]:
    """Every mount point's ancestors, made world-readable (bwrap would make them with the host's umask)."""
    made: list[str] = []
    for dest in dests:
        for parent in reversed(Path(dest).parents):
            if str(parent) != "/" and str(parent) not in made:
                made.append(str(parent))
    return [arg for directory in made for arg in ("--perms", "0755", "--dir", directory)]


def _binds(spec: SandboxSpec) -> list[str]:
    pairs = [
        (str(Path(source).resolve()), dest)
        for source, dest in spec.runtime.binds
        if not (Path(source).resolve().is_relative_to("/usr") and dest == source)  # seen through /usr
    ]
    pairs += [(str(spec.app_dir.resolve()), BOT_DIR), (str(spec.socket_dir.resolve()), SOCKET_DIR)]
    args = _parents([dest for _, dest in pairs])
    for source, dest in pairs:
        args += ["--ro-bind", source, dest]
    args += ["--perms", "1777", "--size", str(spec.limits.tmp_bytes), "--tmpfs", TMP_DIR]
    return args


def sandbox_argv(spec: SandboxSpec) -> list[str]:
    """The whole command line: the launcher and the groups it joins, then bwrap (the launcher adds the
    filter), its namespaces and mounts, then prlimit, setpriv and the bot."""
    namespaces = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup"]
    isolation = ["--die-with-parent", "--new-session", "--hostname", "hosted-bot", "--chdir", BOT_DIR]
    drop = [
        spec.setpriv,
        f"--reuid={spec.uid}",
        f"--regid={spec.uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]
    entry = f"{BOT_DIR}/{spec.entry}"
    return [
        *spec.launcher,
        *spec.cgroup_procs,
        "--",
        spec.bwrap,
        *namespaces,
        *isolation,
        *_root_filesystem(),
        *_binds(spec),
        "--",
        spec.prlimit,
        *spec.limits.prlimit_args(spec.runtime.reserved_bytes),
        "--",
        *drop,
        *spec.runtime.command,
        entry,
    ]


def uploaded_version(app_dir: Path) -> str:
    """The `version` of the unpacked version's manifest, or "" when there is none to read (a directory
    made by hand, as some tests do): the upload refused every archive without one."""
    try:
        with (app_dir / MANIFEST).open("rb") as handle:
            doc = json.loads(handle.read(MANIFEST_MAX_BYTES + 1)[:MANIFEST_MAX_BYTES])
    except (OSError, ValueError, RecursionError):
        return ""
    version = doc.get("version") if isinstance(doc, dict) else None
    if not isinstance(version, str) or not version.strip() or len(version.strip()) > VERSION_MAX_CHARS:
        return ""
    return version.strip()


def sandbox_env(spec: SandboxSpec, *, token: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The bot's whole environment (nothing of the host's): where the gateway is, its token, the version
    the owner uploaded (CARAVANSERAI_BOT_VERSION), the runtime's variables. The token travels only here,
    never on a command line or in a file."""
    env = {
        "PATH": SANDBOX_PATH,
        "HOME": TMP_DIR,
        "TMPDIR": TMP_DIR,
        "LANG": "C.UTF-8",
        "CARAVANSERAI_TARGET": f"unix:{SOCKET_DIR}/{SOCKET_NAME}",
        "CARAVANSERAI_TOKEN": token,
        "CARAVANSERAI_PROTO_ROOT": f"{SDK_DIR}/protos",
    }
    version = uploaded_version(spec.app_dir)
    if version:
        env["CARAVANSERAI_BOT_VERSION"] = version
    env.update(spec.runtime.env)
    env.update(extra or {})
    return env


def check_socket_dir(socket_path: Path) -> Path:
    """The directory bound into every sandbox: it must hold nothing but the gateway's socket (a gateway
    restart replaces the socket file, so the directory is bound, not the file)."""
    directory = socket_path.parent
    if socket_path.name != SOCKET_NAME:
        raise SandboxError(f"the gateway socket must be named {SOCKET_NAME!r}, not {socket_path.name!r}")
    if directory.exists():
        stray = sorted(p.name for p in directory.iterdir() if p.name != SOCKET_NAME)
        if stray:
            raise SandboxError(f"{directory} must hold only the gateway socket; it also holds {stray}")
    return directory
