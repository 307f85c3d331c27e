"""A hosted bot's uploaded archive: read, checked and unpacked, for the ladder (on upload) and the bot host
(before each run) alike.

An archive is a .tar.gz (or .tar) or a .zip of regular files and directories only, with a manifest
`caravanserai.json` at its root: `{"runtime": "python" | "node", "entry": "bot.py", "version": "1.0"}`.
Refused, with the reason: an archive that is neither, one over the size or file-count limits (compressed
or unpacked), a member with an absolute path, `..`, a backslash or a control character, a duplicate
member, a symlink, a hardlink, a device or a FIFO, an encrypted zip member, a missing or malformed
manifest, an unknown runtime, or an entry point that is not one of its files.

Layer: pure (standard library only): no Django, no settings; the limits are arguments. It writes files only
in `unpack`, and only below the directory it is given.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MANIFEST = "caravanserai.json"
RUNTIMES = ("python", "node")
MAX_VERSION_LENGTH = 64
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f\\]")


class ArchiveError(ValueError):
    """A refused archive; `field` is the part at fault (archive, manifest, runtime, entry, version)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class ArchiveLimits:
    max_bytes: int = 2 << 20
    max_unpacked_bytes: int = 16 << 20
    max_files: int = 200


@dataclass(frozen=True)
class Manifest:
    runtime: str
    entry: str
    version: str


@dataclass(frozen=True)
class BotArchive:
    files: dict[str, bytes]
    manifest: Manifest
    sha256: str
    size: int

    @property
    def file_count(self) -> int:
        return len(self.files)


def _clean_name(name: str) -> str | None:
    """The member's relative POSIX path, or None for the archive's root entry; raises on a bad name."""
    if _BAD_NAME.search(name):
        raise ArchiveError("archive", f"member {name!r} has a backslash or a control character in its name")
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("/"):
        raise ArchiveError("archive", f"member {name!r} has an absolute path")
    if ".." in path.parts:
        raise ArchiveError("archive", f"member {name!r} leaves the archive (a '..' in its path)")
    parts = [p for p in path.parts if p not in ("", ".")]
    return "/".join(parts) if parts else None


class _Collector:
    def __init__(self, limits: ArchiveLimits) -> None:
        self.limits = limits
        self.files: dict[str, bytes] = {}
        self.total = 0
        self.members = 0

    def count(self, name: str) -> str | None:
        self.members += 1
        if self.members > self.limits.max_files:
            raise ArchiveError("archive", f"the archive has more than {self.limits.max_files} members")
        return _clean_name(name)

    def reserve(self, name: str, size: int) -> None:
        """Check a file member before reading it: not seen yet, and within the unpacked limit."""
        if name in self.files:
            raise ArchiveError("archive", f"member {name!r} appears twice")
        self.total += size
        if self.total > self.limits.max_unpacked_bytes:
            raise ArchiveError(
                "archive", f"the archive unpacks to more than {self.limits.max_unpacked_bytes} bytes"
            )

    def store(self, name: str, size: int, data: bytes) -> None:
        if len(data) != size:
            raise ArchiveError("archive", f"member {name!r} is not the size its header says")
        self.files[name] = data


def _read_tar(data: bytes, collector: _Collector) -> None:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for member in tar:
                name = collector.count(member.name)
                if member.issym() or member.islnk():
                    raise ArchiveError("archive", f"member {member.name!r} is a link; links are refused")
                if member.isdir() or name is None:
                    continue
                if not member.isfile():
                    raise ArchiveError("archive", f"member {member.name!r} is not a regular file")
                stream = tar.extractfile(member)
                assert stream is not None
                collector.reserve(name, member.size)
                collector.store(name, member.size, stream.read(member.size + 1))
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveError("archive", f"not a readable tar archive: {exc}") from None


def _read_zip(data: bytes, collector: _Collector) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                name = collector.count(info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise ArchiveError("archive", f"member {info.filename!r} is a link; links are refused")
                if info.flag_bits & 0x1:
                    raise ArchiveError("archive", f"member {info.filename!r} is encrypted")
                if info.is_dir() or name is None:
                    continue
                if stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: no Unix type (made on Windows)
                    raise ArchiveError("archive", f"member {info.filename!r} is not a regular file")
                collector.reserve(name, info.file_size)
                collector.store(name, info.file_size, archive.read(info))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, RuntimeError) as exc:
        raise ArchiveError("archive", f"not a readable zip archive: {exc}") from None


def _manifest(files: dict[str, bytes]) -> Manifest:
    raw = files.get(MANIFEST)
    if raw is None:
        raise ArchiveError("manifest", f"the archive has no {MANIFEST} at its root")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ArchiveError("manifest", f"{MANIFEST} is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ArchiveError("manifest", f"{MANIFEST} must be a JSON object")
    runtime, entry, version = doc.get("runtime"), doc.get("entry"), doc.get("version")
    if runtime not in RUNTIMES:
        raise ArchiveError("runtime", f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
    if not isinstance(entry, str) or _clean_name(entry) not in files or _clean_name(entry) == MANIFEST:
        raise ArchiveError("entry", f"the entry point {entry!r} is not a file of the archive")
    if not isinstance(version, str) or not version.strip() or len(version.strip()) > MAX_VERSION_LENGTH:
        raise ArchiveError(
            "version", f"version must be a non-empty string of at most {MAX_VERSION_LENGTH} characters"
        )
    return Manifest(runtime=runtime, entry=str(_clean_name(entry)), version=version.strip())


def read_archive(data: bytes, limits: ArchiveLimits) -> BotArchive:
    """Check an uploaded archive whole; its files, manifest and checksum, or ArchiveError."""
    if len(data) > limits.max_bytes:
        raise ArchiveError("archive", f"the archive is {len(data)} bytes; the limit is {limits.max_bytes}")
    collector = _Collector(limits)
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        _read_zip(data, collector)
    else:
        _read_tar(data, collector)
    manifest = _manifest(collector.files)
    return BotArchive(
        files=collector.files, manifest=manifest, sha256=hashlib.sha256(data).hexdigest(), size=len(data)
    )


def unpack(archive: BotArchive, target: Path) -> Path:
    """Write the archive's files below `target` (made fresh: it must not exist), world-readable, read-only
    for everyone but the host."""
    target.mkdir(parents=True)
    for name, data in sorted(archive.files.items()):
        path = target.joinpath(*PurePosixPath(name).parts)
        if not path.resolve().is_relative_to(target.resolve()):
            raise ArchiveError("archive", f"member {name!r} leaves the archive")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o644)
    for directory in [target, *[p for p in target.rglob("*") if p.is_dir()]]:
        directory.chmod(0o755)
    return target
