"""The generated stubs of the bot protocol, generated on first import when missing (never committed).

The .proto file is found in, in order: $CARAVANSERAI_PROTO_ROOT, the copy packaged into a built wheel
(`caravanserai_bot/protos/`), the repository checkout (`protos/` three levels up).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from importlib import resources
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROTO = "caravanserai/bot/v1/bot.proto"
_PREFIX = "caravanserai_bot._generated"


def proto_root() -> Path:
    candidates = [
        os.environ.get("CARAVANSERAI_PROTO_ROOT"),
        PACKAGE_DIR / "protos",
        PACKAGE_DIR.parents[2] / "protos",
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / PROTO).is_file():
            return Path(candidate)
    raise FileNotFoundError(f"cannot find {PROTO}; set CARAVANSERAI_PROTO_ROOT to the protos/ directory")


def _digest(root: Path) -> str:
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
        partial.write_text(_digest(root))
        partial.replace(stamp)


def ensure_generated() -> None:
    stamp = PACKAGE_DIR / "_generated" / "STAMP"
    try:
        root = proto_root()
    except FileNotFoundError:
        if stamp.is_file():
            return  # a built wheel without sources: its stubs were generated at build time
        raise
    if not stamp.is_file() or stamp.read_text() != _digest(root):
        generate(root)


ensure_generated()

from caravanserai_bot._generated.caravanserai.bot.v1 import bot_pb2, bot_pb2_grpc  # noqa: E402

__all__ = ["bot_pb2", "bot_pb2_grpc"]
