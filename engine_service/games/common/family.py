"""What the Marco Polo family's states share (Voyages, Marco Polo II): the family base state and the effect
kinds both games have in the same form (the character draft, a good, two different goods).

Pure: no Django, no I/O, no RNG of its own. `FamilyState` is an `EffectStackState` with the event log, the
turn order and gaining a bundle (a game may add to a gain, as Marco Polo II's Abha does for jade). A game
declares its own fields, data and rules. Nothing here knows a game's tables.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine_service.games.base import Action, JsonDict
from engine_service.games.common.effects import ChoiceEffect, EffectBase, EffectStackState
from engine_service.games.common.resources import gain

GOOD_PAIRS = (("pepper", "silk"), ("pepper", "gold"), ("silk", "gold"))
GOODS = ("pepper", "silk", "gold")
EVENTS_KEPT = 24


class FamilyState(EffectStackState):
    """The part of a Marco Polo family state both games share (the attributes are the games' own)."""

    chars: list[str]
    res: list[dict[str, int]]
    draft_pool: list[str]
    events: list[JsonDict]
    round: int

    def _log(self, event: JsonDict) -> None:
        self.events.append({"round": self.round, **event})
        if len(self.events) > EVENTS_KEPT:
            del self.events[: len(self.events) - EVENTS_KEPT]

    def _order_from(self, first: int) -> list[int]:
        return [(first + i) % self.num_players for i in range(self.num_players)]

    def _gain(self, seat: int, bundle: Mapping[str, int], times: int = 1) -> None:
        gain(self.res[seat], bundle, times)


# --- effect kinds both games have --------------------------------------------------------------------------
class Draft(ChoiceEffect[FamilyState, EffectBase]):
    """The character draft: one of the characters still in the pool."""

    kind = "draft"

    def actions(self, state: FamilyState, effect: EffectBase) -> list[Action]:
        return [Action(f"pick:{key}", "character", {"character": key}) for key in state.draft_pool]

    def resolve(self, state: FamilyState, effect: EffectBase, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        key = str(action.details["character"])
        state.chars[seat] = key
        state.draft_pool = [k for k in state.draft_pool if k != key]
        state._log({"event": "draft", "seat": seat, "character": key})


class Good(ChoiceEffect[FamilyState, EffectBase]):
    """One good of the seat's choice."""

    kind = "good"

    def actions(self, state: FamilyState, effect: EffectBase) -> list[Action]:
        return [Action(f"good:{g}", "good", {"good": g}) for g in GOODS]

    def resolve(self, state: FamilyState, effect: EffectBase, action: Action) -> None:
        state.pending.pop(0)
        state._gain(int(effect["seat"]), {str(action.details["good"]): 1})


class Goods2(ChoiceEffect[FamilyState, EffectBase]):
    """Two different goods of the seat's choice."""

    kind = "goods2"

    def actions(self, state: FamilyState, effect: EffectBase) -> list[Action]:
        return [Action(f"goods:{a}+{b}", "goods", {"goods": [a, b]}) for a, b in GOOD_PAIRS]

    def resolve(self, state: FamilyState, effect: EffectBase, action: Action) -> None:
        state.pending.pop(0)
        for g in action.details["goods"]:
            state._gain(int(effect["seat"]), {str(g): 1})


def simple(kind: str, seat: int) -> EffectBase:
    """An effect of a kind with no payload beyond its seat (bonus, draft, good, goods2, ...)."""
    return EffectBase(t=kind, seat=seat)


__all__ = ["GOOD_PAIRS", "Draft", "FamilyState", "Good", "Goods2", "simple"]
