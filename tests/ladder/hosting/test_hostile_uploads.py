"""Uploads an attacker would try, over REST with the default limits: archives the host could not unpack (a
file beside a directory, over-long names and paths), a pax header bomb, a zip bomb, links, devices and a
member twice; manifests nested deeply, with a NUL or a lone surrogate, or with the wrong types. Each is a 400
`{"detail", "errors"}` naming the member or the manifest field, and nothing is stored."""

from __future__ import annotations

import json
import tarfile
from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from ladder.bots.models import Bot, BotVersion
from ladder.hosting.models import HostedBot, HostedVersion
from tests.ladder.hosting.hostile import BOT_PY, HOSTILE, special, tar_gz
from tests.ladder.hosting.test_uploads import upload

pytestmark = pytest.mark.django_db


def nothing_stored(bot: Bot) -> bool:
    return not (
        HostedVersion.objects.exists()
        or HostedBot.objects.exists()
        or BotVersion.objects.filter(bot=bot).exists()
    )


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_archive_is_refused_naming_the_member(
    case: str, alice_api: APIClient, make_bot: Callable[..., Bot]
) -> None:
    bot = make_bot()
    data, words = HOSTILE[case]
    response = upload(alice_api, bot, data)
    assert response.status_code == 400, response.content
    body = response.json()
    assert all(word in body["detail"] for word in words), body
    assert body["errors"] == {"archive": [body["detail"]]}
    assert nothing_stored(bot)


def manifest_archive(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return tar_gz([("caravanserai.json", raw), ("bot.py", BOT_PY)], base=False)


FIELDS = '"runtime": "python", "entry": "bot.py"'
MANIFESTS = {
    "deep JSON": ('{"runtime": "python", "x": ' + "[" * 30_000 + "]" * 30_000 + "}", "manifest", "deeper"),
    "NUL in the version": ("{" + FIELDS + ', "version": "1\\u0000"}', "version", "control characters"),
    "raw NUL in the version": ("{" + FIELDS + ', "version": "1\x00"}', "manifest", "not JSON"),
    "lone surrogate in the version": ("{" + FIELDS + ', "version": "\\ud800"}', "version", "lone surrogates"),
    "lone surrogate in the entry": (
        '{"runtime": "python", "entry": "\\udcff.py", "version": "1"}',
        "entry",
        "lone surrogates",
    ),
    "NUL in the entry": (
        '{"runtime": "python", "entry": "bot.py\\u0000", "version": "1"}',
        "entry",
        "control",
    ),
    "version a number": ("{" + FIELDS + ', "version": 1}', "version", "must be a string, not int"),
    "version a list": ("{" + FIELDS + ', "version": ["1"]}', "version", "must be a string, not list"),
    "entry an object": ('{"runtime": "python", "entry": {}, "version": "1"}', "entry", "not dict"),
    "runtime a list": ('{"runtime": ["python"], "entry": "bot.py", "version": "1"}', "runtime", "not list"),
    "a key twice": ("{" + FIELDS + ', "version": "1", "version": "2"}', "manifest", "'version' twice"),
    "a number too long": (
        "{" + FIELDS + ', "version": "1", "n": ' + "9" * 5000 + "}",
        "manifest",
        "not JSON",
    ),
    "not an object": ('["python", "bot.py", "1"]', "manifest", "JSON object"),
    "entry leaving the archive": (
        '{"runtime": "python", "entry": "../bot.py", "version": "1"}',
        "entry",
        "..",
    ),
    "entry too long": (
        json.dumps({"runtime": "python", "entry": "e" * 300, "version": "1"}),
        "entry",
        "at most 255",
    ),
    "version too long": ("{" + FIELDS + ', "version": "' + "v" * 65 + '"}', "version", "at most 64"),
    "manifest not UTF-8": (
        b'{"runtime": "python", "entry": "bot.py", "version": "\xff"}',
        "manifest",
        "UTF-8",
    ),
}


@pytest.mark.parametrize("case", sorted(MANIFESTS))
def test_every_manifest_error_is_a_400_naming_the_field(
    case: str, alice_api: APIClient, make_bot: Callable[..., Bot]
) -> None:
    bot = make_bot()
    text, field, words = MANIFESTS[case]
    response = upload(alice_api, bot, manifest_archive(text))
    assert response.status_code == 400, response.content
    body = response.json()
    assert list(body["errors"]) == [field] and words in body["detail"], body
    assert nothing_stored(bot)


def test_a_member_name_that_is_not_utf8_is_refused(
    alice_api: APIClient, make_bot: Callable[..., Bot]
) -> None:
    bot = make_bot()
    data = tar_gz([("caf\udce9.py", b"1")])  # a raw 0xe9 byte in a ustar name, as tarfile writes it
    response = upload(alice_api, bot, data)
    assert response.status_code == 400 and "not UTF-8" in response.json()["detail"], response.content
    assert nothing_stored(bot)


def test_directories_and_nested_files_are_accepted(
    alice_api: APIClient, make_bot: Callable[..., Bot]
) -> None:
    bot = make_bot()
    lib = special("lib", tarfile.DIRTYPE)
    data = tar_gz(
        [
            lib,
            ("lib/util.py", b"X = 1\n"),
            ("./lib/sub/more.py", b"Y = 2\n"),
            special("empty", tarfile.DIRTYPE),
        ]
    )
    response = upload(alice_api, bot, data)
    assert response.status_code == 201, response.content
    assert response.json()["file_count"] == 4  # files only: the directories are not counted
