"""Generating the SDK's gRPC stubs from bot.proto with grpcio-tools (never committed, git-ignored).

Run by `make install` (`python clients/python/caravanserai_bot/_codegen.py`, in install-extras.sh) for a
checkout's editable install, by setup.py's build_py hook for a wheel (which it loads by file path, so it must
import nothing of the package), and by `_proto.py` on first import when the stubs are missing or stale.
Writes only under `<package_dir>/_generated/`, one file at a time (atomic renames).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from importlib import resources
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROTO = "caravanserai/bot/v1/bot.proto"
_PREFIX = "caravanserai_bot._generated"


def digest(root: Path) -> str:
    """The SHA-256 of bot.proto under `root` (written to `_generated/STAMP` with the stubs)."""
    return hashlib.sha256((root / PROTO).read_bytes()).hexdigest()


def generate(root: Path, package_dir: Path = PACKAGE_DIR) -> None:
    """Run protoc over bot.proto into `<package_dir>/_generated/` (atomic per file)."""
    from grpc_tools import protoc

    out_dir = package_dir / "_generated"
    include = str(resources.files("grpc_tools") / "_proto")
    with tempfile.TemporaryDirectory(prefix="caravanserai-bot-codegen-") as tmp:
        code = protoc.main(
            [
                "grpc_tools.protoc",
                f"-I{root}",
                f"-I{include}",
                f"--python_out={tmp}",
                f"--pyi_out={tmp}",
                f"--grpc_python_out={tmp}",
                str(root / PROTO),
            ]
        )
        if code != 0:
            raise RuntimeError(f"protoc failed ({code}) on {root / PROTO}")
        for directory in (
            out_dir,
            out_dir / "caravanserai",
            out_dir / "caravanserai/bot",
            out_dir / "caravanserai/bot/v1",
        ):
            directory.mkdir(parents=True, exist_ok=True)
            init = directory / "__init__.py"
            if not init.exists():
                init.write_text("")
        for source in Path(tmp, "caravanserai/bot/v1").iterdir():
            text = source.read_text().replace(
                "from caravanserai.bot.v1 import", f"from {_PREFIX}.caravanserai.bot.v1 import"
            )
            target = out_dir / "caravanserai/bot/v1" / source.name
            partial = target.with_suffix(target.suffix + f".{os.getpid()}.tmp")
            partial.write_text(text)
            partial.replace(target)
        stamp = out_dir / "STAMP"
        partial = stamp.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(digest(root))
        partial.replace(stamp)


def is_current(root: Path, package_dir: Path = PACKAGE_DIR) -> bool:
    """Whether `<package_dir>/_generated/` holds the stubs of the bot.proto under `root`."""
    stamp = package_dir / "_generated" / "STAMP"
    return stamp.is_file() and stamp.read_text() == digest(root)


def main() -> int:
    """Generate the stubs of the repository's bot.proto into this package, unless they are current."""
    root = PACKAGE_DIR.parents[2] / "protos"
    if not (root / PROTO).is_file():
        print(f"cannot find {root / PROTO}", file=sys.stderr)
        return 1
    if not is_current(root):
        generate(root)
        print(f"generated gRPC stubs for {PROTO} into {PACKAGE_DIR / '_generated'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
