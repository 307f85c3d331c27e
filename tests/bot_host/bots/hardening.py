"""A hosted bot that reaches for the kernel's privileged corners and prints one line per attempt:
`PROBE <name> blocked <errno name>` when the call failed, `PROBE <name> ESCAPED <result>` when not; then
what it sees as PID 1's command line."""

import ctypes
import errno
import os
import platform
import time

NUMBERS = {  # system-call numbers: (x86_64, aarch64)
    "unshare": (272, 97),
    "clone": (56, 220),
    "setns": (308, 268),
    "mount": (165, 40),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "io_uring_setup": (425, 425),
    "ptrace": (101, 117),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
}
ARCH = 0 if platform.machine() == "x86_64" else 1
CLONE_NEWUSER, CLONE_NEWNS, SIGCHLD = 0x10000000, 0x00020000, 17
libc = ctypes.CDLL(None, use_errno=True)


def call(name, *args):
    result = libc.syscall(NUMBERS[name][ARCH], *args)
    if result == 0 and name == "clone":
        os._exit(0)  # the child of a clone that was allowed
    if result < 0:
        return f"blocked {errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())}"
    return f"ESCAPED {result}"


ATTEMPTS = {
    "unshare-user": ("unshare", CLONE_NEWUSER),
    "unshare-mount": ("unshare", CLONE_NEWNS),
    "clone-user": ("clone", CLONE_NEWUSER | SIGCHLD, None, None, None, None),
    "setns": ("setns", 0, 0),
    "mount": ("mount", b"none", b"/tmp", b"tmpfs", 0, None),
    "keyctl": ("keyctl", 0, -4, 0),  # KEYCTL_GET_KEYRING_ID of the user keyring
    "add_key": ("add_key", b"user", b"left-behind", b"secret", 6, -4),
    "io_uring_setup": ("io_uring_setup", 8, None),
    "ptrace": ("ptrace", 0, 0, None, None),  # PTRACE_TRACEME
    "bpf": ("bpf", 5, None, 0),  # BPF_PROG_LOAD
    "perf_event_open": ("perf_event_open", None, 0, -1, -1, 0),
}
for probe, (name, *args) in ATTEMPTS.items():
    print(f"PROBE {probe} {call(name, *args)}", flush=True)
try:
    with open("/proc/1/cmdline", "rb") as handle:
        shown = handle.read().replace(b"\0", b" ").decode(errors="replace")
    print(f"PID1 {shown}", flush=True)
except OSError as exc:
    print(f"PID1 unreadable {type(exc).__name__}", flush=True)
print("PROBES DONE", flush=True)
time.sleep(600)
