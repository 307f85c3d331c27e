"""The .proto files pass `buf lint`, break nothing against the last release, and set the language options.

The last release: there is no release tag yet, so it is the first commit of the current .proto files
(`RELEASE`, "Bot protocol v1 and internal relay protos ..."). When a release is tagged, put the tag here.
buf is the version the Makefile pins (`BUF_VERSION`), installed into the git-ignored `.venv/buf` by
`make install`, or here on first use.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PROTOS = ROOT / "protos"
BUF = ROOT / ".venv" / "buf" / "node_modules" / ".bin" / "buf"
RELEASE = "a61eb2e126d3e376b361f9b159658a71795d537a"
OPTIONS = {
    "bot": {
        "csharp_namespace": '"Caravanserai.Bot.V1"',
        "go_package": '"github.com/caravanserai/caravanserai/gen/go/caravanserai/bot/v1;botv1"',
        "java_multiple_files": "true",
        "java_outer_classname": '"BotProto"',
        "java_package": '"com.caravanserai.bot.v1"',
        "objc_class_prefix": '"CBX"',
        "php_namespace": '"Caravanserai\\\\Bot\\\\V1"',
        "ruby_package": '"Caravanserai::Bot::V1"',
        "swift_prefix": '"CBX"',
    },
    "relay": {
        "csharp_namespace": '"Caravanserai.Relay.V1"',
        "go_package": '"github.com/caravanserai/caravanserai/gen/go/caravanserai/relay/v1;relayv1"',
        "java_multiple_files": "true",
        "java_outer_classname": '"RelayProto"',
        "java_package": '"com.caravanserai.relay.v1"',
        "objc_class_prefix": '"CRX"',
        "php_namespace": '"Caravanserai\\\\Relay\\\\V1"',
        "ruby_package": '"Caravanserai::Relay::V1"',
        "swift_prefix": '"CRX"',
    },
}


@pytest.fixture(scope="module")
def buf() -> Path:
    version = re.search(r"^BUF_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert version, "the Makefile pins BUF_VERSION"
    package = BUF.parents[1] / "@bufbuild" / "buf" / "package.json"
    if not (package.is_file() and f'"version": "{version.group(1)}"' in package.read_text()):
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed: buf cannot be installed")
        flags = [
            "--prefix",
            str(ROOT / ".venv" / "buf"),
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--loglevel=error",
        ]
        subprocess.run(
            ["npm", "install", *flags, f"@bufbuild/buf@{version.group(1)}"],
            check=True,
            timeout=300,
            capture_output=True,
        )
    return BUF


def _buf(buf: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(buf), *args], cwd=PROTOS, capture_output=True, text=True, timeout=120)


def test_buf_lint(buf: Path) -> None:
    result = _buf(buf, "lint")
    assert result.returncode == 0, result.stdout + result.stderr


def test_buf_breaking_against_the_last_release(buf: Path) -> None:
    result = _buf(buf, "breaking", "--against", f"{ROOT / '.git'}#ref={RELEASE},subdir=protos")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_proto_sets_the_language_options() -> None:
    for name, expected in OPTIONS.items():
        text = (PROTOS / "caravanserai" / name / "v1" / f"{name}.proto").read_text()
        found = dict(re.findall(r"^option (\w+) = (.+);$", text, re.MULTILINE))
        assert found == expected, name
