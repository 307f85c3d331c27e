"""The match record: everything needed to replay a match exactly, and what happened in it.

A replay is game id + options + seed + seats + action log, with a state hash every `hash_every` steps
(and after the last step). `revision` is the game's rules revision the match was played under
(`GameSpec.revision`); the JSON holds it only when it is above 1, and a record without it was played under
revision 1 (records from before revisions existed), so a rules fix never changes how an old record replays.
`debug` holds the bots' own texts by step (`Decision.debug`, `referee.debug_text`): their owners' alone, so
`to_json()` (and `dumps`, `dump`: what is stored as the replay and served) leaves them out unless asked
(`private=True`); they are not part of the replay, its frames or its hashes. `clocks` holds, per decision
asked, the seconds the seat was charged (the seat's own measure first) and its bank left after (None for an
unclocked house seat): measured, so kept beside the replay, never part of its hashes; written only when any.
Pure data: no I/O except `load`/`dump` helpers for files.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine_service.games import get_game

RECORD_FORMAT = "caravanserai-match/1"


class RecordError(ValueError):
    """A record that cannot be read: the message says what is missing or malformed."""


@dataclass
class SeatInfo:
    seat: int
    name: str
    kind: str = "house"  # "house" (in-process policy) or "remote" (a connected bot)
    bot_id: str | None = None
    version: str = ""  # the version the bot reported (its Hello's bot_version); "" when unknown


@dataclass
class Fault:
    """A bot fault: what went wrong, at which step, and what the referee did about it."""

    seat: int
    step: int
    kind: str  # timeout | illegal | malformed | disconnect | crash | resign
    reason: str
    action_id: str | None = None
    fallback_action: str | None = None
    forfeit: bool = False


@dataclass
class MatchRecord:
    game_id: str
    num_players: int
    options: dict[str, Any]
    seed: int
    seats: list[SeatInfo]
    actions: list[tuple[int, str]] = field(default_factory=list)  # (seat, action id) per step
    hash_every: int = 10
    hashes: dict[int, str] = field(default_factory=dict)  # step -> state hash after `step` actions
    result: dict[str, Any] | None = None
    faults: list[Fault] = field(default_factory=list)
    forfeits: list[int] = field(default_factory=list)
    match_id: str | None = None
    # infrastructure events that are not faults (a gateway restart a remote seat survived): seat, step, kind,
    # reason; only written to JSON when there are any
    incidents: list[dict[str, Any]] = field(default_factory=list)
    revision: int | None = None  # the game's rules revision; None: its current one (a match being played)
    # per decision asked (step -> [seconds the seat used, its time bank left after, or None if unclocked]);
    # measured, so not part of the replay: only written to JSON when there are any
    clocks: dict[int, list[float | None]] = field(default_factory=dict)
    # step -> the deciding seat's debug text (cleaned); private to the seat's owner: see the docstring
    debug: dict[int, str] = field(default_factory=dict)

    @property
    def rules_revision(self) -> int:
        return self.revision if self.revision is not None else get_game(self.game_id).revision

    @property
    def steps(self) -> int:
        return len(self.actions)

    def to_json(self, *, private: bool = False) -> dict[str, Any]:
        """The record as JSON; with `private`, the bots' debug texts too (never for anyone but their owners)."""
        data = {
            "format": RECORD_FORMAT,
            "match_id": self.match_id,
            "game_id": self.game_id,
            "num_players": self.num_players,
            "options": self.options,
            "seed": self.seed,
            "seats": [_seat_json(s) for s in self.seats],
            "actions": [[seat, action] for seat, action in self.actions],
            "hash_every": self.hash_every,
            "hashes": {str(step): h for step, h in sorted(self.hashes.items())},
            "result": self.result,
            "faults": [asdict(f) for f in self.faults],
            "forfeits": list(self.forfeits),
        }
        if self.incidents:
            data["incidents"] = [dict(i) for i in self.incidents]
        if self.rules_revision != 1:
            data["revision"] = self.rules_revision
        if self.clocks:
            data["clocks"] = {str(step): list(c) for step, c in sorted(self.clocks.items())}
        if private and self.debug:
            data["debug"] = {str(step): text for step, text in sorted(self.debug.items())}
        return data

    @staticmethod
    def from_json(data: Any) -> MatchRecord:
        if not isinstance(data, dict):
            raise RecordError("a match record must be a JSON object")
        if data.get("format") != RECORD_FORMAT:
            raise RecordError(f"unknown record format {data.get('format')!r}; expected {RECORD_FORMAT!r}")
        try:
            actions = [(int(seat), str(action)) for seat, action in data["actions"]]
            return MatchRecord(
                match_id=data.get("match_id"),
                game_id=str(data["game_id"]),
                num_players=int(data["num_players"]),
                options=dict(data.get("options") or {}),
                seed=int(data["seed"]),
                seats=[SeatInfo(**s) for s in data["seats"]],
                actions=actions,
                hash_every=int(data.get("hash_every", 10)),
                hashes={int(k): str(v) for k, v in (data.get("hashes") or {}).items()},
                result=data.get("result"),
                faults=[Fault(**f) for f in data.get("faults") or []],
                forfeits=[int(s) for s in data.get("forfeits") or []],
                incidents=[dict(i) for i in data.get("incidents") or []],
                revision=int(data.get("revision", 1)),
                clocks={int(k): _clock(v) for k, v in (data.get("clocks") or {}).items()},
                debug={int(k): str(v) for k, v in (data.get("debug") or {}).items()},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"malformed match record: {exc!r}") from exc

    def dumps(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))

    @staticmethod
    def loads(text: str) -> MatchRecord:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"not JSON: {exc}") from exc
        return MatchRecord.from_json(data)

    def dump(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1))

    @staticmethod
    def load(path: str | Path) -> MatchRecord:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise RecordError(f"cannot read {path}: {exc.strerror}") from exc
        return MatchRecord.loads(text)


def _clock(value: Any) -> list[float | None]:
    seconds, bank = value
    return [float(seconds), None if bank is None else float(bank)]


def _seat_json(seat: SeatInfo) -> dict[str, Any]:
    """A seat as JSON; `version` only when known, so records of bots that report none stay as they were."""
    data = asdict(seat)
    if not data["version"]:
        del data["version"]
    return data
