"""Ports for the servers a test starts in other processes, told their port before they bind it.

A port the kernel hands out for `bind(0)` lies in its ephemeral range, the range it also takes the local
ports of outgoing connections from: between the moment the test picks it and the moment a child process
binds it, any connection on the machine may take it (a gateway failed to bind its relay port this way). So
the ports here lie below that range, each xdist process draws from a slice of its own (no two processes of
a run can pick the same one) and checks that a port binds before handing it out. A server that can bind port
0 itself and report the port bound needs none of this.
"""

from __future__ import annotations

import os
import random
import socket
import threading
from pathlib import Path

LOWEST = 20000
SLICES = 32  # xdist processes; a worker numbered past this shares a slice (and still checks the bind)
_lock = threading.Lock()
_next: int | None = None


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _slice() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    width = (_ephemeral_low() - LOWEST) // SLICES
    start = LOWEST + (index % SLICES) * width
    return range(start, start + width)


def _binds(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port on loopback, free now, that no other process of this run is handed, outside the kernel's
    ephemeral range; successive calls in a process go round its slice (from a random start: two runs at
    once seldom meet)."""
    global _next
    ports = _slice()
    with _lock:
        if _next is None:
            _next = random.randrange(len(ports))
        for _ in range(len(ports)):
            port = ports[_next % len(ports)]
            _next += 1
            if _binds(port):
                return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")
