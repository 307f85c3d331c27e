"""The generated protocol stubs (generated on first import if missing) and conversions to and from them.

Layer: gateway plumbing shared by the gateway and the worker-side remote seat. Pure conversions: no I/O.
`frame_decision_request` wraps an already serialized `DecisionRequest` into a `ServerMessage` by writing
wire-format bytes around it: the relay's pass-through never decodes the (large) request.
"""

from __future__ import annotations

import json
import json.encoder
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from engine_service.gateway.codegen import ensure_generated

ensure_generated()

from engine_service.gateway._generated.caravanserai.bot.v1 import bot_pb2, bot_pb2_grpc  # noqa: E402
from engine_service.gateway._generated.caravanserai.relay.v1 import relay_pb2, relay_pb2_grpc  # noqa: E402

BOT_SERVICE = "caravanserai.bot.v1.BotService"
RELAY_SERVICE = "caravanserai.relay.v1.RelayService"

END_REASONS = {
    "completed": bot_pb2.END_REASON_COMPLETED,
    "turn_cap": bot_pb2.END_REASON_TURN_CAP,
    "forfeit": bot_pb2.END_REASON_FORFEIT,
    "resigned": bot_pb2.END_REASON_RESIGNED,
    "disconnect": bot_pb2.END_REASON_DISCONNECT,
    "aborted": bot_pb2.END_REASON_ABORTED,
}

FAULT_KINDS = {
    "timeout": bot_pb2.FAULT_KIND_TIMEOUT,
    "illegal": bot_pb2.FAULT_KIND_ILLEGAL,
    "malformed": bot_pb2.FAULT_KIND_MALFORMED,
    "disconnect": bot_pb2.FAULT_KIND_DISCONNECT,
    "crash": bot_pb2.FAULT_KIND_CRASH,
    "resign": bot_pb2.FAULT_KIND_RESIGN,
}


_DECISION_REQUEST_TAG = bytes(
    [bot_pb2.ServerMessage.DESCRIPTOR.fields_by_name["decision_request"].number << 3 | 2]
)
_DEADLINE_TAG = bytes([bot_pb2.DecisionRequest.DESCRIPTOR.fields_by_name["deadline_unix_ms"].number << 3])


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def frame_decision_request(request: bytes, deadline_unix_ms: int) -> bytes:
    """A serialized `ServerMessage{decision_request}` from a serialized `DecisionRequest` (which must not set
    `deadline_unix_ms`), with `deadline_unix_ms` appended: protobuf reads fields in any order, so this is
    the message a parser sees, built without decoding the request."""
    body = request + _DEADLINE_TAG + _varint(deadline_unix_ms)
    return _DECISION_REQUEST_TAG + _varint(len(body)) + body


def serialize_server_message(message: bot_pb2.ServerMessage | bytes) -> bytes:
    """The bot stream's serializer: messages are serialized, bytes (a framed request) pass through."""
    return message if isinstance(message, bytes) else message.SerializeToString()


def now_ms() -> int:
    return int(time.time() * 1000)


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _standard_encoder() -> Callable[[Any], str]:
    """Compact JSON, as `json.dumps(data, separators=(",", ":"))` writes it: one encoder built once, called
    directly (the C one when there is one), without the circular-reference bookkeeping (observations and
    action details are trees: a cycle fails with a RecursionError)."""
    make = getattr(json.encoder, "c_make_encoder", None)  # private to CPython: not in typeshed
    if make is None:
        return json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
    encode = make(None, _not_json, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
    join = "".join
    return lambda data: join(encode(data, 0))


def _make_encoder() -> Callable[[Any], str]:
    """The standard encoder's compact JSON at a tenth of its cost: orjson writes it, and its text is kept
    when it is ASCII (as the standard encoder's always is: it escapes the rest); text with other characters,
    and anything orjson refuses (a type that is not JSON, an integer over 64 bits), go to the standard
    encoder, which gives the same text or the same error. Only numbers may be written differently: `1e16`
    for `1e+16` (the same value), and `null` where the standard encoder writes NaN or Infinity (not JSON)."""
    standard = _standard_encoder()
    fast = orjson.dumps
    option = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

    def encode(data: Any) -> str:
        try:
            text = fast(data, default=_not_json, option=option)
        except TypeError:
            return standard(data)
        return text.decode("ascii") if text.isascii() else standard(data)

    return encode


_ENCODE = _make_encoder()


def dumps(data: Any) -> str:
    return _ENCODE(data)


def fault_to_proto(fault: Any) -> bot_pb2.Fault:
    """A referee `Fault` (or a mapping with the same fields) as a protocol `Fault`."""

    def get(name: str) -> Any:
        return fault.get(name) if isinstance(fault, Mapping) else getattr(fault, name, None)

    return bot_pb2.Fault(
        seat=int(get("seat") or 0),
        step=int(get("step") or 0),
        kind=FAULT_KINDS.get(str(get("kind")), bot_pb2.FAULT_KIND_UNSPECIFIED),
        reason=str(get("reason") or ""),
        action_id=str(get("action_id") or ""),
        fallback_action_id=str(get("fallback_action") or ""),
        forfeit=bool(get("forfeit")),
    )


def legal_actions_to_proto(actions: Iterable[Any]) -> list[bot_pb2.LegalAction]:
    return [
        bot_pb2.LegalAction(
            id=a.id,
            kind=a.kind,
            details_json=_ENCODE(a.details if type(a.details) is dict else dict(a.details)),
        )
        for a in actions
    ]


def add_legal_actions(message: bot_pb2.DecisionRequest, actions: Iterable[Any]) -> None:
    """`legal_actions_to_proto` written straight into a request (no message built and then copied)."""
    add, encode = message.legal_actions.add, _ENCODE
    for a in actions:
        details = a.details
        add(id=a.id, kind=a.kind, details_json=encode(details if type(details) is dict else dict(details)))


def match_ended_to_proto(match_id: str, seat: int, summary: Mapping[str, Any]) -> bot_pb2.MatchEnded:
    """The referee's end-of-match summary for one seat (`result` and that seat's `faults`)."""
    result = summary.get("result") or {}
    game = result.get("game") or {}
    game_reason = str(game.get("reason", ""))
    reason = str(result.get("reason") or game_reason)  # records made before end reasons: the game's
    end_seat = result.get("end_seat")
    by_seat = [str(r) for r in result.get("end_reasons") or []]
    ended = bot_pb2.MatchEnded(
        match_id=match_id,
        seat=seat,
        scores=[int(s) for s in game.get("scores", [])],
        ranks=[int(r) for r in result.get("ranks", game.get("ranks", []))],
        forfeits=[int(s) for s in result.get("forfeits", [])],
        reason=reason,
        faults=[fault_to_proto(f) for f in summary.get("faults", [])],
        result_json=dumps(result),
        end_reason=END_REASONS.get(reason, bot_pb2.END_REASON_UNSPECIFIED),
        seat_end_reasons=[END_REASONS.get(r, bot_pb2.END_REASON_UNSPECIFIED) for r in by_seat],
        game_reason=game_reason,
    )
    if end_seat is not None:
        ended.end_seat = int(end_seat)
    return ended


__all__ = [
    "BOT_SERVICE",
    "END_REASONS",
    "FAULT_KINDS",
    "RELAY_SERVICE",
    "add_legal_actions",
    "bot_pb2",
    "bot_pb2_grpc",
    "dumps",
    "fault_to_proto",
    "frame_decision_request",
    "legal_actions_to_proto",
    "match_ended_to_proto",
    "now_ms",
    "relay_pb2",
    "relay_pb2_grpc",
    "serialize_server_message",
]
