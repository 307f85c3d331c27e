"""The Voyages of Marco Polo's state and rules (`voyages-v1`). The package docstring is the spec.

Pure: no Django, no gRPC, no clock, no global `random`; chance (setup shuffles, dice rolls) comes only from
the state's own `ChanceRng`. The state is plain JSON data: every attribute listed in `_FIELDS`.

Decision machinery (`common.effects`): `pending` is a stack of effects (index 0 = the next to resolve). An
automatic effect is resolved at once; a choice effect is offered to its seat as a finite list of actions
(and resolved without asking when exactly one action is possible). Each effect kind, its payload, actions
and resolution, is one handler in `effects.py`. With nothing pending during play, the seat whose turn it is
gets the turn menu: bonus actions, one main action (a dice placement), and `end` once allowed. Effects
never mutate their nested lists in place (they are replaced), so a shallow copy of each effect is a copy.

The rules are split by concern along one inheritance chain: `setup_state` (constants, fields' start values,
setup, helpers, rounds), `movement` (rewards, routes, arrivals), `placement` (dice placement), `turn` (the turn
menu); `VoyagesState` here adds the views, the saved fields' declarations and the hidden information's re-deal.
"""

from __future__ import annotations

from engine_service.games.base import JsonDict
from engine_service.games.fields import Copy, state_field
from engine_service.games.rng import ChanceRng
from engine_service.games.voyages.setup_state import (
    RULES_REVISION,
    STEP_CAP,
)
from engine_service.games.voyages.tables import (
    GOALS,
    NODE_BY_SLUG,
)
from engine_service.games.voyages.turn import VoyagesTurn

__all__ = ["PRIVATE_FIELDS", "RULES_REVISION", "STEP_CAP", "VoyagesState", "node_id"]


class VoyagesState(VoyagesTurn):
    """One game of The Voyages of Marco Polo. Everything mutable lives in plain JSON-able attributes."""

    # --- views ------------------------------------------------------------------------------------------
    def _public_facts(self) -> JsonDict:
        hidden = self.special_hidden
        return {
            "round_pile_sizes": [len(p) for p in self.round_piles],
            "special_known": list(self.special[hidden:]),
            "goal_counts": [len(g) for g in self.goals],
            "goal_offer_counts": [len(g) for g in self.goal_offers],
            "unseen_contracts": self.unseen_contracts(),
        }

    def _own_goals(self, seat: int) -> JsonDict:
        return {"goals": list(self.goals[seat])}

    def _revealed(self) -> JsonDict:
        return {
            "all_goals": [list(g) for g in self.goals],
            "round_piles": [list(p) for p in self.round_piles],
            "special": list(self.special),
        }

    # --- persistence ------------------------------------------------------------------------------------
    # Voyages' own fields after the family's (`FamilyState`), declared once: how a clone copies each (nested
    # lists one level below where they change; placements, effects' nested lists and events never change in
    # place), which are private. `__init__` sets their start values.
    goals: list[list[int]] = state_field(Copy.ITEMS, private=True)  # two goal cards each (a family field)
    cards: list[int] = state_field(Copy.SHALLOW)
    card_used: list[int | None] = state_field(Copy.SHALLOW)
    outposts: dict[str, int] = state_field(Copy.SHALLOW)
    city_bonus: dict[str, str] = state_field(Copy.SHALLOW)
    board: list[int] = state_field(Copy.SHALLOW)
    round_piles: list[list[int]] = state_field(Copy.ITEMS, private=True)
    special: list[int] = state_field(Copy.SHALLOW, private=True)
    special_hidden: int = state_field()
    beijing: list[int | None] = state_field(Copy.SHALLOW)
    start_player: int = state_field()
    last_travel: int | None = state_field()
    TRANSIENT = ("_resolved",)  # the heuristic's per-state cache
    SHARE_LEGAL_CACHE = False  # `shuffle_hidden` and the bench's players change copies by hand

    def shuffle_hidden(self, seat: int, rng: ChanceRng) -> VoyagesState:
        """Re-deal what `seat` cannot see: other seats' goal cards (and offers), the round piles and the
        unseen top of the special pile."""
        other = self.clone()
        known_goals = set(self.goals[seat]) | set(self.goal_offers[seat])
        pool = [g for g in sorted(GOALS) if g not in known_goals]
        rng.shuffle(pool)
        for s in range(self.num_players):
            if s == seat:
                continue
            offer_size, kept_size = len(self.goal_offers[s]), len(self.goals[s])
            drawn = pool[: max(offer_size, kept_size)]
            pool = pool[max(offer_size, kept_size) :]
            other.goal_offers[s] = sorted(drawn[:offer_size])
            other.goals[s] = sorted(drawn[:kept_size])
        unknown = list(self.special[: self.special_hidden]) + [c for p in self.round_piles for c in p]
        rng.shuffle(unknown)
        other.special = unknown[: self.special_hidden] + list(self.special[self.special_hidden :])
        rest = unknown[self.special_hidden :]
        piles = []
        for p in self.round_piles:
            piles.append(rest[: len(p)])
            rest = rest[len(p) :]
        other.round_piles = piles
        return other

    # --- facts used by views, scoring and the heuristic -------------------------------------------------
    def unseen_contracts(self) -> list[int]:
        """Regular contracts no seat has seen (in the round piles or the unseen top of the special pile)."""
        return sorted(list(self.special[: self.special_hidden]) + [c for p in self.round_piles for c in p])


PRIVATE_FIELDS = VoyagesState.PRIVATE_FIELDS  # derived from the declarations: what sampled states redraw


def node_id(slug: str) -> int:
    return NODE_BY_SLUG[slug]
