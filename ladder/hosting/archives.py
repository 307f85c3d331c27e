"""A hosted bot's uploaded archive: read, checked and unpacked, for the ladder (on upload) and the bot host
(before each run) alike: both call `read_archive`, and `unpack` writes only what it accepted.

An archive is a .tar.gz (or .tar, .tar.bz2, .tar.xz) or a .zip of regular files and directories only, with
a manifest `caravanserai.json` at its root: `{"runtime": "python" | "node", "entry": "bot.py",
"version": "1.0"}`. Members are streamed in order and refused as soon as a rule is broken, naming the member
and the rule: an archive that is neither kind; one over the size or member-count limits; decompressed bytes
(tar headers included) past the unpacked limit, counted as they are decompressed, so a small archive that
inflates hugely is stopped at the limit; a tar member whose headers (pax extended or GNU long-name headers
included) are over MAX_HEADER_BYTES; zip members counted by their declared sizes before reading and by the
bytes actually read; a name that is not UTF-8, has an absolute path, `..`, a backslash or a control
character, a name part over MAX_NAME_BYTES, a path over MAX_PATH_BYTES or MAX_DEPTH parts; a member twice;
a file where another member needs a directory (`x` beside `x/y`); a symlink, a hardlink, a device, a FIFO
or a sparse file; an encrypted zip member. The manifest (at most MAX_MANIFEST_BYTES, nested at most
MAX_MANIFEST_DEPTH levels, checked before it is parsed) is refused with the field at fault: not JSON, not
an object, a key twice, an unknown runtime, an entry point that is not one of its files, a version that is
empty, too long, or holds a control character or a lone surrogate.

Layer: pure (standard library only): no Django, no settings; the limits are arguments. It writes files only
in `unpack`, and only below the directory it is given; an OS error there is an `UnpackError`.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import hashlib
import io
import json
import lzma
import re
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

MANIFEST = "caravanserai.json"
RUNTIMES = ("python", "node")
MAX_VERSION_LENGTH = 64  # HostedVersion.name's column
MAX_ENTRY_LENGTH = 255  # HostedVersion.entry's column
MAX_NAME_BYTES = 255  # one part of a path (NAME_MAX)
MAX_PATH_BYTES = 1024  # a whole path, far below PATH_MAX once below the host's state directory
MAX_DEPTH = 32
MAX_HEADER_BYTES = 16 * 1024  # a tar member's headers (ustar, pax, GNU long name) before its data
MAX_MANIFEST_BYTES = 64 * 1024
MAX_MANIFEST_DEPTH = 16
_READ_AHEAD = 2 * tarfile.RECORDSIZE  # what tarfile's stream reads beyond what it needs, at most
_CHUNK = 64 * 1024
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f\\]")
_BAD_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")  # control characters, lone surrogates
_SPECIAL = {
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a FIFO",
    tarfile.CONTTYPE: "a contiguous file",
    tarfile.GNUTYPE_SPARSE: "a sparse file",
}


class ArchiveError(ValueError):
    """A refused archive; `field` is the part at fault (archive, manifest, runtime, entry, version)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class UnpackError(ArchiveError):
    """An accepted archive that could not be written where it was to go (an OS error: a full disk, the
    filesystem's own limits): more often the machine's fault than the bot's."""


@dataclass(frozen=True)
class ArchiveLimits:
    max_bytes: int = 2 << 20
    max_unpacked_bytes: int = 16 << 20
    max_files: int = 200

    @property
    def max_stream_bytes(self) -> int:
        """The most decompressed bytes a tar may hold: its files, and headers and padding for each member."""
        return self.max_unpacked_bytes + (self.max_files + 1) * MAX_HEADER_BYTES + _READ_AHEAD


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
    directories: tuple[str, ...] = ()  # the directory members (those holding files are made anyway)

    @property
    def file_count(self) -> int:
        return len(self.files)


def _shown(name: str) -> str:
    """A name as quoted in a message: escaped (no control characters, no lone surrogates), cut if long."""
    return repr(name) if len(name) <= 80 else f"{name[:80]!r}... ({len(name.encode(errors='replace'))} bytes)"


def _clean_name(name: str) -> str | None:
    """The member's relative POSIX path, or None for the archive's root entry; raises on a bad name."""
    shown = _shown(name)
    if _BAD_NAME.search(name):
        raise ArchiveError("archive", f"member {shown} has a backslash or a control character in its name")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ArchiveError("archive", f"member {shown} has a name that is not UTF-8") from None
    path = PurePosixPath(name)
    if name.startswith("/"):
        raise ArchiveError("archive", f"member {shown} has an absolute path")
    if ".." in path.parts:
        raise ArchiveError("archive", f"member {shown} leaves the archive (a '..' in its path)")
    parts = [p for p in path.parts if p not in ("", ".")]
    longest = max((len(p.encode()) for p in parts), default=0)
    if longest > MAX_NAME_BYTES:
        raise ArchiveError(
            "archive", f"member {shown} has a name part of {longest} bytes; the limit is {MAX_NAME_BYTES}"
        )
    clean = "/".join(parts)
    if len(clean.encode()) > MAX_PATH_BYTES or len(parts) > MAX_DEPTH:
        raise ArchiveError(
            "archive",
            f"member {shown} has a path of {len(clean.encode())} bytes in {len(parts)} parts; the limits "
            f"are {MAX_PATH_BYTES} bytes and {MAX_DEPTH} parts",
        )
    return clean or None


class _Entries:
    """The members accepted so far: counted, and placed in one tree with no name twice and no file where a
    directory must be."""

    def __init__(self, limits: ArchiveLimits) -> None:
        self.limits = limits
        self.files: dict[str, bytes] = {}
        self.directories: set[str] = set()  # directory members
        self.parents: set[str] = set()  # every directory a member is or lives in
        self.members = 0
        self.unpacked = 0

    def count(self, name: str) -> str | None:
        self.members += 1
        if self.members > self.limits.max_files:
            raise ArchiveError("archive", f"the archive has more than {self.limits.max_files} members")
        return _clean_name(name)

    def _place(self, name: str) -> None:
        parts = name.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in self.files:
                raise ArchiveError(
                    "archive", f"member {_shown(name)} is below {_shown(parent)}, which is a file"
                )
            self.parents.add(parent)

    def add_directory(self, name: str) -> None:
        if name in self.directories:
            raise ArchiveError("archive", f"member {_shown(name)} appears twice")
        if name in self.files:
            raise ArchiveError("archive", f"member {_shown(name)} is both a file and a directory")
        self._place(name)
        self.directories.add(name)
        self.parents.add(name)

    def reserve(self, name: str, size: int) -> None:
        """Check a file member before reading it: not seen yet, and within the unpacked limit."""
        if name in self.files:
            raise ArchiveError("archive", f"member {_shown(name)} appears twice")
        if name in self.parents:
            raise ArchiveError("archive", f"member {_shown(name)} is both a file and a directory")
        self._place(name)
        self.unpacked += size
        if self.unpacked > self.limits.max_unpacked_bytes:
            raise ArchiveError(
                "archive",
                f"the archive unpacks to more than {self.limits.max_unpacked_bytes} bytes "
                f"(at member {_shown(name)})",
            )
        self.files[name] = b""

    def store(self, name: str, data: bytes) -> None:
        self.files[name] = data


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _read_member(stream: _Readable, size: int, name: str) -> bytes:
    """A member's bytes, read in chunks and counted: exactly `size` of them, or ArchiveError."""
    chunks: list[bytes] = []
    got = 0
    while got <= size:
        chunk = stream.read(min(_CHUNK, size + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    if got != size:
        raise ArchiveError("archive", f"member {_shown(name)} is not the size its header says ({size} bytes)")
    return b"".join(chunks)


class _Budget(io.RawIOBase):
    """A decompressed stream read within limits: `total` bytes in all, and a window that each member sets
    (its data, then the headers of the next member); a read past either raises ArchiveError at once, before
    anything more is decompressed."""

    def __init__(self, raw: _Readable, total: int) -> None:
        super().__init__()
        self.raw = raw
        self.total = total
        self.done = 0
        self.end = total
        self.rule = ""

    def readable(self) -> bool:
        return True

    def window(self, size: int, rule: str) -> None:
        self.end, self.rule = min(self.total, self.done + size), rule

    def read(self, size: int = -1) -> bytes:
        room = self.end - self.done + 1
        data = self.raw.read(room if size < 0 else min(size, room))
        self.done += len(data)
        if self.done > self.end:
            if self.end < self.total:
                raise ArchiveError("archive", self.rule)
            raise ArchiveError(
                "archive", f"the archive unpacks to more than {self.total} bytes, its tar headers included"
            )
        return data


def _decompressed(data: bytes) -> _Readable:
    raw = io.BytesIO(data)
    if data[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if data[:3] == b"BZh":
        return bz2.BZ2File(raw)
    if data[:6] == b"\xfd7zXZ\x00":
        return lzma.LZMAFile(raw)
    return raw


def _headers_rule(where: str) -> str:
    return f"the tar headers {where} are over {MAX_HEADER_BYTES} bytes (a pax or GNU long-name header?)"


def _blocks(size: int) -> int:
    return -(-size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE


def _tar_member(tar: tarfile.TarFile, member: tarfile.TarInfo, entries: _Entries, budget: _Budget) -> None:
    shown = _shown(member.name)
    if member.offset_data - member.offset > MAX_HEADER_BYTES:
        raise ArchiveError("archive", _headers_rule(f"of member {shown}"))
    budget.window(
        _blocks(member.size) + MAX_HEADER_BYTES + _READ_AHEAD, _headers_rule(f"after member {shown}")
    )
    name = entries.count(member.name)
    if member.issym() or member.islnk():
        raise ArchiveError("archive", f"member {shown} is a link; links are refused")
    if member.isdir():
        if name is not None:
            entries.add_directory(name)
        return
    if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE) or member.sparse is not None:
        kind = _SPECIAL.get(member.type, "a sparse file" if member.sparse is not None else "a special file")
        raise ArchiveError("archive", f"member {shown} is {kind}: only regular files and directories")
    if name is None:
        raise ArchiveError("archive", f"member {shown} is a file with no name")
    entries.reserve(name, member.size)
    stream = tar.extractfile(member)
    assert stream is not None  # a regular file's
    entries.store(name, _read_member(stream, member.size, member.name))


_UNREADABLE = (
    EOFError,
    OSError,
    RuntimeError,
    ValueError,
    struct.error,
    zlib.error,
    lzma.LZMAError,
    tarfile.TarError,
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
)


def _read_tar(data: bytes, entries: _Entries) -> None:
    budget = _Budget(_decompressed(data), entries.limits.max_stream_bytes)
    budget.window(MAX_HEADER_BYTES + _READ_AHEAD, _headers_rule("of the first member"))
    try:
        with tarfile.open(fileobj=budget, mode="r|") as tar:
            for member in tar:  # streamed: one header and its data at a time, never seeking back
                _tar_member(tar, member, entries, budget)
    except ArchiveError:
        raise
    except _UNREADABLE as exc:
        raise ArchiveError("archive", f"not a readable tar archive: {exc}") from None


def _zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, entries: _Entries) -> None:
    name = entries.count(info.filename)
    shown = _shown(info.filename)
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise ArchiveError("archive", f"member {shown} is a link; links are refused")
    if info.flag_bits & 0x1:
        raise ArchiveError("archive", f"member {shown} is encrypted")
    if info.is_dir():
        if name is not None:
            entries.add_directory(name)
        return
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: no Unix type (made on Windows)
        raise ArchiveError("archive", f"member {shown} is a special file: only regular files and directories")
    if name is None:
        raise ArchiveError("archive", f"member {shown} is a file with no name")
    entries.reserve(name, info.file_size)  # its declared size, before a byte is inflated
    with archive.open(info) as stream:
        entries.store(name, _read_member(stream, info.file_size, info.filename))  # and the bytes read


def _read_zip(data: bytes, entries: _Entries) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                _zip_member(archive, info, entries)
    except ArchiveError:
        raise
    except _UNREADABLE as exc:
        raise ArchiveError("archive", f"not a readable zip archive: {exc}") from None


def _json_depth(text: str) -> int:
    """How deeply arrays and objects nest in JSON text, read without parsing it (stops past the limit)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_MANIFEST_DEPTH:
                break
        elif char in "]}":
            depth -= 1
    return deepest


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    twice = next((key for key in keys if keys.count(key) > 1), None)
    if twice is not None:
        raise ArchiveError("manifest", f"{MANIFEST} has the key {_shown(twice)} twice")
    return dict(pairs)


def _parse_manifest(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ArchiveError("manifest", f"{MANIFEST} is {len(raw)} bytes; the limit is {MAX_MANIFEST_BYTES}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArchiveError("manifest", f"{MANIFEST} is not UTF-8: {exc}") from None
    if _json_depth(text) > MAX_MANIFEST_DEPTH:
        raise ArchiveError("manifest", f"{MANIFEST} nests deeper than {MAX_MANIFEST_DEPTH} levels")
    try:
        doc = json.loads(text, object_pairs_hook=_unique_keys)
    except ArchiveError:
        raise
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, or a number too long to read
        raise ArchiveError("manifest", f"{MANIFEST} is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ArchiveError("manifest", f"{MANIFEST} must be a JSON object")
    return doc


def _text(field: str, value: object, limit: int) -> str:
    if not isinstance(value, str):
        raise ArchiveError(field, f"{field} must be a string, not {type(value).__name__}")
    if _BAD_TEXT.search(value):
        raise ArchiveError(field, f"{field} must not hold control characters or lone surrogates")
    if not value.strip() or len(value.strip()) > limit:
        raise ArchiveError(field, f"{field} must be a non-empty string of at most {limit} characters")
    return value.strip()


def _entry(value: object, files: dict[str, bytes]) -> str:
    text = _text("entry", value, MAX_ENTRY_LENGTH)
    try:
        entry = _clean_name(text)
    except ArchiveError as exc:
        raise ArchiveError("entry", f"the entry point: {exc.message}") from None
    if entry is None or entry not in files or entry == MANIFEST:
        raise ArchiveError("entry", f"the entry point {_shown(text)} is not a file of the archive")
    return entry


def _manifest(files: dict[str, bytes]) -> Manifest:
    raw = files.get(MANIFEST)
    if raw is None:
        raise ArchiveError("manifest", f"the archive has no {MANIFEST} at its root")
    doc = _parse_manifest(raw)
    runtime = doc.get("runtime")
    if not isinstance(runtime, str) or runtime not in RUNTIMES:
        shown = _shown(runtime) if isinstance(runtime, str) else type(runtime).__name__
        raise ArchiveError("runtime", f"runtime must be one of {', '.join(RUNTIMES)}, not {shown}")
    entry = _entry(doc.get("entry"), files)
    return Manifest(
        runtime=runtime, entry=entry, version=_text("version", doc.get("version"), MAX_VERSION_LENGTH)
    )


def read_archive(data: bytes, limits: ArchiveLimits) -> BotArchive:
    """Check an archive whole, streaming its members; its files, manifest and checksum, or ArchiveError."""
    if len(data) > limits.max_bytes:
        raise ArchiveError("archive", f"the archive is {len(data)} bytes; the limit is {limits.max_bytes}")
    entries = _Entries(limits)
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        _read_zip(data, entries)
    else:
        _read_tar(data, entries)
    return BotArchive(
        files=entries.files,
        manifest=_manifest(entries.files),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        directories=tuple(sorted(entries.directories)),
    )


@contextlib.contextmanager
def _writing(what: str) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise UnpackError("archive", f"could not unpack {what}: {exc.strerror or exc}") from exc


def unpack(archive: BotArchive, target: Path) -> Path:
    """Write what `read_archive` accepted below `target` (made fresh: it must not exist), world-readable,
    read-only for everyone but the host; any OS error is an UnpackError naming the member."""
    with _writing("the archive (its directory)"):
        target.mkdir(parents=True)
        root = target.resolve()
    directories = {root, *(root.joinpath(name) for name in archive.directories)}
    for name in archive.directories:
        with _writing(f"member {_shown(name)}"):
            root.joinpath(name).mkdir(parents=True, exist_ok=True)
    for name, data in sorted(archive.files.items()):
        path = root.joinpath(*PurePosixPath(name).parts)
        if not path.resolve().is_relative_to(root):
            raise ArchiveError("archive", f"member {_shown(name)} leaves the archive")
        with _writing(f"member {_shown(name)}"):
            path.parent.mkdir(parents=True, exist_ok=True)
            directories.update(p for p in path.parents if p.is_relative_to(root))
            with path.open("xb") as handle:  # never one written twice, never through a link
                handle.write(data)
            path.chmod(0o644)
    with _writing("the archive (its permissions)"):
        for directory in directories:
            directory.chmod(0o755)
    return target
