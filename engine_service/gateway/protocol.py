"""The generated protocol stubs (generated on first import if missing) and conversions to and from them.

Layer: gateway plumbing shared by the gateway and the worker-side remote seat. Pure conversions: no I/O.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

from engine_service.gateway.codegen import ensure_generated

ensure_generated()

from engine_service.gateway._generated.caravanserai.bot.v1 import bot_pb2, bot_pb2_grpc  # noqa: E402
from engine_service.gateway._generated.caravanserai.relay.v1 import relay_pb2, relay_pb2_grpc  # noqa: E402

BOT_SERVICE = "caravanserai.bot.v1.BotService"
RELAY_SERVICE = "caravanserai.relay.v1.RelayService"

FAULT_KINDS = {
    "timeout": bot_pb2.FAULT_KIND_TIMEOUT,
    "illegal": bot_pb2.FAULT_KIND_ILLEGAL,
    "malformed": bot_pb2.FAULT_KIND_MALFORMED,
    "disconnect": bot_pb2.FAULT_KIND_DISCONNECT,
    "crash": bot_pb2.FAULT_KIND_CRASH,
    "resign": bot_pb2.FAULT_KIND_RESIGN,
}


def now_ms() -> int:
    return int(time.time() * 1000)


def dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


def fault_to_proto(fault: Any) -> bot_pb2.Fault:
    """A referee `Fault` (or a mapping with the same fields) as a protocol `Fault`."""
    get = fault.get if isinstance(fault, Mapping) else lambda name: getattr(fault, name, None)
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
    return [bot_pb2.LegalAction(id=a.id, kind=a.kind, details_json=dumps(dict(a.details))) for a in actions]


def match_ended_to_proto(match_id: str, seat: int, summary: Mapping[str, Any]) -> bot_pb2.MatchEnded:
    """The referee's end-of-match summary for one seat (`result` and that seat's `faults`)."""
    result = summary.get("result") or {}
    game = result.get("game") or {}
    return bot_pb2.MatchEnded(
        match_id=match_id,
        seat=seat,
        scores=[int(s) for s in game.get("scores", [])],
        ranks=[int(r) for r in result.get("ranks", game.get("ranks", []))],
        forfeits=[int(s) for s in result.get("forfeits", [])],
        reason=str(game.get("reason", "")),
        faults=[fault_to_proto(f) for f in summary.get("faults", [])],
        result_json=dumps(result),
    )


__all__ = [
    "BOT_SERVICE",
    "FAULT_KINDS",
    "RELAY_SERVICE",
    "bot_pb2",
    "bot_pb2_grpc",
    "dumps",
    "fault_to_proto",
    "legal_actions_to_proto",
    "match_ended_to_proto",
    "now_ms",
    "relay_pb2",
    "relay_pb2_grpc",
]
