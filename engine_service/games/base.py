"""The engine contract every game implements: a static spec, a mutable state, per-seat observations.

Pure: no Django, no gRPC, no clock, no I/O beyond reading packaged data, and never the global `random`.
Chance comes from the `ChanceRng` the state owns, seeded by whoever makes the game (the referee), so a seed
plus the seats' actions is the whole game. A state is JSON-serialisable and hashable.

Roles (OpenSpiel's Game / State / Observer):
- `GameSpec`: what a game is (id, player counts, options) and how to make, load and determinise states.
- `GameState`: one game in progress. Decisions are enumerated: `legal_actions(seat)` is a finite list of
  `Action`s with stable ids, and `apply(seat, action_id)` takes one of those ids.
- Observations: `observation(seat)` holds only what that seat may know; `spectator_view()` hides every
  hand until the game is over.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from itertools import pairwise
from typing import Any, ClassVar, Self, cast

from engine_service.games.fields import Copy, Layout, StateField, collect, extend, json_copy
from engine_service.games.rng import ChanceRng

JsonDict = dict[str, Any]


class GameError(Exception):
    """Base class of the engine's own errors."""


class InvalidOptions(GameError, ValueError):
    """Unknown game, bad player count or bad option value; the message says which and what is allowed."""


class IllegalAction(GameError, ValueError):
    """An action that is not legal for this seat now. Carries the legal ids so a caller can show them."""

    def __init__(self, message: str, *, seat: int, action_id: str, legal_ids: Sequence[str] = ()) -> None:
        self.seat = seat
        self.action_id = action_id
        self.legal_ids = list(legal_ids)
        shown = ", ".join(self.legal_ids[:20])
        more = f" (+{len(self.legal_ids) - 20} more)" if len(self.legal_ids) > 20 else ""
        suffix = f"; legal: {shown}{more}" if self.legal_ids else ""
        super().__init__(f"{message}{suffix}")


@dataclass(frozen=True)
class Action:
    """One legal choice: a stable id (what a bot answers with), a kind, and a JSON description."""

    id: str
    kind: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> JsonDict:
        return {"id": self.id, "kind": self.kind, "details": dict(self.details)}


@dataclass(frozen=True)
class OptionSpec:
    """A game option: its name, default, allowed values (None: any value of `type`) and meaning."""

    name: str
    default: Any
    description: str
    choices: tuple[Any, ...] | None = None

    def to_json(self) -> JsonDict:
        return {
            "name": self.name,
            "default": self.default,
            "choices": list(self.choices) if self.choices is not None else None,
            "description": self.description,
        }


@dataclass(frozen=True)
class GameResult:
    """Final scores, 1-based ranks (tied seats share a rank) and the tie-break values used."""

    scores: list[int]
    ranks: list[int]
    tiebreaks: list[Any]
    reason: str = "completed"

    def to_json(self) -> JsonDict:
        return {
            "scores": self.scores,
            "ranks": self.ranks,
            "tiebreaks": self.tiebreaks,
            "reason": self.reason,
        }

    @staticmethod
    def from_keys(scores: Sequence[int], tiebreaks: Sequence[Any], reason: str = "completed") -> GameResult:
        """Ranks by (score, tiebreak) descending; seats equal on both share a rank."""
        keys = [(scores[i], tiebreaks[i]) for i in range(len(scores))]
        ranks = [1 + sum(1 for other in keys if other > key) for key in keys]
        return GameResult(list(scores), ranks, list(tiebreaks), reason)


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class GameState(ABC):
    """One game in progress. Subclasses implement the underscored hooks and the views, and declare their
    game-specific fields once with `fields.state_field`; the start values, the payload, its loading, `clone`
    and `PRIVATE_FIELDS` are derived from the declarations (`__init_subclass__`)."""

    spec: GameSpec
    _STATE_FIELDS: ClassVar[tuple[StateField, ...]] = ()
    PRIVATE_FIELDS: ClassVar[tuple[str, ...]] = ()  # the declared fields some seat may not see
    _PER_SEAT: ClassVar[tuple[str, ...]] = ()
    _SHALLOW: ClassVar[tuple[str, ...]] = ()
    _ITEMS: ClassVar[tuple[str, ...]] = ()
    _DEEP: ClassVar[tuple[str, ...]] = ()
    _VALUES: ClassVar[tuple[str, ...]] = ()
    _NESTED: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]] = ()
    _DEFAULTS: ClassVar[dict[str, Any]] = {}
    _MADE: ClassVar[tuple[tuple[str, Callable[[Any], Any]], ...]] = ()
    TRANSIENT: ClassVar[tuple[str, ...]] = ()  # per-state caches (not state) that a clone leaves out
    SHARE_LEGAL_CACHE: ClassVar[bool] = True  # False where copies are changed by hand without clearing it

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = collect(vars(cls))
        if not declared:
            return
        for declaration in declared:
            delattr(cls, declaration.name)  # an instance holds the value; the class keeps only the layout
        layout = Layout(extend(cls._STATE_FIELDS, declared))
        cls._STATE_FIELDS = layout.fields
        cls._FIELDS = layout.names
        cls.PRIVATE_FIELDS = layout.private
        cls._PER_SEAT = layout.per_seat
        cls._SHALLOW = layout.copied(Copy.SHALLOW)
        cls._ITEMS = layout.copied(Copy.ITEMS)
        cls._DEEP = layout.copied(Copy.DEEP)
        cls._VALUES = layout.copied(Copy.VALUES)
        cls._NESTED = layout.nested
        cls._DEFAULTS = layout.defaults
        cls._MADE = layout.made

    def __init__(self, *, num_players: int, options: Mapping[str, Any], rng: ChanceRng) -> None:
        self.num_players = num_players
        self.options = dict(options)
        self.rng = rng
        self.step = 0
        self.revision = self.spec.revision  # the rules revision this game is played under
        self._legal_cache: tuple[int, int, list[Action]] | None = None
        self.__dict__.update(self._DEFAULTS)
        for name, make in self._MADE:
            setattr(self, name, make(self))

    # --- decisions -------------------------------------------------------------------------------------
    @abstractmethod
    def current_seats(self) -> list[int]:
        """The seats that must decide now (empty when the game is over)."""

    def legal_actions(self, seat: int) -> list[Action]:
        """The finite list of actions `seat` may take now (empty if it is not to decide)."""
        cached = self._legal_cache
        if cached is not None and cached[0] == self.step and cached[1] == seat:
            return cached[2]
        actions = self._legal_actions(seat) if seat in self.current_seats() else []
        self._legal_cache = (self.step, seat, actions)
        return actions

    @abstractmethod
    def _legal_actions(self, seat: int) -> list[Action]: ...

    def apply(self, seat: int, action_id: str) -> Action:
        """Apply one legal action by id; raise `IllegalAction` (changing nothing) otherwise."""
        if self.is_over():
            raise IllegalAction("the game is over", seat=seat, action_id=action_id)
        if seat not in self.current_seats():
            raise IllegalAction(
                f"seat {seat} is not to decide now (deciding: {self.current_seats()})",
                seat=seat,
                action_id=action_id,
            )
        legal = self.legal_actions(seat)
        for action in legal:
            if action.id == action_id:
                self._apply(seat, action)
                self.step += 1
                self._legal_cache = None
                return action
        raise IllegalAction(
            f"action {action_id!r} is not legal for seat {seat} at step {self.step}",
            seat=seat,
            action_id=action_id,
            legal_ids=[a.id for a in legal],
        )

    def upgrade_action_id(self, seat: int, action_id: str) -> str:
        """The current id of an action that an older record names by an id this game no longer uses (ids
        were made to follow one grammar); `action_id` itself when there is none. Only replays of stored
        records call this: a bot must send current ids."""
        return action_id

    @abstractmethod
    def _apply(self, seat: int, action: Action) -> None: ...

    # --- end --------------------------------------------------------------------------------------------
    @abstractmethod
    def is_over(self) -> bool: ...

    @abstractmethod
    def result(self) -> GameResult:
        """The final result; only valid once `is_over()`."""

    # --- views ------------------------------------------------------------------------------------------
    @abstractmethod
    def observation(self, seat: int) -> JsonDict:
        """Everything `seat` may know, and nothing more (JSON). Always holds "game_id", "seat" and "step"."""

    @abstractmethod
    def spectator_view(self, *, reveal: bool = False) -> JsonDict:
        """The public table; with `reveal` (only after the game ends) every hidden card too."""

    # --- persistence ------------------------------------------------------------------------------------
    _FIELDS: tuple[str, ...] = ()  # the game-specific part of the state (derived from declared fields)

    def _payload(self) -> JsonDict:
        """The game-specific part of the state as JSON (everything but options, rng and step)."""
        return {name: json_copy(getattr(self, name)) for name in self._FIELDS}

    def load_payload(self, payload: Mapping[str, Any]) -> None:
        """Restore the game-specific part from `_payload()`'s JSON; raise ValueError if it is malformed."""
        missing = [name for name in self._FIELDS if name not in payload]
        if missing:
            raise ValueError(f"{self.spec.game_id} state is missing {', '.join(missing)}")
        for name in self._FIELDS:
            setattr(self, name, json_copy(payload[name]))
        for name in self._PER_SEAT:
            if len(getattr(self, name)) != self.num_players:
                raise ValueError(f"{self.spec.game_id} state: {name} must hold one entry per seat")

    def to_json(self) -> JsonDict:
        return self._json(self._payload())

    def _json(self, payload: JsonDict) -> JsonDict:
        data = {
            "game_id": self.spec.game_id,
            "num_players": self.num_players,
            "options": self.options,
            "rng": self.rng.state,
            "step": self.step,
            "state": payload,
        }
        if self.revision != 1:  # states of the first revision hash as they did before revisions existed
            data["revision"] = self.revision
        return data

    def state_hash(self) -> str:
        """The digest of `to_json()`, serialised straight from the fields (no copy: nothing keeps it)."""
        live = {name: getattr(self, name) for name in self._FIELDS}
        return hashlib.sha256(canonical_json(self._json(live)).encode()).hexdigest()[:32]

    def clone(self) -> Self:
        """An independent copy: each declared field copied as its `Copy` says (search bots clone a lot, so
        never deeper). The legal-list cache is shared: it holds for the copy as for the original, and like
        the original's it must be cleared (`_legal_cache = None`) by whoever changes the copy other than
        through `apply`. A state that declares no fields is copied through JSON."""
        if not self._STATE_FIELDS:
            return cast(Self, self.spec.state_from_json(json.loads(json.dumps(self.to_json()))))
        other = object.__new__(type(self))
        values = other.__dict__
        values.update(self.__dict__)
        other.rng = ChanceRng(self.rng.state)
        other.options = dict(self.options)
        if not self.SHARE_LEGAL_CACHE:
            other._legal_cache = None
        for name in self.TRANSIENT:
            values.pop(name, None)
        for name in self._SHALLOW:
            values[name] = values[name].copy()
        for name in self._ITEMS:
            values[name] = [item.copy() for item in values[name]]
        for name in self._DEEP:
            values[name] = json_copy(values[name])
        for name in self._VALUES:
            values[name] = {key: value.copy() for key, value in values[name].items()}
        for name, keys in self._NESTED:
            value = values[name] = values[name].copy()
            for key in keys:
                value[key] = value[key].copy()
        return other

    # --- hidden information (used by the conformance suite) ---------------------------------------------
    @abstractmethod
    def shuffle_hidden(self, seat: int, rng: ChanceRng) -> GameState:
        """A copy in which everything `seat` cannot see (other hands, deck order) is re-dealt at random,
        keeping every public fact (counts included). `seat`'s observation must not change."""


@dataclass(frozen=True)
class Progress:
    """Where a game stands, for a replay's jumps: the round, and the number of player turns begun so far
    (each new value of `turn` starts a turn). None where a game has no such notion."""

    round: int | None = None
    turn: int | None = None


class GameSpec(ABC):
    """The static description of a game and the factory of its states."""

    game_id: str
    name: str
    min_players: int
    max_players: int
    options: tuple[OptionSpec, ...] = ()
    summary: str = ""
    turn_cap_note: str = ""
    search_settings: Mapping[str, Any] = {}  # overrides of the `mcts` house bot's defaults for this game
    # The rules revision new games are played under. A fix that makes recorded matches replay differently
    # without changing what the game is bumps it; a state and a match record name the revision they were
    # played under (1 when they name none), and every earlier revision stays playable for their replays.
    revision: int = 1

    def resolve_options(self, options: Mapping[str, Any] | None, num_players: int) -> JsonDict:
        """Fill defaults and validate; raise `InvalidOptions` naming the bad option and what is allowed."""
        if not self.min_players <= num_players <= self.max_players:
            raise InvalidOptions(
                f"{self.game_id} plays {self.min_players}-{self.max_players} players, not {num_players}"
            )
        given = dict(options or {})
        known = {opt.name: opt for opt in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise InvalidOptions(
                f"unknown option(s) {', '.join(unknown)} for {self.game_id}; known: {', '.join(known) or 'none'}"
            )
        resolved: JsonDict = {}
        for name, opt in known.items():
            value = given.get(name, opt.default)
            if opt.choices is not None and value not in opt.choices:
                raise InvalidOptions(f"option {name}={value!r} is not one of {list(opt.choices)}")
            if opt.choices is None and type(value) is not type(opt.default):
                raise InvalidOptions(f"option {name} must be a {type(opt.default).__name__}, not {value!r}")
            resolved[name] = value
        return resolved

    def check_revision(self, revision: int | None) -> int:
        """`revision` if this game has it (None: the current one); `InvalidOptions` otherwise."""
        if revision is None:
            return self.revision
        if type(revision) is not int or not 1 <= revision <= self.revision:
            raise InvalidOptions(f"{self.game_id} has rules revisions 1-{self.revision}, not {revision!r}")
        return revision

    def new_state(
        self,
        num_players: int,
        seed: int,
        options: Mapping[str, Any] | None = None,
        *,
        revision: int | None = None,
    ) -> GameState:
        """A new game; under the current rules revision unless `revision` names an earlier one (replays)."""
        resolved = self.resolve_options(options, num_players)
        chosen = self.check_revision(revision)
        state = self._new_state(num_players, ChanceRng(seed), resolved)
        state.revision = chosen  # revisions change play, never the setup
        return state

    @abstractmethod
    def _new_state(self, num_players: int, rng: ChanceRng, options: JsonDict) -> GameState: ...

    state_class: type[GameState]

    def state_from_json(self, data: Mapping[str, Any]) -> GameState:
        """Load a state saved by `GameState.to_json()`; `InvalidOptions` if it is not one of this game's."""
        try:
            players = int(data["num_players"])
            options = self.resolve_options(data.get("options"), players)
            state = self.state_class(num_players=players, options=options, rng=ChanceRng(int(data["rng"])))
            state.step = int(data["step"])
            state.revision = self.check_revision(data.get("revision", 1))
            state.load_payload(data["state"])
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, InvalidOptions):
                raise
            raise InvalidOptions(f"not a saved {self.game_id} state: {exc!r}") from exc
        return state

    @abstractmethod
    def sample_state(self, observation: Mapping[str, Any], rng: ChanceRng) -> GameState:
        """A full state consistent with one seat's observation, hidden parts drawn at random (for search
        bots: they call this, never look at the true state)."""

    @abstractmethod
    def heuristic(self, state: GameState, seat: int) -> float:
        """A seat's prospects in points, judged only from what that seat can know (its observation); used by
        the greedy and search house bots on sampled states."""

    @abstractmethod
    def render_view(self, view: Mapping[str, Any]) -> str:
        """A readable text frame of an observation or spectator view (for `caravan replay show`)."""

    # Words and pictures for replays: `engine_service.referee.frames` builds every frame from these, so the
    # CLI's `caravan replay show` and the web viewer say the same things. Seats are named "seat N" (the web
    # shows each seat's bot beside it). They read only public facts of what they are given.

    def board(self) -> JsonDict | None:
        """The static board a replay viewer draws (track, map, spaces), from the game's own data; None when
        the game has none."""
        return None

    def reference(self) -> JsonDict | None:
        """The game's reference for bot authors, from its package's `data/reference.json`: JSON Schemas
        of the observation and of each action kind's `details`, every field described, each kind's id
        pattern, grammar and examples, and which first action is safe. The conformance suite checks every
        observation and action of random games against it. None when the game has none."""
        return _reference(type(self).__module__)

    def events_of(self, view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """The events a view carries (its log), oldest first."""
        events = view.get("events")
        return list(events) if isinstance(events, list) else []

    def describe_event(self, event: Mapping[str, Any]) -> str:
        """One event of a view's log as a plain sentence ("seat 1 placed two dice on the bazaar")."""
        who = f"seat {event['seat']} " if isinstance(event.get("seat"), int) else ""
        rest = ", ".join(f"{k} {v}" for k, v in event.items() if k not in ("event", "seat", "round", "turn"))
        return f"{who}{str(event.get('event', 'event')).replace('_', ' ')}{': ' + rest if rest else ''}"

    def describe_action(self, state: GameState, seat: int, action_id: str) -> str:
        """The action `action_id`, legal for `seat` in `state` and not yet applied, in words."""
        for action in state.legal_actions(seat):
            if action.id == action_id:
                return f"{action.kind.replace('_', ' ')} ({action_id})"
        return action_id

    def describe_result(self, state: GameState, result: GameResult) -> list[str]:
        """The final screen of a finished game: one line per seat in rank order (rank, score), then how
        ties were broken, if any were."""
        order = sorted(range(len(result.ranks)), key=lambda s: (result.ranks[s], s))
        lines = [f"{ordinal(result.ranks[s])}: seat {s} with {result.scores[s]} points" for s in order]
        for rank in sorted(set(result.ranks)):
            tied = [s for s in order if result.ranks[s] == rank]
            if len(tied) > 1:
                lines.append(f"seats {_seat_list(tied)} tie on score and tie-break and share the rank")
        for a, b in pairwise(order):
            if result.scores[a] == result.scores[b] and result.ranks[a] != result.ranks[b]:
                lines.append(
                    f"seat {a} ranks above seat {b} on the tie-break "
                    f"({result.tiebreaks[a]} against {result.tiebreaks[b]})"
                )
        return lines

    def progress(self, state: GameState) -> Progress:
        """The round and turn count of `state`, for a replay's jumps by round and by turn."""
        return Progress()

    def option_variants(self, num_players: int) -> list[JsonDict]:
        """The option sets worth covering for this player count (the conformance suite runs each);
        defaults only, unless a game names more."""
        return [{}]

    def describe(self) -> JsonDict:
        return {
            "game_id": self.game_id,
            "name": self.name,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "options": [opt.to_json() for opt in self.options],
            "summary": self.summary,
            "turn_cap": self.turn_cap_note,
        }


def ordinal(rank: int) -> str:
    """1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= rank % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(rank % 10, "th")
    return f"{rank}{suffix}"


def _seat_list(seats: Sequence[int]) -> str:
    names = [str(s) for s in seats]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@cache
def _reference(package: str) -> JsonDict | None:
    path = resources.files(package).joinpath("data/reference.json")
    if not path.is_file():
        return None
    data: JsonDict = json.loads(path.read_text())
    return data
