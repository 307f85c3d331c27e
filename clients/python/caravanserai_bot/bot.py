"""The `Bot` base class and the typed values a bot sees (no gRPC types leak into a bot's code).

`Bot.debug(...)` inside `decide`/`choose` attaches text to that decision's answer (`Decision.debug`): the
decision being made is this thread's (`decide_explained` sets it), so overlapping decisions of several
matches never mix their texts. So does what the decision's thread writes to `sys.stderr` (`print(...,
file=sys.stderr)`; unless `Bot.debug_stderr` is False): `sys.stderr` is then a `_StderrTee`, which still
writes everything to the real stderr (a hosted bot's log) and also keeps a decision thread's writes, in order
with its `debug` calls.
"""

from __future__ import annotations

import logging
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("caravanserai_bot")

MAX_DEBUG_BYTES = 2048  # what the server keeps of a decision's debug text (UTF-8); it cuts the rest
_SEND_DEBUG_BYTES = 16 * 1024  # what the SDK sends at most: enough for the server to say how long it was
_decision = threading.local()  # `parts`: the debug text of the decision this thread is making, so far
_tee_lock = threading.Lock()


class _StderrTee:
    """`sys.stderr` while a bot with `debug_stderr` plays: every write goes to the real stream; a decision
    thread's writes are also kept as that decision's debug text."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        parts: list[str] | None = getattr(_decision, "parts", None)
        if parts is not None and getattr(_decision, "stderr", False) and isinstance(text, str):
            parts.append(text)
        return int(self._stream.write(text))

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, isatty, ... of the real stream
        return getattr(self._stream, name)


def _tee_stderr() -> None:
    with _tee_lock:
        if not isinstance(sys.stderr, _StderrTee):
            sys.stderr = _StderrTee(sys.stderr)


@dataclass(frozen=True)
class LegalAction:
    """One legal action: answer with its `id`."""

    id: str
    kind: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TimeControl:
    decision_seconds: float
    time_bank_seconds: float
    max_faults: int


@dataclass(frozen=True)
class Match:
    """A match the bot is seated in."""

    match_id: str
    game_id: str
    num_players: int
    seat: int
    opponents: tuple[str, ...]
    options: dict[str, Any]
    time_control: TimeControl
    resumed: bool = False


@dataclass(frozen=True)
class Request:
    """One decision to make: the seat's observation, the legal actions, and the clock."""

    match: Match | None
    match_id: str
    request_id: str
    step: int
    observation: dict[str, Any]
    legal_actions: tuple[LegalAction, ...]
    time_limit_seconds: float
    time_bank_seconds: float


@dataclass(frozen=True)
class Fault:
    """A fault the server recorded against this bot, with a reason its owner can act on."""

    seat: int
    step: int
    kind: str  # timeout | illegal | malformed | disconnect | crash | resign
    reason: str
    action_id: str = ""
    fallback_action_id: str = ""
    forfeit: bool = False


@dataclass(frozen=True)
class MatchResult:
    match_id: str
    seat: int
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    forfeits: tuple[int, ...]
    reason: str
    faults: tuple[Fault, ...]
    result: dict[str, Any]

    @property
    def rank(self) -> int:
        return self.ranks[self.seat] if self.seat < len(self.ranks) else 0


@dataclass(frozen=True)
class ServerError:
    """A message the server refused (`status` is the gRPC status name); `fatal` ends the stream."""

    status: str
    reason: str
    message: str
    match_id: str = ""
    request_id: str = ""
    fatal: bool = False


class Bot(ABC):
    """Subclass and implement `decide`. Override the `on_*` hooks to follow matches.

    `decide` runs in a worker thread, one call per open decision; with `max_concurrent_matches > 1` calls for
    different matches may overlap, so keep per-match state keyed by `match_id` (see `choose`).
    """

    name: str = "bot"
    version: str = "0"
    games: Sequence[str] = ()  # empty: every game the bot is registered for
    max_concurrent_matches: int = 1
    debug_stderr: bool = True  # what `decide` writes to sys.stderr is also its decision's debug text

    @abstractmethod
    def decide(self, observation: dict[str, Any], legal_actions: Sequence[LegalAction]) -> str:
        """Return the id of one of `legal_actions`."""

    def choose(self, request: Request) -> str:
        """The full request (match, step, clock); by default calls `decide(observation, legal_actions)`."""
        return self.decide(request.observation, request.legal_actions)

    def debug(self, *parts: object) -> None:
        """Explain the decision being made, for this bot's owner: call it inside `decide`/`choose`, as often
        as you like (the texts are joined with newlines). It is sent with the answer (`Decision.debug`) and
        shown to the bot's owner only, beside that step on the match page and over REST
        (`/api/v1/matches/<id>/debug/`); never to opponents or spectators, during or after the match. The
        server keeps at most MAX_DEBUG_BYTES (2048) bytes of UTF-8 per decision (a longer text is cut, with a
        marker; never a fault) and removes control characters. Outside a decision the text is only logged.
        What `decide` writes to `sys.stderr` (from its own thread) joins the text too, in order, unless the
        bot sets `debug_stderr = False`; it still reaches stderr (and a hosted bot's log) as well."""
        text = " ".join(str(p) for p in parts)
        kept: list[str] | None = getattr(_decision, "parts", None)
        if kept is None:
            log.info("debug() outside a decision (not sent): %s", text)
            return
        kept.append(text + "\n")

    def on_match_start(self, match: Match) -> None:
        log.info(
            "match %s started: %s seat %d vs %s",
            match.match_id,
            match.game_id,
            match.seat,
            ", ".join(match.opponents),
        )

    def on_match_end(self, match: Match | None, result: MatchResult) -> None:
        log.info(
            "match %s ended: rank %d scores %s (%s)",
            result.match_id,
            result.rank,
            list(result.scores),
            result.reason,
        )
        for fault in result.faults:
            log.warning(
                "match %s fault at step %d: %s: %s", result.match_id, fault.step, fault.kind, fault.reason
            )

    def on_fault(self, match_id: str, fault: Fault) -> None:
        log.warning("match %s step %d: %s fault: %s", match_id, fault.step, fault.kind, fault.reason)

    def on_error(self, error: ServerError) -> None:
        log.warning("server refused a message (%s %s): %s", error.status, error.reason, error.message)


def decide_explained(bot: Bot, request: Request) -> tuple[str, str, BaseException | None]:
    """`bot.choose(request)` with its `debug` texts (and, with `debug_stderr`, its thread's stderr) collected:
    (action id, debug text, the exception `choose` raised or None; then the action id is empty). The text is
    cut to what is worth sending."""
    if bot.debug_stderr:
        _tee_stderr()
    _decision.parts, _decision.stderr = [], bot.debug_stderr
    try:
        action_id, error = str(bot.choose(request)), None
    except Exception as exc:  # the caller answers empty (a "malformed" fault) and logs it
        action_id, error = "", exc
    finally:
        text = "".join(_decision.parts).rstrip("\n")
        del _decision.parts, _decision.stderr
    encoded = text.encode("utf-8", "replace")
    if len(encoded) > _SEND_DEBUG_BYTES:
        text = encoded[:_SEND_DEBUG_BYTES].decode("utf-8", "ignore")
    return action_id, text, error
