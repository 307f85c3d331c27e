"""The hosted example bots: the SDK's Python random bot and the Node example, and the hostile Python bot of
the demo (`hostile_bot.py`: it spins, forks and allocates in its sandbox, and plays), each packed with a
manifest into the archive an owner would upload (deterministic bytes: the same sources give the same
sha256).

Layer: bot host examples (used by `make demo` and the tests); standard library only.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {
    "python": (ROOT / "clients" / "python" / "examples" / "random_bot.py", "bot.py"),
    "node": (ROOT / "clients" / "node" / "bot.js", "bot.js"),
}
VERSION = "1"  # what both examples report as bot_version in Hello


def example_archive(runtime: str) -> bytes:
    """The example for `runtime` as a .tar.gz: its source as the entry point and caravanserai.json."""
    source, entry = SOURCES[runtime]
    manifest = {"runtime": runtime, "entry": entry, "version": VERSION}
    return pack({"caravanserai.json": json.dumps(manifest).encode(), entry: source.read_bytes()})


def hostile_archive() -> bytes:
    """The hostile example (`hostile_bot.py`, runtime python) as a .tar.gz, as `example_archive` packs."""
    manifest = {"runtime": "python", "entry": "bot.py", "version": VERSION}
    source = Path(__file__).resolve().parent / "hostile_bot.py"
    return pack({"caravanserai.json": json.dumps(manifest).encode(), "bot.py": source.read_bytes()})


def pack(files: dict[str, bytes]) -> bytes:
    """Regular files as a .tar.gz, in name order, with no timestamps: the same files give the same bytes."""
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(plain.getvalue(), mtime=0)
