"""Uploading hosted versions over REST: a good archive becomes an immutable, checksummed version with
lineage; each kind of bad archive is a 400 naming the problem, with nothing stored."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from collections.abc import Callable

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from ladder.bots.models import Bot, BotVersion
from ladder.hosting.models import HostedBot, HostedVersion

pytestmark = pytest.mark.django_db
BOT_PY = "print('hello')\n"


def manifest(runtime: str = "python", entry: str = "bot.py", version: str = "1.0") -> str:
    return json.dumps({"runtime": runtime, "entry": entry, "version": version})


def tar_gz(members: list[tarfile.TarInfo | tuple[str, str]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
                continue
            name, text = member
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return buffer.getvalue()


def good(version: str = "1.0", runtime: str = "python") -> bytes:
    return tar_gz([("caravanserai.json", manifest(runtime=runtime, version=version)), ("bot.py", BOT_PY)])


def zipped(files: dict[str, str], symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        if symlink is not None:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (0o120777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def link(name: str, kind: bytes, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def upload(client: APIClient, bot: Bot, data: bytes, name: str = "bot.tar.gz"):  # type: ignore[no-untyped-def]
    return client.post(
        f"/api/v1/bots/{bot.pk}/hosted/versions/",
        {"archive": SimpleUploadedFile(name, data)},
        format="multipart",
    )


def test_an_upload_is_a_checksummed_version_with_lineage(
    alice_api: APIClient, make_bot: Callable[..., Bot]
) -> None:
    bot = make_bot()
    first = upload(alice_api, bot, good("1.0"))
    assert first.status_code == 201, first.json()
    data = good("1.1")
    second = upload(alice_api, bot, data)
    assert second.status_code == 201
    body = second.json()
    assert body["sha256"] == hashlib.sha256(data).hexdigest() and body["parent"] == "1.0"
    assert (body["runtime"], body["entry"], body["file_count"]) == ("python", "bot.py", 2)
    stored = HostedVersion.objects.get(pk=body["id"])
    assert bytes(stored.archive) == data
    assert HostedBot.objects.get(bot=bot).version == stored  # the new version is the one hosted
    versions = {v.name: v for v in BotVersion.objects.filter(bot=bot)}
    assert versions["1.1"].parent == versions["1.0"]  # the ratings' lineage too
    listed = alice_api.get(f"/api/v1/bots/{bot.pk}/hosted/versions/").json()
    assert [v["name"] for v in listed] == ["1.0", "1.1"] and "archive" not in listed[0]


def test_a_zip_and_a_node_bot_are_accepted(alice_api: APIClient, make_bot: Callable[..., Bot]) -> None:
    bot = make_bot()
    data = zipped({"caravanserai.json": manifest(runtime="node", entry="src/bot.js"), "src/bot.js": "1;"})
    response = upload(alice_api, bot, data, name="bot.zip")
    assert response.status_code == 201, response.json()
    assert response.json()["entry"] == "src/bot.js"


BAD = {
    "path traversal": (
        tar_gz([("caravanserai.json", manifest()), ("bot.py", BOT_PY), ("../evil.py", "x")]),
        "leaves",
    ),
    "absolute path": (
        tar_gz([("caravanserai.json", manifest()), ("bot.py", BOT_PY), ("/etc/cron.d/x", "x")]),
        "absolute",
    ),
    "symlink": (
        tar_gz([("caravanserai.json", manifest()), link("bot.py", tarfile.SYMTYPE, "/etc/passwd")]),
        "link",
    ),
    "hardlink": (
        tar_gz([("caravanserai.json", manifest()), ("a.py", "x"), link("bot.py", tarfile.LNKTYPE, "a.py")]),
        "link",
    ),
    "device": (
        tar_gz([("caravanserai.json", manifest()), ("bot.py", BOT_PY), link("null", tarfile.CHRTYPE, "")]),
        "regular file",
    ),
    "zip symlink": (zipped({"caravanserai.json": manifest(), "bot.py": BOT_PY}, symlink="evil"), "link"),
    "zip traversal": (zipped({"caravanserai.json": manifest(), "bot.py": BOT_PY, "../../x": "x"}), "leaves"),
    "missing entry point": (
        tar_gz([("caravanserai.json", manifest(entry="main.py")), ("bot.py", BOT_PY)]),
        "entry point",
    ),
    "unknown runtime": (
        tar_gz([("caravanserai.json", manifest(runtime="ruby")), ("bot.py", BOT_PY)]),
        "runtime",
    ),
    "no manifest": (tar_gz([("bot.py", BOT_PY)]), "caravanserai.json"),
    "manifest not json": (tar_gz([("caravanserai.json", "{runtime"), ("bot.py", BOT_PY)]), "not JSON"),
    "not an archive": (b"just some bytes, no archive here", "not a readable"),
    "too many files": (
        tar_gz([("caravanserai.json", manifest()), ("bot.py", BOT_PY), *[(f"f{i}", "x") for i in range(10)]]),
        "more than",
    ),
    "oversize": (good() + b"\0" * 5000, "limit"),
    "unpacks too large": (
        tar_gz([("caravanserai.json", manifest()), ("bot.py", BOT_PY), ("big", "x" * 40_000)]),
        "unpacks",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_archive_is_refused_and_nothing_is_stored(
    case: str, alice_api: APIClient, make_bot: Callable[..., Bot], settings
) -> None:
    settings.HOSTING_ARCHIVE_MAX_FILES = 8
    settings.HOSTING_ARCHIVE_MAX_BYTES = len(good()) + 2000
    settings.HOSTING_ARCHIVE_MAX_UNPACKED_BYTES = 20_000
    bot = make_bot()
    data, reason = BAD[case]
    response = upload(alice_api, bot, data)
    assert response.status_code == 400, response.json()
    assert reason in response.json()["detail"]
    assert not HostedVersion.objects.exists() and not HostedBot.objects.exists()
    assert not BotVersion.objects.filter(bot=bot).exists()


def test_a_version_name_is_used_once(alice_api: APIClient, make_bot: Callable[..., Bot]) -> None:
    bot = make_bot()
    assert upload(alice_api, bot, good("2.0")).status_code == 201
    again = upload(
        alice_api, bot, tar_gz([("caravanserai.json", manifest(version="2.0")), ("bot.py", "# changed\n")])
    )
    assert again.status_code == 400 and "immutable" in again.json()["detail"]
    assert HostedVersion.objects.count() == 1


def test_only_the_owner_uploads(api: APIClient, bob_api: APIClient, make_bot: Callable[..., Bot]) -> None:
    bot = make_bot()
    assert upload(bob_api, bot, good()).status_code == 403
    assert upload(api, bot, good()).status_code in (401, 403)
    assert upload(bob_api, bot, b"").status_code == 403
    missing = bob_api.post(f"/api/v1/bots/{bot.pk}/hosted/versions/", {}, format="multipart")
    assert missing.status_code == 400
    assert not HostedVersion.objects.exists()
