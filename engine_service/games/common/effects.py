"""The decision loop of games driven by a stack of pending effects (Voyages, Marco Polo II).

Pure: no Django, no I/O, no RNG. A state keeps `pending`, a list of effect dicts (each with its type "t"
and the deciding "seat"); automatic effects resolve at once, choice effects become small action lists, and
when nothing is pending the seat on turn chooses from its turn menu. A game subclasses `EffectStackState`,
names its `CHOICE_EFFECTS` and `STEP_CAP`, and implements the hooks; this module knows no game's data.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from engine_service.games.base import Action, GameState

Effect = dict[str, Any]


class EffectStackState(GameState):
    CHOICE_EFFECTS: frozenset[str]
    STEP_CAP: int
    phase: str  # setup | play | over
    turn_seat: int
    pending: list[Effect]

    def current_seats(self) -> list[int]:
        if self.phase == "over":
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
            self._resolve(self.pending[0], action)
        else:
            self._turn_apply(seat, action)
        self._run()
        if self.phase != "over" and self.step + 1 >= self.STEP_CAP:
            self._finish("step_cap")

    def _run(self) -> None:
        """Resolve automatic effects and forced choices until a real decision (or the end) is reached."""
        while self.phase != "over":
            if self.pending:
                effect = self.pending[0]
                if effect["t"] not in self.CHOICE_EFFECTS:
                    self.pending.pop(0)
                    self._auto(effect)
                    continue
                actions = self._effect_actions(effect)
                if not actions:
                    self.pending.pop(0)
                    self._abandon(effect)
                    continue
                if len(actions) == 1:
                    self._resolve(effect, actions[0])
                    continue
                return
            if self.phase != "play":
                return
            if self._turn_is_over(self.turn_seat):
                self._end_turn()
                continue
            return

    def _abandon(self, effect: Effect) -> None:
        """A choice effect with no possible action has been dropped; games may settle what it began."""

    @abstractmethod
    def _effect_actions(self, effect: Effect) -> list[Action]: ...

    @abstractmethod
    def _resolve(self, effect: Effect, action: Action) -> None: ...

    @abstractmethod
    def _auto(self, effect: Effect) -> None: ...

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
