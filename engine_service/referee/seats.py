"""Seats: who decides for a player. A house seat runs an in-process policy; a remote seat (the gateway's
relay) asks a connected bot. Both look the same to the referee.

A seat sees a `DecisionRequest` (its observation and the legal actions), never the game state.

Limits on what a bot sends back: an action id is at most `MAX_ACTION_ID_BYTES` bytes (UTF-8), and any
string of the bot's own that is quoted back to it or into a record (an action id, an id) is cut by `clip`
to `ECHO_CHARS` characters, so a bot can never make a record or a message grow by what it sends.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from engine_service.games import Action
from engine_service.policies.base import Policy

MAX_ACTION_ID_BYTES = 256
ECHO_CHARS = 64


def clip(text: str, limit: int = ECHO_CHARS) -> str:
    """`text` cut to `limit` characters, noting the original length when it was longer."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def oversized_action_id(action_id: str) -> str | None:
    """Why an action id is too long to be read, or None when it is within `MAX_ACTION_ID_BYTES`."""
    size = len(action_id.encode("utf-8", "surrogatepass"))
    if size <= MAX_ACTION_ID_BYTES:
        return None
    return f"action id of {size} bytes is over the {MAX_ACTION_ID_BYTES}-byte limit ({clip(action_id)!r})"


class SeatFault(Exception):
    """A bot fault: `kind` is timeout, illegal, malformed, disconnect, crash or resign; `reason` is for its
    owner."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason
        super().__init__(f"{kind}: {reason}")


class MatchAborted(Exception):
    """An infrastructure failure (no gateway reachable, registry down), not a bot fault: `run_match` lets it
    through so the caller can retry the match, unrated."""


class SeatUnavailable(MatchAborted):
    """A seat's bot had no stream with room when the match was to start: the match is aborted before its
    first decision, unrated and never forfeited (nobody has played), and the seats already started are told
    (`Seat.abort`). The caller cancels it rather than retrying."""


@dataclass(frozen=True)
class MatchInfo:
    match_id: str
    game_id: str
    num_players: int
    options: dict[str, Any]
    seat: int
    opponents: list[str]
    decision_seconds: float
    time_bank_seconds: float
    max_faults: int = 3


@dataclass
class DecisionRequest:
    match_id: str
    game_id: str
    seat: int
    step: int
    request_id: str
    observation: dict[str, Any]
    legal_actions: list[Action]
    deadline_seconds: float  # for this decision, time bank included
    time_bank_seconds: float  # what is left of the bank before this decision
    extra: dict[str, Any] = field(default_factory=dict)
    fault_forfeits: bool = False  # a fault on this decision forfeits the match (max_faults used up)


class Seat(ABC):
    """One player's decision maker for one match. A `clocked` seat is charged its time against the decision
    time and the bank (a bot over both times out); an unclocked one is never (house bots: `HouseSeat`)."""

    name: str
    kind: str = "house"
    bot_id: str | None = None
    clocked: bool = True
    version: str = ""  # the version the bot reported, known once `start` returns ("" when none)

    def start(self, info: MatchInfo) -> None:  # noqa: B027 - optional hook
        """Called once before the first decision."""

    @abstractmethod
    def decide(self, request: DecisionRequest) -> str:
        """Return one legal action id, or raise `SeatFault`."""

    def end(self, info: MatchInfo, summary: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Called once after the match ends (result, ranks, this seat's faults)."""

    def abort(self, info: MatchInfo, reason: str) -> None:  # noqa: B027 - optional hook
        """Called instead of `end` for a started seat when the match is aborted before it began."""


class HouseSeat(Seat):
    """An in-process policy: it sees the observation and the legal actions, nothing else.

    House seats are not clocked (`clocked = False`): a house bot never loses on time. Its strength is a
    budget of search iterations, not of seconds, so how long a decision takes says only how busy our own
    machine is (a search process whose queue the runner keeps full, a CPU-starved worker), never how well
    the bot plays; charging that time would turn our overload into forfeits that are rated. The record
    stays replayable either way: it holds the actions, and the policy's seeded RNG and iteration budget
    make the same choices on any machine. A house policy that raises is still a `crash` fault, recorded.
    An anytime cap (best-so-far at a deadline) was the other choice, and is not taken: a record would still
    replay, but the moves would depend on the machine's speed, so the same seed would no longer make the
    same bot, and a level's measured strength would hold only on the machine it was measured on.
    """

    kind = "house"
    clocked = False

    def __init__(self, policy: Policy, name: str | None = None) -> None:
        self.policy = policy
        self.name = name or policy.name

    def start(self, info: MatchInfo) -> None:
        self.policy.reset(info.game_id, info.seat)

    def decide(self, request: DecisionRequest) -> str:
        return self.policy.choose(request.observation, request.legal_actions)
