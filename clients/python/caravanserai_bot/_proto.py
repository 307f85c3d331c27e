"""The generated stubs of the bot protocol, generated on first import when missing (never committed).

The .proto file is found in, in order: $CARAVANSERAI_PROTO_ROOT, the copy packaged into a built wheel
(`caravanserai_bot/protos/`), the repository checkout (`protos/` three levels up). Generation itself is
`_codegen.py`'s (`make install` runs it ahead, so a checkout's first import finds the stubs current).
"""

from __future__ import annotations

import os
from pathlib import Path

from caravanserai_bot._codegen import PACKAGE_DIR, PROTO, generate, is_current


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


def ensure_generated() -> None:
    stamp = PACKAGE_DIR / "_generated" / "STAMP"
    try:
        root = proto_root()
    except FileNotFoundError:
        if stamp.is_file():
            return  # a built wheel without sources: its stubs were generated at build time
        raise
    if not is_current(root):
        generate(root)


ensure_generated()

from caravanserai_bot._generated.caravanserai.bot.v1 import bot_pb2, bot_pb2_grpc  # noqa: E402

__all__ = ["bot_pb2", "bot_pb2_grpc"]
