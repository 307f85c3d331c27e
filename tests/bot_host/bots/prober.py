"""A hosted bot that tries every way out it can think of and prints one line per attempt:
`PROBE <name> blocked <error>` when the sandbox stopped it, `PROBE <name> ESCAPED <what>` when not."""

import os
import socket

OTHER = [
    p for p in os.environ.get("PROBE_PATHS", "").split(":") if p
]  # host paths that must stay unreachable


def probe(name, attempt):
    try:
        what = attempt()
    except (OSError, MemoryError) as exc:
        print(f"PROBE {name} blocked {type(exc).__name__}: {exc}", flush=True)
    else:
        print(f"PROBE {name} ESCAPED {what}", flush=True)


def connect(address):
    def attempt():
        with socket.create_connection(address, timeout=2):
            return f"connected to {address}"

    return attempt


def read(path):
    def attempt():
        with open(path, "rb") as handle:
            return f"read {len(handle.read(100))} bytes of {path}"

    return attempt


def write(path):
    def attempt():
        with open(path, "wb") as handle:
            handle.write(b"x")
        return f"wrote {path}"

    return attempt


def fill_disk():
    written = 0
    for n in range(1000):
        with open(f"/tmp/fill-{n}", "wb") as handle:
            for _ in range(64):
                handle.write(b"\0" * 65536)
                written += 65536
    return f"wrote {written} bytes"


def big_file():
    try:
        with open("/tmp/big", "wb") as handle:
            for _ in range(1024):
                handle.write(b"\0" * 65536)
    finally:
        os.unlink("/tmp/big")
    return "wrote a 64 MiB file"


def allocate():
    blocks = [bytearray(64 << 20) for _ in range(64)]
    return f"allocated {len(blocks) * 64} MiB"


def other_processes():
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    foreign = [p for p in pids if p > 50]
    if foreign:
        return f"sees {len(pids)} processes"
    raise PermissionError(f"only its own {len(pids)} processes are visible")


def unix_elsewhere():
    sock = socket.socket(socket.AF_UNIX)
    sock.connect("\0caravanserai-probe")
    return "reached an abstract socket of the host"


probe("net-internet", connect(("1.1.1.1", 53)))
probe("net-loopback-gateway", connect(("127.0.0.1", int(os.environ.get("PROBE_GATEWAY_PORT", "50051")))))
probe("net-abstract-unix", unix_elsewhere)
for i, path in enumerate(OTHER):
    probe(f"read-host-{i}", read(path))
probe("read-proc-1-environ", read("/proc/1/environ"))
probe("write-bot-dir", write("/bot/planted.py"))
probe("write-usr", write("/usr/planted"))
probe("write-root", write("/planted"))
probe("write-sdk", write("/opt/caravanserai/planted"))
probe("write-socket-dir", write("/run/caravanserai/planted"))
probe("big-file", big_file)
probe("fill-disk", fill_disk)
probe("memory", allocate)
probe("see-processes", other_processes)
print(f"UID {os.getuid()} GID {os.getgid()}", flush=True)
print("PROBES DONE", flush=True)
