"""The archive reader and unpacker on their own (pure): bombs are stopped after a bounded number of
decompressed bytes, header chains cannot recurse, and `unpack` writes exactly what was accepted, turning an
OS error into an UnpackError that names the member."""

from __future__ import annotations

import gzip
import io
import stat
import struct
import tarfile
import zipfile
from pathlib import Path

import pytest

from ladder.hosting import archives
from ladder.hosting.archives import (
    MAX_HEADER_BYTES,
    ArchiveError,
    ArchiveLimits,
    BotArchive,
    Manifest,
    UnpackError,
    read_archive,
    unpack,
)
from tests.ladder.hosting.hostile import BOT_PY, MANIFEST, PAX_BOMB_BYTES, pax_bomb, special, tar_gz


class Counting:
    """The decompressed stream the reader gets, counting what it was given."""

    def __init__(self, inner: archives._Readable) -> None:
        self.inner = inner
        self.given = 0

    def read(self, size: int = -1, /) -> bytes:
        data = self.inner.read(size)
        self.given += len(data)
        return data


def test_a_pax_header_bomb_is_stopped_after_a_bounded_read(monkeypatch: pytest.MonkeyPatch) -> None:
    streams: list[Counting] = []
    decompressed = archives._decompressed

    def counted(data: bytes) -> Counting:
        streams.append(Counting(decompressed(data)))
        return streams[-1]

    monkeypatch.setattr(archives, "_decompressed", counted)
    with pytest.raises(ArchiveError, match=r"headers after member 'bot.py' are over 16384 bytes"):
        read_archive(pax_bomb(), ArchiveLimits())
    # the first record (the manifest and bot.py), bot.py's block, one member's header allowance and
    # tarfile's read-ahead: 47617 bytes of the 64 MiB
    assert streams[0].given <= 3 * tarfile.RECORDSIZE + tarfile.BLOCKSIZE + MAX_HEADER_BYTES + 1
    assert streams[0].given < PAX_BOMB_BYTES / 1000


def pax_block(records: bytes) -> bytes:
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, len(records)
    return header.tobuf(format=tarfile.USTAR_FORMAT) + records + b"\0" * (-len(records) % 512)


def file_block(name: str, data: bytes) -> bytes:
    header = tarfile.TarInfo(name)
    header.size = len(data)
    return header.tobuf(format=tarfile.USTAR_FORMAT) + data + b"\0" * (-len(data) % 512)


@pytest.mark.parametrize("headers", [20, 5000])
def test_a_chain_of_pax_headers_is_refused_not_recursed(headers: int) -> None:
    chain = pax_block(b"20 comment=abcdefgh\n") * headers  # each one applies to the next: tarfile recurses
    body = file_block("caravanserai.json", MANIFEST) + file_block("bot.py", BOT_PY) + chain
    with pytest.raises(ArchiveError, match=r"tar headers .* are over 16384 bytes"):
        read_archive(gzip.compress(body + file_block("c.py", b"1") + b"\0" * 1024), ArchiveLimits())


def lying_zip() -> bytes:
    """A member of 50 MiB of zeros whose headers say it holds 1000 bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("caravanserai.json", MANIFEST)
        archive.writestr("bot.py", BOT_PY)
        archive.writestr("zeros.bin", b"\0" * (50 << 20))
    data = bytearray(buffer.getvalue())
    local = [i for i in range(len(data)) if data.startswith(b"PK\x03\x04", i)][2]
    central = [i for i in range(len(data)) if data.startswith(b"PK\x01\x02", i)][2]
    struct.pack_into("<I", data, local + 22, 1000)
    struct.pack_into("<I", data, central + 24, 1000)
    return bytes(data)


def test_a_zip_member_holding_more_than_it_declares_is_refused() -> None:
    with pytest.raises(ArchiveError, match=r"zeros\.bin"):
        read_archive(lying_zip(), ArchiveLimits())


def test_a_tar_over_the_decompressed_limit_is_refused_while_streaming() -> None:
    limits = ArchiveLimits(max_unpacked_bytes=4096, max_files=4)
    many = tar_gz([special("d", tarfile.DIRTYPE)] + [special(f"d{i}", tarfile.DIRTYPE) for i in range(3)])
    with pytest.raises(ArchiveError, match="more than 4 members"):
        read_archive(many, limits)
    with pytest.raises(ArchiveError, match="unpacks to more than 4096 bytes"):
        read_archive(tar_gz([("big.bin", b"z" * 5000)]), limits)


def accepted() -> BotArchive:
    data = tar_gz([special("lib", tarfile.DIRTYPE), ("lib/a.py", b"A\n"), special("empty", tarfile.DIRTYPE)])
    return read_archive(data, ArchiveLimits())


def test_unpack_writes_exactly_what_was_accepted(tmp_path: Path) -> None:
    archive = accepted()
    assert archive.directories == ("empty", "lib") and sorted(archive.files) == [
        "bot.py",
        "caravanserai.json",
        "lib/a.py",
    ]
    target = unpack(archive, tmp_path / "v")
    found = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    assert found == ["bot.py", "caravanserai.json", "empty", "lib", "lib/a.py"]
    assert (target / "lib" / "a.py").read_bytes() == b"A\n"
    assert stat.S_IMODE((target / "bot.py").stat().st_mode) == 0o644
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o755 for p in (target, target / "lib", target / "empty"))


def test_an_os_error_while_unpacking_is_an_unpack_error_naming_the_member(tmp_path: Path) -> None:
    (tmp_path / "v").mkdir()
    with pytest.raises(UnpackError, match="could not unpack the archive"):
        unpack(accepted(), tmp_path / "v")  # the target must be new
    manifest = Manifest(runtime="python", entry="bot.py", version="1")
    unwritable = BotArchive(files={"bot.py": b"", "n" * 300: b""}, manifest=manifest, sha256="0", size=0)
    with pytest.raises(UnpackError, match=r"could not unpack member 'nnnn.*File name too long"):
        unpack(unwritable, tmp_path / "w")  # not one `read_archive` gives: its names are checked
