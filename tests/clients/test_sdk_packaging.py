"""The Python SDK's packaging: a wheel carries bot.proto and the stubs generated from it (which import), and an
editable build (what `make install` runs) finishes without setuptools' "Customization incompatible with
editable install" warning or a traceback; the stub generator run by path (as install-extras.sh does)
generates once, then reports nothing to do. Built from a copy of the SDK, so the checkout is untouched."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "python"
PROTO = "caravanserai/bot/v1/bot.proto"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout's layout with only the SDK and the protos: <tmp>/clients/python and <tmp>/protos."""
    sdk = tmp_path / "clients" / "python"
    shutil.copytree(
        SDK, sdk, ignore=shutil.ignore_patterns("_generated", "build", "*.egg-info", "__pycache__")
    )
    shutil.copytree(ROOT / "protos", tmp_path / "protos")
    return sdk


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_a_wheel_carries_the_proto_and_importable_stubs(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "wheels"
    run(
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(out),
        ".",
        cwd=checkout,
    )
    (wheel,) = out.glob("caravanserai_bot-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    stubs = "caravanserai_bot/_generated/caravanserai/bot/v1/"
    assert {f"caravanserai_bot/protos/{PROTO}", f"{stubs}bot_pb2.py", f"{stubs}bot_pb2_grpc.py"} <= names
    assert "caravanserai_bot/_generated/STAMP" in names
    unpacked = tmp_path / "unpacked"
    zipfile.ZipFile(wheel).extractall(unpacked)
    code = "from caravanserai_bot._proto import bot_pb2; print(bot_pb2.DESCRIPTOR.package)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(unpacked), "PATH": ""},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "caravanserai.bot.v1"


def test_an_editable_build_is_quiet_and_the_generator_runs_once(checkout: Path, tmp_path: Path) -> None:
    code = (
        "import sys, warnings; warnings.simplefilter('always')\n"
        # as on a fresh clone: the SDK is not installed yet (drop this venv's editable finder for it)
        "sys.meta_path[:] = [f for f in sys.meta_path if 'caravanserai_bot' not in getattr(f, '__module__', '')]\n"
        "from setuptools import build_meta\n"
        f"print(build_meta.build_editable({str(tmp_path / 'editable')!r}))\n"
    )
    done = run("-P", "-c", code, cwd=checkout)  # -P: the build's directory is not on sys.path either
    output = done.stdout + done.stderr
    assert "Customization incompatible" not in output and "Traceback" not in output, output
    assert not (checkout / "caravanserai_bot" / "_generated").exists()  # the build generated nothing
    first = run(str(checkout / "caravanserai_bot" / "_codegen.py"), cwd=checkout)
    assert first.stdout.startswith(f"generated gRPC stubs for {PROTO}")
    assert (
        checkout / "caravanserai_bot" / "_generated" / "caravanserai" / "bot" / "v1" / "bot_pb2.py"
    ).is_file()
    again = run(str(checkout / "caravanserai_bot" / "_codegen.py"), cwd=checkout)
    assert again.stdout == ""
