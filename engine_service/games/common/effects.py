"""The decision loop of games driven by a stack of pending effects (Voyages, Marco Polo II).

Pure: no Django, no I/O, no RNG. A state keeps `pending`, a list of effect dicts (each with its kind "t"
and the deciding "seat"); automatic effects resolve at once, choice effects become small action lists, and
when nothing is pending the seat on turn chooses from its turn menu.

Each effect kind is one handler class, registered by its `kind`: a `ChoiceEffect` offers `actions` and
`resolves` the one taken (and may settle what it began when it has to be dropped: `abandon`); an
`AutoEffect` just `run`s. A game names its handlers once in `EFFECTS` (built by `registry`), its `STEP_CAP`,
and implements the turn hooks; this module knows no game's data. Effects stay plain JSON dicts (so recorded
matches keep their hashes); each kind documents its keys in a TypedDict next to its handler.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypedDict, TypeVar, cast

from engine_service.games.base import Action, GameState

Effect = dict[str, Any]  # an effect as stored: a JSON dict, whose keys its kind's TypedDict documents

S = TypeVar("S", bound="EffectStackState")
P = TypeVar("P")


class Phase(StrEnum):
    """A game's phase (stored as its plain string)."""

    SETUP = "setup"
    PLAY = "play"
    OVER = "over"


# The values bound once, as plain strings (what a state stores, so that every serializer sees a `str`):
# looking a member up on its enum class is ten times slower than a name, and the decision loop compares
# the phase several times per decision.
SETUP, PLAY, OVER = Phase.SETUP.value, Phase.PLAY.value, Phase.OVER.value


class EffectBase(TypedDict):
    """The keys of every effect: its kind and the seat that decides (or gains)."""

    t: str
    seat: int


class ChoiceEffect(Generic[S, P]):
    """A kind of effect its seat decides: the actions it offers and how the one taken resolves. `resolve`
    pops the effect (`state.pending.pop(0)`) when it is finished; a multi-step one updates it in place."""

    kind: str  # the stored "t" (a class attribute, or set by a configurable handler)
    choice: ClassVar[bool] = True

    @abstractmethod
    def actions(self, state: S, effect: P) -> list[Action]: ...

    @abstractmethod
    def resolve(self, state: S, effect: P, action: Action) -> None: ...

    def abandon(self, state: S, effect: P) -> None:
        """The effect had no possible action and was dropped; settle what it began (default: nothing)."""


class AutoEffect(Generic[S, P]):
    """A kind of effect resolved without a decision (already popped when `run` is called)."""

    kind: str  # the stored "t" (a class attribute, or set by a configurable handler)
    choice: ClassVar[bool] = False

    @abstractmethod
    def run(self, state: S, effect: P) -> None: ...


Handler = ChoiceEffect[Any, Any] | AutoEffect[Any, Any]


def registry(*handlers: Handler) -> dict[str, Handler]:
    """The handlers by kind; a kind named twice is an error."""
    table: dict[str, Handler] = {}
    for handler in handlers:
        if handler.kind in table:
            raise ValueError(f"effect kind {handler.kind!r} is registered twice")
        table[handler.kind] = handler
    return table


def choice_kinds(effects: Mapping[str, Handler]) -> frozenset[str]:
    """The kinds that ask their seat (the rest resolve by themselves)."""
    return frozenset(kind for kind, handler in effects.items() if handler.choice)


class EffectStackState(GameState):
    EFFECTS: ClassVar[Mapping[str, Handler]]
    # EFFECTS split by what a kind does, once per class (the loop then needs no type test per effect)
    CHOICES: ClassVar[dict[str, ChoiceEffect[Any, Any]]]
    AUTOS: ClassVar[dict[str, AutoEffect[Any, Any]]]
    STEP_CAP: int
    phase: str  # a Phase
    turn_seat: int
    pending: list[Effect]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        effects = getattr(cls, "EFFECTS", None)
        if effects is not None:
            cls.CHOICES = {k: h for k, h in effects.items() if isinstance(h, ChoiceEffect)}
            cls.AUTOS = {k: h for k, h in effects.items() if isinstance(h, AutoEffect)}

    def current_seats(self) -> list[int]:
        if self.phase == OVER:
            return []
        if self.pending:
            return [int(self.pending[0]["seat"])]
        return [self.turn_seat]

    def _legal_actions(self, seat: int) -> list[Action]:
        if self.pending:
            return self._effect_actions(self.pending[0])
        return self._turn_actions(seat)

    def _apply(self, seat: int, action: Action) -> None:
        if self.pending:
            effect = self.pending[0]
            self.CHOICES[effect["t"]].resolve(self, effect, action)
        else:
            self._turn_apply(seat, action)
        self._run()
        if self.phase != OVER and self.step + 1 >= self.STEP_CAP:
            self._finish("step_cap")

    def _push(self, effects: Sequence[Mapping[str, Any]]) -> None:
        """Put effects on top of the stack, the first of them to resolve first."""
        self.pending[0:0] = cast(list[Effect], list(effects))

    def _effect_actions(self, effect: Effect) -> list[Action]:
        return self.CHOICES[effect["t"]].actions(self, effect)

    def _run(self) -> None:
        """Resolve automatic effects and forced choices until a real decision (or the end) is reached."""
        while self.phase != OVER:
            if self.pending:
                effect = self.pending[0]
                handler = self.CHOICES.get(effect["t"])
                if handler is None:
                    self.pending.pop(0)
                    self.AUTOS[effect["t"]].run(self, effect)
                    continue
                actions = handler.actions(self, effect)
                if not actions:
                    self.pending.pop(0)
                    handler.abandon(self, effect)
                    continue
                if len(actions) == 1:
                    handler.resolve(self, effect, actions[0])
                    continue
                return
            if self.phase != PLAY:
                return
            if self._turn_is_over(self.turn_seat):
                self._end_turn()
                continue
            return

    @abstractmethod
    def _turn_actions(self, seat: int) -> list[Action]: ...

    @abstractmethod
    def _turn_apply(self, seat: int, action: Action) -> None: ...

    @abstractmethod
    def _turn_is_over(self, seat: int) -> bool:
        """True when the seat on turn has nothing left but ending its turn (the loop ends it)."""

    @abstractmethod
    def _end_turn(self) -> None: ...

    @abstractmethod
    def _finish(self, reason: str) -> None: ...
