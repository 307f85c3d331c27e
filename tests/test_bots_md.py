"""Every command BOTS.md shows is run here, as written, with what the project installs.

BOTS.md marks each shell and Python block with what it needs, in the fence's info string (GitHub shows
only the language): ```` ```sh test:offline ````. Kinds:
- `offline`: the `caravan` CLI alone, run in a fresh directory;
- `gateway`: a running gateway: one is started here (a dev token `devtoken` for bot 7, `my-bot`);
- `local`: starts `caravan local` itself and plays against it; it must end by itself, exit 0;
- `bot`: a bot (a Python snippet or a command line), played against a `caravan local` started here;
- `ladder`: the REST API: a live ladder (Django's live server) with a user whose login is in
  LADDER_USER / LADDER_PASSWORD and whose address is LADDER;
- `setup`: installs; not run again here (the suite runs in the installed project), but what each installs
  is checked to be there: the SDK importable, the Node bot's packages present.
An unmarked shell or Python block fails the first test. Addresses and tokens are the ones BOTS.md uses
(`127.0.0.1:50051`, `devtoken`, `cvs_...`); they are replaced with this run's free port and dev token.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine_service.gateway.auth import BotIdentity, InMemoryVerifier
from engine_service.gateway.config import GatewayConfig
from engine_service.gateway.registry import SqliteRegistry
from engine_service.gateway.server import GatewayThread
from tests import ports

ROOT = Path(__file__).resolve().parent.parent
BOTS_MD = ROOT / "BOTS.md"
KINDS = ("offline", "gateway", "local", "bot", "ladder", "setup")
FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>\w*)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)```", re.S | re.M
)
COMMAND_LANGUAGES = ("sh", "bash", "console", "shell", "python", "py")
TIMEOUT = 240  # seconds: a hang guard (a block ends when its commands do, however busy the machine)


@dataclass(frozen=True)
class Block:
    line: int
    lang: str
    kind: str
    body: str

    @property
    def id(self) -> str:
        return f"line{self.line}-{self.lang}-{self.kind}"


def blocks() -> list[Block]:
    text = BOTS_MD.read_text()
    found = []
    for m in FENCE.finditer(text):
        if m["lang"] not in COMMAND_LANGUAGES:
            continue
        kind = re.search(r"\btest:(\w+)", m["info"])
        body = textwrap.dedent(m["body"])
        found.append(Block(text[: m.start()].count("\n") + 1, m["lang"], kind[1] if kind else "", body))
    return found


def of_kind(kind: str) -> list[Block]:
    return [b for b in blocks() if b.kind == kind]


@pytest.fixture
def free_port() -> Iterator[int]:
    """A free port for a `caravan local` run; the runner's registry file for it is removed afterwards."""
    port = ports.free_port()
    yield port
    for leftover in (ROOT / "var").glob(f"local-registry-{port}.sqlite3*"):
        leftover.unlink(missing_ok=True)


def environment(**extra: str) -> dict[str, str]:
    """The project's interpreter and `caravan` first on PATH, as after `pip install -e .`."""
    venv_bin = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARAVANSERAI_")}
    env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env | extra


def workdir(tmp_path: Path) -> Path:
    """A fresh directory that looks like a checkout to the commands (they name clients/... and protos/...)."""
    for name in ("clients", "protos"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def substitute(body: str, target: str) -> str:
    port = target.rsplit(":", 1)[1]
    return (
        body.replace("127.0.0.1:50051", target)
        .replace("--port 50051", f"--port {port}")
        .replace("cvs_...", "devtoken")
    )


def run_block(block: Block, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if block.lang in ("python", "py"):
        script = cwd / f"block_{block.line}.py"
        script.write_text(block.body)
        argv = [sys.executable, str(script)]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", block.body]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def assert_ok(block: Block, done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, (
        f"BOTS.md line {block.line} exited {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n"
        f"{done.stderr}"
    )
    assert "Traceback" not in done.stderr, done.stderr


def test_every_command_block_is_marked_and_every_kind_is_run() -> None:
    found = blocks()
    unmarked = [b.line for b in found if b.kind not in KINDS]
    assert not unmarked, f"BOTS.md blocks without a test:<kind> mark ({', '.join(KINDS)}) at lines {unmarked}"
    assert {b.kind for b in found} == set(KINDS)
    # neither is installed by the project (Debian does not package grpcurl): `caravan gateway`, urllib instead
    assert not [b.line for b in found if re.search(r"\b(grpcurl|curl)\b", b.body)]


@pytest.mark.parametrize("block", of_kind("offline"), ids=lambda b: b.id)
def test_offline_blocks(block: Block, tmp_path: Path) -> None:
    assert_ok(block, run_block(block, workdir(tmp_path), environment()))


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    registry = tmp_path_factory.mktemp("gateway") / "registry.sqlite3"
    verifier = InMemoryVerifier()
    verifier.add("devtoken", BotIdentity("7", "my-bot", "me", ("expedition-v1",), max_concurrent=2))
    config = GatewayConfig(
        bot_address="127.0.0.1:0", relay_address="127.0.0.1:0", auth="memory", registry_path=registry
    )
    thread = GatewayThread(config, verifier, SqliteRegistry(registry)).start()
    try:
        yield thread.bot_target
    finally:
        thread.stop()


@pytest.mark.parametrize("block", of_kind("gateway"), ids=lambda b: b.id)
def test_gateway_blocks(block: Block, gateway: str, tmp_path: Path) -> None:
    block = Block(block.line, block.lang, block.kind, substitute(block.body, gateway))
    done = run_block(block, workdir(tmp_path), environment())
    assert_ok(block, done)
    if "hello" in block.body:
        assert "welcome: bot my-bot (id 7)" in done.stdout and "round trip (Ping/Pong" in done.stdout


@pytest.mark.parametrize("block", of_kind("local"), ids=lambda b: b.id)
def test_local_walkthrough_blocks(block: Block, tmp_path: Path, free_port: int) -> None:
    body = substitute(block.body, f"127.0.0.1:{free_port}")
    assert "caravan local" in body and "wait" in body
    cwd = workdir(tmp_path)
    body = body.replace("caravan local ", f"caravan local --out {cwd / 'records'} ", 1)
    done = run_block(Block(block.line, block.lang, block.kind, body), cwd, environment())
    assert_ok(block, done)
    assert len(list((cwd / "records").glob("*.json"))) == 2  # both matches played and recorded


@pytest.mark.parametrize("block", of_kind("bot"), ids=lambda b: b.id)
def test_bot_blocks_play_a_local_match(block: Block, tmp_path: Path, free_port: int) -> None:
    cwd = workdir(tmp_path)
    port = free_port
    runner_args = "local --game expedition-v1 --house random --matches 1 --token devtoken --wait 120"
    argv = [sys.executable, "-m", "engine_service.cli", *runner_args.split()]
    runner = subprocess.Popen(
        [*argv, "--port", str(port), "--out", str(cwd / "records")],
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        bot = Block(block.line, block.lang, block.kind, substitute(block.body, f"127.0.0.1:{port}"))
        done = run_block(bot, cwd, environment())
        said, _ = runner.communicate(timeout=TIMEOUT)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert_ok(block, done)
    assert runner.returncode == 0, said
    assert "match 1/1 seat 0: rank" in said and len(list((cwd / "records").glob("*.json"))) == 1


def test_setup_blocks_install_what_the_other_blocks_use() -> None:
    commands = " ".join(b.body for b in of_kind("setup"))
    assert "pip install -e clients/python" in commands and "cd clients/node && npm ci" in commands
    done = subprocess.run(
        [sys.executable, "-c", "import caravanserai_bot; print(caravanserai_bot.Bot.__name__)"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0 and done.stdout.strip() == "Bot", done.stderr
    assert (ROOT / "clients/node/package-lock.json").is_file()
    for package in ("@grpc/grpc-js", "@grpc/proto-loader"):
        assert (ROOT / "clients/node/node_modules" / package / "package.json").is_file()
    assert shutil.which("node"), "the Node blocks need node on PATH"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("block", of_kind("ladder"), ids=lambda b: b.id)
def test_ladder_blocks(block: Block, live_server, django_user_model, tmp_path: Path) -> None:
    django_user_model.objects.create_user(username="me", password="a long pass phrase")
    env = environment(LADDER=live_server.url, LADDER_USER="me", LADDER_PASSWORD="a long pass phrase")
    done = run_block(block, workdir(tmp_path), env)
    assert_ok(block, done)
    assert "max_concurrent 1" in done.stdout
    assert "NEW waiting for bot my-bot to connect (with a stream for expedition-v1)" in done.stdout
    from ladder.bots.models import Bot

    assert Bot.objects.get(name="my-bot").max_concurrent == 3


def inline_commands(program: str) -> list[str]:
    """The `program ...` commands BOTS.md names in its prose (code spans), placeholders cut off."""
    spans = re.findall(rf"`({program} [^`<]*)", BOTS_MD.read_text())
    return sorted({span.strip() for span in spans})


@pytest.mark.parametrize("command", inline_commands("caravan"))
def test_every_caravan_command_named_in_the_prose_exists(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from engine_service.cli import main

    with pytest.raises(SystemExit) as done:
        main([*command.split()[1:], "--help"])
    assert done.value.code == 0 and "usage: caravan" in capsys.readouterr().out


def test_every_benchmark_named_in_the_prose_exists() -> None:
    named = [c.split()[3] for c in inline_commands("python") if c.startswith("python -m bench ")]
    assert named, "BOTS.md quotes its overhead figures from `python -m bench ...` runs"
    for name in named:
        assert (ROOT / "bench" / f"bench_{name}.py").is_file(), name
        source = {"relay": "bench_relay.json", "matches": "matches.json"}[name]
        assert f"bench/results/{source}" in BOTS_MD.read_text()  # the figures say where they come from
