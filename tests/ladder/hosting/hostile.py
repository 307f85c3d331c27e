"""Hostile archives, built here as an attacker would upload them, for the upload, reader and bot host tests
alike: each is a well-formed archive with a manifest and an entry point, plus one member that must get the
whole archive refused. `HOSTILE` maps a case to (the archive, words the refusal must hold)."""

from __future__ import annotations

import functools
import gzip
import io
import json
import tarfile
import zipfile
from collections.abc import Callable, Iterator, Mapping

MANIFEST = json.dumps({"runtime": "python", "entry": "bot.py", "version": "1"}).encode()
BOT_PY = b"print('hello')\n"
PAX_BOMB_BYTES = 64 << 20


def tar_gz(
    members: list[tarfile.TarInfo | tuple[str, bytes]], *, fmt: int = tarfile.PAX_FORMAT, base: bool = True
) -> bytes:
    """A .tar.gz of the manifest and bot.py (unless not `base`), then `members` (a TarInfo as is, or a name
    and its bytes)."""
    buffer = io.BytesIO()
    first: list[tarfile.TarInfo | tuple[str, bytes]] = [("caravanserai.json", MANIFEST), ("bot.py", BOT_PY)]
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as tar:
        for member in [*(first if base else []), *members]:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
                continue
            info = tarfile.TarInfo(member[0])
            info.size = len(member[1])
            tar.addfile(info, io.BytesIO(member[1]))
    return gzip.compress(buffer.getvalue(), compresslevel=9, mtime=0)


def special(name: str, kind: bytes, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@functools.cache
def pax_bomb() -> bytes:
    """A 64 MiB pax extended header (a comment record) before a one-byte member: about 65 KB gzipped."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in (("caravanserai.json", MANIFEST), ("bot.py", BOT_PY)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("after-the-bomb.txt")
        info.size = 1
        info.pax_headers = {"comment": "x" * PAX_BOMB_BYTES}
        tar.addfile(info, io.BytesIO(b"y"))
    return gzip.compress(buffer.getvalue(), compresslevel=9, mtime=0)


@functools.cache
def zip_bomb() -> bytes:
    """100 MiB of zeros deflated to about 100 KB, honestly declared."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("caravanserai.json", MANIFEST)
        archive.writestr("bot.py", BOT_PY)
        archive.writestr("zeros.bin", b"\0" * (100 << 20))
    return buffer.getvalue()


def deep_path() -> str:
    return "/".join(["d" * 200, *["d" * 199] * 24])  # 5000 bytes in 25 parts


CASES: dict[str, tuple[Callable[[], bytes], tuple[str, ...]]] = {
    "file beside a directory": (
        lambda: tar_gz([("x", b"1"), ("x/y", b"2")]),
        ("'x/y'", "'x'", "which is a file"),
    ),
    "directory beside a file": (
        lambda: tar_gz([("x/y", b"1"), ("x", b"2")]),
        ("'x'", "both a file and a directory"),
    ),
    "300-byte name": (lambda: tar_gz([("n" * 300, b"1")]), ("'nnnn", "300 bytes", "255")),
    "300-byte GNU long name": (
        lambda: tar_gz([("g" * 300, b"1")], fmt=tarfile.GNU_FORMAT),
        ("'gggg", "300 bytes", "255"),
    ),
    "5000-byte path": (lambda: tar_gz([(deep_path(), b"1")]), ("'dddd", "5000 bytes", "1024")),
    "pax header bomb": (pax_bomb, ("after member 'bot.py'", "headers", "16384")),
    "zip bomb": (zip_bomb, ("'zeros.bin'", "unpacks to more than")),
    "symlink": (lambda: tar_gz([special("evil", tarfile.SYMTYPE, "/etc/passwd")]), ("'evil'", "link")),
    "hardlink": (lambda: tar_gz([special("hard", tarfile.LNKTYPE, "bot.py")]), ("'hard'", "link")),
    "device": (lambda: tar_gz([special("null", tarfile.CHRTYPE)]), ("'null'", "character device")),
    "fifo": (lambda: tar_gz([special("pipe", tarfile.FIFOTYPE)]), ("'pipe'", "FIFO")),
    "duplicate": (lambda: tar_gz([("bot.py", b"# again\n")]), ("'bot.py'", "twice")),
}


class _Hostile(Mapping[str, tuple[bytes, tuple[str, ...]]]):
    """CASES with each archive built on first use: every test process imports this module (the tests are
    parametrized by its names), and the two bombs take most of a second to build."""

    def __getitem__(self, case: str) -> tuple[bytes, tuple[str, ...]]:
        return _built(case), CASES[case][1]

    def __iter__(self) -> Iterator[str]:
        return iter(CASES)

    def __len__(self) -> int:
        return len(CASES)


@functools.cache
def _built(case: str) -> bytes:
    return CASES[case][0]()


HOSTILE = _Hostile()
