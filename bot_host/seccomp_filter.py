"""The system-call filter of every hosted bot: what a bot's code is refused by the kernel itself.

Built with libseccomp (through PyPI's `pyseccomp`, ctypes over Debian's `libseccomp2`) and handed to
bubblewrap as compiled BPF (`--seccomp FD`), which loads it just before it executes the sandbox's command,
so prlimit, setpriv and the bot all run under it. The filter allows by default and refuses, with EPERM,
what a game bot never needs and where kernel privilege bugs are reached:

- new namespaces: `unshare`, `setns`, `clone` with any CLONE_NEW* flag, and `clone3` (its flags live in
  memory a filter cannot read, so it answers ENOSYS and the C library falls back to `clone`): a bot cannot
  make a user namespace and become root in it;
- mounts: `mount`, `umount2`, `pivot_root`, `chroot` and the new mount API (`fsopen`, `open_tree`, ...);
- the kernel keyring: `keyctl`, `add_key`, `request_key`;
- `io_uring_*`, `bpf`, `perf_event_open`, `userfaultfd`, `fanotify_init`;
- looking into other processes: `ptrace`, `process_vm_*`, `kcmp`, `pidfd_getfd`;
- the machine's own controls: modules, kexec, reboot, swap, clocks, host and domain names, quotas,
  `syslog`, `acct`, port I/O, handle-based opens;
- sockets of any family but AF_UNIX, AF_INET and AF_INET6 (netlink, packet, ...: EAFNOSUPPORT), and the
  terminal ioctls that inject input (TIOCSTI, TIOCLINUX).
System calls of another architecture (32-bit or x32 entry points) kill the process.

Layer: bot host plumbing. It builds the filter and writes it to a file descriptor; it loads nothing into
this process and must not import Django.
"""

from __future__ import annotations

import errno
from typing import Any

CLONE_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
REFUSED = (
    # namespaces
    "unshare", "setns",
    # mounts
    "mount", "umount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr",
    # the kernel keyring
    "keyctl", "add_key", "request_key",
    # kernel interfaces a bot does not need
    "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open", "userfaultfd",
    "fanotify_init", "lookup_dcookie", "nfsservctl", "uselib", "_sysctl",
    # other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # the machine
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon",
    "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "settimeofday", "clock_settime",
    "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "ioperm", "iopl", "vhangup",
    "open_by_handle_at", "name_to_handle_at",
)  # fmt: skip
SOCKET_FAMILIES_ALLOWED = (1, 2, 10)  # AF_UNIX, AF_INET, AF_INET6
HIGHEST_FAMILY_CHECKED = 10
TERMINAL_INJECTION = (0x5412, 0x541C)  # TIOCSTI, TIOCLINUX


class SeccompUnavailable(RuntimeError):
    """This machine cannot build the filter (the message says what to install)."""


def _library() -> Any:
    try:
        import pyseccomp
    except (ImportError, RuntimeError) as exc:  # RuntimeError: pyseccomp found no libseccomp
        raise SeccompUnavailable(
            "the hosted bots' system-call filter needs libseccomp and the pyseccomp package "
            f"(Debian's libseccomp2, `pip install pyseccomp`): {exc}"
        ) from exc
    return pyseccomp


def bot_filter() -> Any:
    """The filter, ready to export (a `pyseccomp.SyscallFilter`)."""
    sc = _library()
    refuse = sc.ERRNO(errno.EPERM)
    f = sc.SyscallFilter(sc.ALLOW)
    f.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    for name in REFUSED:
        f.add_rule(refuse, name)
    for flag in CLONE_NAMESPACE_FLAGS:
        f.add_rule(refuse, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    no_family = sc.ERRNO(errno.EAFNOSUPPORT)
    f.add_rule(no_family, "socket", sc.Arg(0, sc.GT, HIGHEST_FAMILY_CHECKED))
    for family in range(HIGHEST_FAMILY_CHECKED + 1):
        if family not in SOCKET_FAMILIES_ALLOWED:
            f.add_rule(no_family, "socket", sc.Arg(0, sc.EQ, family))
    for request in TERMINAL_INJECTION:
        f.add_rule(refuse, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    return f


def write_filter(fd: int) -> None:
    """The compiled filter (BPF, as `bwrap --seccomp` reads it) written to `fd`, which is left open."""
    bot_filter().export_bpf(_Descriptor(fd))


class _Descriptor:
    """What pyseccomp's export needs of a file: its descriptor."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def fileno(self) -> int:
        return self.fd
