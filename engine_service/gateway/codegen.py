"""Generate the Python gRPC stubs of `protos/` into the git-ignored package `engine_service.gateway._generated`.

Layer: build tooling of the gateway. Stubs are generated at install/build time (`make install` runs
`python -m engine_service.gateway.codegen`), never committed; `ensure_generated()` regenerates them on first
import when they are missing or stale (a digest of the .proto files), so every entry point works from a clean clone.
It must not import the generated modules itself, nor anything of the gateway beyond this file (the pure
`engine_service.settings_env` reads its one variable).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from pathlib import Path

from engine_service.settings_env import env_str

PACKAGE_DIR = Path(__file__).resolve().parent
GENERATED_DIR = PACKAGE_DIR / "_generated"
GENERATED_PACKAGE = "engine_service.gateway._generated"
PROTO_ROOT = Path(env_str(os.environ, "CARAVANSERAI_PROTO_ROOT", str(PACKAGE_DIR.parents[1] / "protos")))
PROTO_FILES = ("caravanserai/bot/v1/bot.proto", "caravanserai/relay/v1/relay.proto")
_STAMP = "STAMP"

_IMPORT = re.compile(r"^from caravanserai\.([\w.]+) import (\w+_pb2)", re.MULTILINE)


class CodegenError(RuntimeError):
    """protoc failed or the .proto files are missing; the message holds protoc's output."""


def _proto_paths() -> list[Path]:
    paths = [PROTO_ROOT / name for name in PROTO_FILES]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise CodegenError(f"missing .proto files: {', '.join(missing)} (set CARAVANSERAI_PROTO_ROOT)")
    return paths


def _up_to_date() -> bool:
    stamp = GENERATED_DIR / _STAMP
    if not stamp.is_file():
        return False
    try:
        _proto_paths()
    except CodegenError:
        return True  # an installed copy without sources: use what was generated at build time
    return stamp.read_text() == _fingerprint()


def _fingerprint() -> str:
    """A digest of the .proto sources and of protoc's version: the stubs are stale when it changes."""
    from importlib.metadata import version

    digest = hashlib.sha256(version("grpcio-tools").encode())
    for name in PROTO_FILES:
        digest.update(name.encode())
        digest.update((PROTO_ROOT / name).read_bytes())
    return digest.hexdigest()


def generate() -> Path:
    """Run protoc (from grpcio-tools) over the .proto files; returns the generated package directory."""
    import importlib.resources

    from grpc_tools import protoc  # build-time dependency only

    paths = _proto_paths()
    include = str(importlib.resources.files("grpc_tools") / "_proto")
    with tempfile.TemporaryDirectory(prefix="caravanserai-codegen-") as tmp:
        args = [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{include}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            *[str(p) for p in paths],
        ]
        code = protoc.main(args)
        if code != 0:
            raise CodegenError(f"protoc exited with {code} for {', '.join(PROTO_FILES)}")
        out = Path(tmp)
        GENERATED_DIR.mkdir(exist_ok=True)
        (GENERATED_DIR / "__init__.py").write_text(
            '"""Generated gRPC stubs (git-ignored; see codegen.py)."""\n'
        )
        for source in sorted(out.rglob("*.py*")):
            rel = source.relative_to(out)
            target = GENERATED_DIR / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            for parent in rel.parents:
                if str(parent) != ".":
                    init = GENERATED_DIR / parent / "__init__.py"
                    if not init.exists():
                        init.write_text("")
            text = _IMPORT.sub(rf"from {GENERATED_PACKAGE}.caravanserai.\1 import \2", source.read_text())
            tmp_target = target.with_suffix(target.suffix + ".tmp")
            tmp_target.write_text(text)
            tmp_target.replace(target)
        (GENERATED_DIR / _STAMP).write_text(_fingerprint())
    return GENERATED_DIR


def ensure_generated() -> None:
    """Generate the stubs unless they are present and match the current .proto files."""
    if not _up_to_date():
        generate()


def main() -> int:
    """Generate the stubs unless they are current (saying so when it does)."""
    if _up_to_date():
        return 0
    try:
        directory = generate()
    except CodegenError as exc:
        print(f"codegen: {exc}", file=sys.stderr)
        return 1
    print(f"generated gRPC stubs for {', '.join(PROTO_FILES)} into {directory}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
