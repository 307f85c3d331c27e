"""`caravan gateway`: health, services and describe by reflection, and `hello` (a token check with timed
pings) against a real gateway on this machine, with what the project installs (no grpcurl); refusals and
an absent gateway or one that never answers (`--timeout`) are one line and exit 1, bad arguments exit 2."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine_service.cli import main
from engine_service.gateway.auth import BotIdentity, InMemoryVerifier
from engine_service.gateway.config import GatewayConfig
from engine_service.gateway.registry import SqliteRegistry
from engine_service.gateway.server import GatewayThread
from tests.ports import free_port


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    registry = Path(tmp_path_factory.mktemp("gateway")) / "registry.sqlite3"
    verifier = InMemoryVerifier()
    verifier.add("devtoken", BotIdentity("7", "my-bot", "me", ("expedition-v1",), max_concurrent=2))
    config = GatewayConfig(
        bot_address="127.0.0.1:0", relay_address="127.0.0.1:0", auth="memory", registry_path=registry
    )
    gateway = GatewayThread(config, verifier, SqliteRegistry(registry)).start()
    try:
        yield gateway.bot_target
    finally:
        gateway.stop()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["gateway", *args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_health_and_services(capsys, target):
    assert run(capsys, "health", "--target", target) == (0, f"{target} (server): SERVING\n", "")
    code, out, _ = run(capsys, "health", "--target", target, "--service", "caravanserai.bot.v1.BotService")
    assert code == 0 and out.endswith("caravanserai.bot.v1.BotService: SERVING\n")
    code, out, _ = run(capsys, "services", "--target", target)
    assert code == 0
    assert out.split() == [
        "caravanserai.bot.v1.BotService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    ]


def test_describe_shows_services_messages_and_enums_as_the_proto_says(capsys, target):
    code, out, _ = run(capsys, "describe", "caravanserai.bot.v1.BotService", "--target", target)
    assert code == 0 and (
        "rpc Connect(stream caravanserai.bot.v1.BotMessage) returns (stream caravanserai.bot.v1.ServerMessage);"
        in out
    )
    code, out, _ = run(capsys, "describe", "caravanserai.bot.v1.Hello", "--target", target)
    assert code == 0 and "  repeated string games = 4;\n  uint32 max_concurrent_matches = 5;" in out
    code, out, _ = run(capsys, "describe", "caravanserai.bot.v1.BotMessage", "--target", target)
    assert "caravanserai.bot.v1.Hello hello = 1;  // oneof message" in out
    code, out, _ = run(capsys, "describe", "caravanserai.bot.v1.EndReason", "--target", target)
    assert code == 0 and "END_REASON_ABORTED = 6;" in out
    code, out, err = run(capsys, "describe", "caravanserai.bot.v1.Nope", "--target", target)
    assert code == 1 and "serves no service, message or enum named 'caravanserai.bot.v1.Nope'" in err


def test_hello_checks_a_token_and_times_the_round_trip(capsys, target):
    code, out, err = run(capsys, "hello", "--target", target, "--token", "devtoken", "--concurrent", "3")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("welcome: bot my-bot (id 7) on gateway ")
    assert lines[1] == "games: expedition-v1"
    assert lines[2] == "matches at once: 2 granted (asked 3; the gateway's limit 16)"  # the registration's 2
    assert lines[4].startswith("round trip (Ping/Pong, 5): median ")
    assert "devtoken" not in out + err


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("hello", "--token", "wrong"), 1, "UNAUTHENTICATED: unknown or revoked bot token"),
        (("hello", "--token", "devtoken", "--game", "chess-v1"), 1, "INVALID_ARGUMENT"),
        (("hello", "--token", ""), 1, "--token (or CARAVANSERAI_TOKEN) is required"),
        (("hello", "--token", "devtoken", "--pings", "0"), 1, "--pings must be within 1-100"),
        (("ping",), 2, "invalid choice: 'ping'"),
    ],
)
def test_refusals_and_bad_arguments_are_one_line(capsys, target, args, code, words):
    got, out, err = run(capsys, *args, "--target", target) if args != ("ping",) else run(capsys, *args)
    assert got == code and out == ""
    assert words in err and "Traceback" not in err and "wrong" not in err


def test_no_gateway_there_is_unavailable(capsys, tmp_path):
    code, _, err = run(capsys, "health", "--target", "127.0.0.1:1")
    assert code == 1 and err.startswith("caravan gateway: 127.0.0.1:1: UNAVAILABLE")


@pytest.fixture
def silent_target() -> Iterator[str]:
    """A port that accepts connections and never says a word (no HTTP/2, no gRPC)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", free_port()))
        listener.listen()
        yield f"127.0.0.1:{listener.getsockname()[1]}"


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (("health",), "DEADLINE_EXCEEDED: Deadline Exceeded"),
        (("services",), "DEADLINE_EXCEEDED: Deadline Exceeded"),
        (("describe", "caravanserai.bot.v1.Hello"), "no gateway answered within 0.2 s"),
        (("hello", "--token", "t"), "DEADLINE_EXCEEDED: Deadline Exceeded"),
    ],
)
def test_a_gateway_that_never_answers_ends_at_the_timeout(capsys, silent_target, command, words):
    code, out, err = run(capsys, *command, "--target", silent_target, "--timeout", "0.2")
    assert (code, out, err) == (1, "", f"caravan gateway: {silent_target}: {words}\n")


@pytest.mark.parametrize("value", ["0", "-1", "soon", "3601"])
def test_a_timeout_that_is_no_number_of_seconds_is_refused(capsys, value):
    code, out, err = run(capsys, "health", "--timeout", value)
    assert code == 2 and out == "" and f"{value!r} is not a number of seconds within (0, 3600]" in err
