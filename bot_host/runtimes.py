"""The runtimes a hosted bot may declare (`python`, `node`) as this machine provides them.

`python` is this host's interpreter with the project's installed packages (grpcio, protobuf) and a copy of
the Python SDK whose stubs are generated once into the host's state directory (the sandbox is read-only,
so the SDK cannot generate them on first import there). `node` is the system's node with the example's
packages (clients/node/node_modules, `make install`). Everything is bound read-only under
`sandbox.SDK_DIR`, with the bot author's view documented in BOTS.md's terms: `import caravanserai_bot`, or
`require('@grpc/grpc-js')`.

Layer: bot host plumbing. It may copy files into the host's state directory and run the SDK's code
generator; it must not import Django.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from bot_host.sandbox import SDK_DIR, Runtime

RUNTIMES = ("python", "node")


def _python_sdk(state_dir: Path, project_root: Path) -> Path:
    """A copy of clients/python/caravanserai_bot with its generated stubs; the directory to bind."""
    target = state_dir / "sdk" / "python"
    package = target / "caravanserai_bot"
    source = project_root / "clients" / "python" / "caravanserai_bot"
    if package.exists():
        shutil.rmtree(package)
    shutil.copytree(source, package, ignore=shutil.ignore_patterns("_generated", "__pycache__"))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": os.pathsep.join([str(target), sysconfig.get_paths()["purelib"]]),
        "CARAVANSERAI_PROTO_ROOT": str(project_root / "protos"),
    }
    done = subprocess.run(
        [sys.executable, "-c", "import caravanserai_bot._proto"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cannot generate the Python SDK's stubs: {done.stderr[-500:]}")
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def python_runtime(state_dir: Path, project_root: Path) -> Runtime:
    interpreter = Path(os.path.realpath(sys.executable))
    site = sysconfig.get_paths()["purelib"]
    return Runtime(
        name="python",
        command=(str(interpreter),),
        binds=(
            (sys.base_prefix, sys.base_prefix),
            (site, f"{SDK_DIR}/site-packages"),
            (str(_python_sdk(state_dir, project_root)), f"{SDK_DIR}/python"),
            (str(project_root / "protos"), f"{SDK_DIR}/protos"),
        ),
        env={
            "PYTHONPATH": f"{SDK_DIR}/python:{SDK_DIR}/site-packages",
            "PYTHONNOUSERSITE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
        },
    )


# V8 reserves about 1 GiB of address space (its code range and heap cage) before a bot runs a line, and
# aborts below about 750 MiB: beyond the bot's memory limit, which its cgroup enforces on what is used.
NODE_RESERVED_BYTES = 1536 << 20


def node_runtime(project_root: Path) -> Runtime | None:
    """The node runtime, or None when this machine has no node or the example's packages."""
    node = shutil.which("node")
    modules = project_root / "clients" / "node" / "node_modules"
    if node is None or not modules.is_dir():
        return None
    return Runtime(
        name="node",
        command=(os.path.realpath(node),),
        binds=(
            (str(Path(os.path.realpath(node)).parent), str(Path(os.path.realpath(node)).parent)),
            (str(modules), f"{SDK_DIR}/node/node_modules"),
            (str(project_root / "protos"), f"{SDK_DIR}/protos"),
        ),
        env={"NODE_PATH": f"{SDK_DIR}/node/node_modules"},
        reserved_bytes=NODE_RESERVED_BYTES,
    )


def available_runtimes(state_dir: Path, project_root: Path) -> dict[str, Runtime]:
    """Every runtime this machine can run, by name."""
    found: dict[str, Runtime] = {"python": python_runtime(state_dir, project_root)}
    node = node_runtime(project_root)
    if node is not None:
        found["node"] = node
    return found
