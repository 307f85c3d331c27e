"""The first process of every sandbox: it joins the bot's control groups, then becomes bubblewrap with the
system-call filter on a file descriptor.

`python -I -m bot_host.launch <cgroup.procs file>... -- <bwrap> <bwrap options...>`: it writes its own pid
into each group's process list (so bubblewrap and everything the bot forks are counted from the first
instruction), writes the compiled filter (`bot_host.seccomp_filter`) into an anonymous memory file and
executes bubblewrap with `--seccomp <fd>` before its other options. Started by the host's supervisor as the
session leader it replaces, so stopping the session stops the sandbox as before.

Layer: bot host plumbing (the exec wrapper the host starts); it never runs bot code itself, and it must not
import Django. A failure is written to its output (the bot's log) and exits 125 before anything runs.
"""

from __future__ import annotations

import os
import sys

from bot_host.seccomp_filter import SeccompUnavailable, write_filter

FAILED = 125


def join(procs_files: list[str]) -> None:
    pid = str(os.getpid())
    for path in procs_files:
        with open(path, "w") as handle:
            handle.write(pid)


def filter_fd() -> int:
    """An inheritable descriptor at the start of the compiled filter."""
    fd = os.memfd_create("caravanserai-seccomp", 0)  # no MFD_CLOEXEC: bubblewrap reads it, then closes it
    write_filter(fd)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        print("[host] usage: launch <cgroup.procs>... -- <bwrap> <options>...", flush=True)
        return FAILED
    split = argv.index("--")
    procs_files, command = argv[:split], argv[split + 1 :]
    try:
        join(procs_files)
        fd = filter_fd()
    except (OSError, SeccompUnavailable) as exc:
        print(f"[host] the sandbox could not be set up: {exc}", flush=True)
        return FAILED
    try:
        os.execv(command[0], [command[0], "--seccomp", str(fd), *command[1:]])
    except OSError as exc:
        print(f"[host] the sandbox could not be started: {exc}", flush=True)
    return FAILED


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
