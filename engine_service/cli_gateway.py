"""`caravan gateway ...`: look at a running engine gateway from the command line, with what the project
installs (grpcio, its health and reflection clients) instead of grpcurl: `health` (grpc.health.v1),
`services` and `describe SYMBOL` (server reflection: the same .proto a bot author reads), and `hello`
(open one bot stream with a token, print the Welcome, measure the round trip with pings, close cleanly).

Layer: a command-line front over gRPC clients; no Django, no referee. `engine_service.cli` hands it its
arguments (imported only then). Exit status: 0 done, 1 the gateway refused or was not there (one line
saying why), 2 bad arguments. It never prints a token. `hello` holds its stream for a few pings only and
declines nothing: a match offered meanwhile is reported, and the bot's real process picks it up on
reconnecting (the gateway's reconnect grace), so run it before starting your bot, not beside `caravan local`
(which would seat it).
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import grpc
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor, ServiceDescriptor
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

TIMEOUT_SECONDS = 10.0  # each call's deadline unless `--timeout` says otherwise


class GatewayError(Exception):
    """The gateway could not be reached or refused; the message says which and why."""


def _channel(target: str) -> grpc.Channel:
    return grpc.insecure_channel(target)


def _rpc_error(target: str, exc: grpc.RpcError) -> GatewayError:
    code = exc.code() if hasattr(exc, "code") else None
    details = exc.details() if hasattr(exc, "details") else str(exc)
    return GatewayError(f"{target}: {code.name if code else 'error'}: {details}")


# --- health --------------------------------------------------------------------------------------------------
def cmd_health(args: argparse.Namespace) -> int:
    """grpc.health.v1.Health/Check of the whole server (or `--service`); exit 0 only when SERVING."""
    with _channel(args.target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout)
        except grpc.RpcError as exc:
            raise _rpc_error(args.target, exc) from exc
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"{args.target} {args.service or '(server)'}: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


# --- reflection ----------------------------------------------------------------------------------------------
def service_names(channel: grpc.Channel, timeout: float = TIMEOUT_SECONDS) -> list[str]:
    """The services a gateway serves, by server reflection."""
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    replies = stub.ServerReflectionInfo(iter([request]), timeout=timeout)
    return sorted(s.name for reply in replies for s in reply.list_services_response.service)


def cmd_services(args: argparse.Namespace) -> int:
    with _channel(args.target) as channel:
        try:
            names = service_names(channel, args.timeout)
        except grpc.RpcError as exc:
            raise _rpc_error(args.target, exc) from exc
    print("\n".join(names))
    return 0


def _field_type(field: FieldDescriptor) -> str:
    if field.message_type is not None:
        return str(field.message_type.full_name)
    if field.enum_type is not None:
        return str(field.enum_type.full_name)
    names = {v: k for k, v in vars(FieldDescriptor).items() if k.startswith("TYPE_")}
    return str(names[field.type]).removeprefix("TYPE_").lower()


def _describe_message(message: Descriptor) -> list[str]:
    lines = [f"message {message.full_name} {{"]
    oneofs = {f.name: o.name for o in message.oneofs for f in o.fields if not o.name.startswith("_")}
    for field in message.fields:
        label = "repeated " if _is_repeated(field) else ""
        oneof = f"  // oneof {oneofs[field.name]}" if field.name in oneofs else ""
        lines.append(f"  {label}{_field_type(field)} {field.name} = {field.number};{oneof}")
    lines.append("}")
    return lines


def _is_repeated(field: FieldDescriptor) -> bool:
    repeated = getattr(field, "is_repeated", None)
    if isinstance(repeated, bool):
        return repeated
    return bool(field.label == FieldDescriptor.LABEL_REPEATED)


def _describe_enum(enum: EnumDescriptor) -> list[str]:
    return [f"enum {enum.full_name} {{", *(f"  {v.name} = {v.number};" for v in enum.values), "}"]


def _describe_service(service: ServiceDescriptor) -> list[str]:
    lines = [f"service {service.full_name} {{"]
    for method in service.methods:
        streams = descriptor_pb2.MethodDescriptorProto()
        method.CopyToProto(streams)
        into = "stream " if streams.client_streaming else ""
        out = "stream " if streams.server_streaming else ""
        lines.append(
            f"  rpc {method.name}({into}{method.input_type.full_name}) returns ({out}{method.output_type.full_name});"
        )
    lines.append("}")
    return lines


def describe(channel: grpc.Channel, symbol: str) -> str:
    """A service, message or enum the gateway serves, by reflection, as .proto-like text."""
    pool = DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
    finders: list[tuple[Any, Any]] = [
        (pool.FindServiceByName, _describe_service),
        (pool.FindMessageTypeByName, _describe_message),
        (pool.FindEnumTypeByName, _describe_enum),
    ]
    for find, render in finders:
        try:
            return "\n".join(render(find(symbol)))
        except KeyError:
            continue
    raise GatewayError(f"the gateway serves no service, message or enum named {symbol!r}")


def cmd_describe(args: argparse.Namespace) -> int:
    with _channel(args.target) as channel:
        try:  # reflection's descriptor database sets no deadline of its own: bound the connection instead
            grpc.channel_ready_future(channel).result(timeout=args.timeout)
        except grpc.FutureTimeoutError as exc:
            raise GatewayError(f"{args.target}: no gateway answered within {args.timeout:g} s") from exc
        try:
            print(describe(channel, args.symbol))
        except grpc.RpcError as exc:
            raise _rpc_error(args.target, exc) from exc
    return 0


# --- hello ---------------------------------------------------------------------------------------------------
def _bot_pb2() -> Any:
    from engine_service.gateway.protocol import bot_pb2

    return bot_pb2


def _outbox(first: Any, pending: queue.Queue[Any]) -> Iterator[Any]:
    yield first
    while (message := pending.get()) is not None:
        yield message


def hello(
    target: str,
    token: str,
    *,
    games: list[str],
    concurrent: int,
    pings: int,
    timeout: float = TIMEOUT_SECONDS,
) -> dict[str, Any]:
    """Open one bot stream: Hello, read the Welcome, `pings` Ping/Pong round trips, then half-close. The
    Welcome's fields, the round trips in ms and any match offered meanwhile."""
    pb = _bot_pb2()
    pending: queue.Queue[Any] = queue.Queue()
    first = pb.BotMessage(
        hello=pb.Hello(
            bot_name="caravan-hello", sdk="caravan", games=games, max_concurrent_matches=concurrent
        )
    )
    channel = _channel(target)
    stub = channel.stream_stream(
        "/caravanserai.bot.v1.BotService/Connect",
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.ServerMessage.FromString,
    )
    replies = stub(_outbox(first, pending), metadata=[("authorization", f"Bearer {token}")], timeout=timeout)
    found: dict[str, Any] = {"rtt_ms": [], "offered": []}
    sent_at = 0.0
    try:
        for reply in replies:
            kind = reply.WhichOneof("message")
            if kind == "welcome":
                found["welcome"] = reply.welcome
            elif kind == "match_started":
                found["offered"].append(reply.match_started.match_id)
            elif kind == "error" and reply.error.fatal:
                code = next((c.name for c in grpc.StatusCode if c.value[0] == reply.error.status_code), "")
                raise GatewayError(f"{target}: {code or 'refused'}: {reply.error.message}")
            elif kind == "pong":
                found["rtt_ms"].append((time.perf_counter() - sent_at) * 1000)
            if kind in ("welcome", "pong"):
                if len(found["rtt_ms"]) >= pings:
                    pending.put(None)  # half-close: the gateway ends the stream
                    continue
                sent_at = time.perf_counter()
                pending.put(pb.BotMessage(ping=pb.Ping(nonce=len(found["rtt_ms"]) + 1)))
    except grpc.RpcError as exc:
        if exc.code() != grpc.StatusCode.OK:
            raise _rpc_error(target, exc) from exc
    finally:
        pending.put(None)
        channel.close()
    if "welcome" not in found:
        raise GatewayError(f"{target}: the stream ended before a Welcome")
    return found


def cmd_hello(args: argparse.Namespace) -> int:
    if not args.token:
        raise GatewayError("--token (or CARAVANSERAI_TOKEN) is required")
    if not 1 <= args.pings <= 100:
        raise GatewayError("--pings must be within 1-100")
    found = hello(
        args.target,
        args.token,
        games=args.game,
        concurrent=args.concurrent,
        pings=args.pings,
        timeout=args.timeout,
    )
    welcome = found["welcome"]
    limits = welcome.limits
    print(f"welcome: bot {welcome.bot_name} (id {welcome.bot_id}) on gateway {welcome.gateway_id}")
    print(f"games: {', '.join(welcome.games)}")
    print(
        f"matches at once: {welcome.max_concurrent_matches} granted (asked {args.concurrent}; "
        f"the gateway's limit {limits.max_concurrent_matches})"
    )
    print(
        f"limits: messages {limits.max_message_bytes} bytes, {limits.max_sessions_per_bot} streams per bot, "
        f"Hello within {limits.hello_timeout_ms} ms, action ids {limits.max_action_id_bytes} bytes"
    )
    rtt = found["rtt_ms"]
    print(
        f"round trip (Ping/Pong, {len(rtt)}): median {statistics.median(rtt):.2f} ms, max {max(rtt):.2f} ms"
    )
    for match_id in found["offered"]:
        print(f"note: match {match_id} was offered meanwhile; start your bot now to play it", file=sys.stderr)
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see `{self.prog} --help`)")


def _fail(message: str) -> NoReturn:
    print(f"caravan gateway: {message}", file=sys.stderr)
    raise SystemExit(2)


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= 3600:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds within (0, 3600]")
    return seconds


def build_parser(prog: str = "caravan gateway") -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="Look at a running engine gateway (no grpcurl needed).")
    commands = parser.add_subparsers(dest="gateway_command", required=True, parser_class=_Parser)
    target = os.environ.get("CARAVANSERAI_TARGET", "127.0.0.1:50051")

    def with_target(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--target", default=target, help=f"the gateway, host:port (default {target})")
        p.add_argument(
            "--timeout",
            type=_seconds,
            default=TIMEOUT_SECONDS,
            help=f"seconds the gateway has to answer (default {TIMEOUT_SECONDS:g}; `hello`: the whole stream)",
        )
        return p

    health = with_target(commands.add_parser("health", help="grpc.health.v1 Check; exit 0 when SERVING"))
    health.add_argument("--service", default="", help="one service (default: the whole server)")
    health.set_defaults(func=cmd_health)
    with_target(commands.add_parser("services", help="the services it serves (reflection)")).set_defaults(
        func=cmd_services
    )
    desc = with_target(commands.add_parser("describe", help="a service, message or enum (reflection)"))
    desc.add_argument("symbol", help="e.g. caravanserai.bot.v1.BotMessage")
    desc.set_defaults(func=cmd_describe)
    greet = with_target(
        commands.add_parser("hello", help="check a token: Hello, the Welcome, ping round trips, close")
    )
    greet.add_argument("--token", default=os.environ.get("CARAVANSERAI_TOKEN", ""))
    greet.add_argument("--game", action="append", default=[], help="a game (default: all registered)")
    greet.add_argument("--concurrent", type=int, default=1, help="matches at once to ask for")
    greet.add_argument("--pings", type=int, default=5, help="Ping/Pong round trips to time (1-100)")
    greet.set_defaults(func=cmd_hello)
    return parser


def main(argv: Sequence[str], prog: str = "caravan gateway") -> int:
    args = build_parser(prog).parse_args(list(argv))
    try:
        return int(args.func(args))
    except GatewayError as exc:
        print(f"caravan gateway: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
