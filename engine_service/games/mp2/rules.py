"""Marco Polo II's state and rules (`mp2-v1`), with The Caravans as an option. The package docstring is
the spec.

Pure: no Django, no gRPC, no clock, no global `random`; chance (setup shuffles, dice rolls) comes only from
the state's own `ChanceRng`. The state is plain JSON data: every attribute listed in `_FIELDS`.

Decision machinery (as in Voyages): `pending` is a stack of effects (index 0 = the next to resolve). An
automatic effect is resolved at once; a choice effect is offered to its seat as a finite list of actions
(and resolved without asking when exactly one action is possible). With nothing pending during play, the
seat whose turn it is gets the turn menu: bonus actions, one normal action (a dice placement), and `end`
once allowed. Effects are never mutated in their nested lists (they are replaced), so a shallow copy of
each effect is a copy.

The rules are split by concern along one inheritance chain: `setup_state` (constants, fields' start values,
setup, rounds), `movement` (rewards, routes, arrivals, caravans), `placement` (dice placement), `turn` (the
turn menu); `Mp2State` here adds the saved fields' declarations, the id upgrades, the views and the hidden
information's re-deal.
"""

from __future__ import annotations

from typing import Any

from engine_service.games.base import JsonDict
from engine_service.games.fields import Copy, state_field
from engine_service.games.mp2.setup_state import (
    NUMERALS,
    STEP_CAP,
)
from engine_service.games.mp2.tables import (
    GOALS,
)
from engine_service.games.mp2.turn import Mp2Turn
from engine_service.games.rng import ChanceRng

__all__ = ["PRIVATE_FIELDS", "STEP_CAP", "Mp2State", "deal_hidden"]


class Mp2State(Mp2Turn):
    """One game of Marco Polo II. Everything mutable lives in plain JSON-able attributes."""

    # --- end --------------------------------------------------------------------------------------------
    def upgrade_action_id(self, seat: int, action_id: str) -> str:
        """Ids renamed so that no id belongs to two kinds: a movement's `stop` is now `move:stop` (a caravan's
        stays `stop`), and a single contract taken as a bonus is `contract:take:<city>:<slot>` (the Contracts
        action's stays `take:<city>:<slot>`). Neither id is stored in the state, so old hashes still hold."""
        renamed = {"stop": "move:stop"}.get(action_id)
        if renamed is None and action_id.startswith("take:"):
            renamed = f"contract:{action_id}"
        if renamed is not None and any(a.id == renamed for a in self.legal_actions(seat)):
            return renamed
        return action_id

    # --- views ------------------------------------------------------------------------------------------
    def _public_facts(self) -> JsonDict:
        return {
            "pile_size": len(self.pile),
            "pile_known": list(self.pile[self.pile_hidden :]),
            "card_deck_size": len(self.card_deck),
            "offer_next": {k: (v[0] if v else None) for k, v in self.offer_piles.items()},
            "offer_pile_sizes": {k: len(v) for k, v in self.offer_piles.items()},
            "goal_kept": [bool(g) for g in self.goals],
            "goal_offer_counts": [len(o) for o in self.goal_offers],
            **self.unseen(),
        }

    def _own_goals(self, seat: int) -> JsonDict:
        return {"goal": self.goals[seat]}

    def _revealed(self) -> JsonDict:
        return {"all_goals": list(self.goals), "pile": list(self.pile), "card_deck": list(self.card_deck)}

    def unseen(self) -> JsonDict:
        """What no seat has seen, as sets (sorted): the pile's unseen top, the city-card deck and the offer
        tiles below the visible next tile (with each pile's boxed tile)."""
        return {
            "unseen_contracts": sorted(self.pile[: self.pile_hidden]),
            "unseen_cards": sorted(self.card_deck),
            "unseen_tiles": {
                k: sorted([*self.offer_piles[k][1:], self.offer_box[k]]) for k in sorted(self.offer_piles)
            },
        }

    # --- persistence ------------------------------------------------------------------------------------
    # Marco Polo II's own fields after the family's (`FamilyState`), declared once: how a clone copies each
    # (containers one level below where they change; placements, effects' nested lists, caravans' dicts
    # and events never change in place), which are private. `__init__` sets their start values.
    extra_shields: list[int] = state_field(Copy.SHALLOW)
    spare_figs: list[list[int]] = state_field(Copy.ITEMS)  # Donata's figures, by colour index
    seals: list[dict[str, int]] = state_field(Copy.ITEMS)  # seal -> 1 basic, 2 improved
    brown: dict[str, list[Any]] = state_field(Copy.SHALLOW)
    cards: dict[str, str] = state_field(Copy.SHALLOW)
    card_deck: list[str] = state_field(Copy.SHALLOW, private=True)
    card_box: list[str] = state_field(Copy.SHALLOW)
    outposts: dict[str, str] = state_field(Copy.SHALLOW)
    kept_tiles: list[list[str]] = state_field(Copy.ITEMS)
    markers: dict[str, str] = state_field(Copy.SHALLOW)
    marker_box: str = state_field()
    contract_spaces: dict[str, list[str | None]] = state_field(Copy.SHALLOW)
    pile: list[str] = state_field(Copy.SHALLOW, private=True)  # index 0 is the top
    pile_hidden: int = state_field()  # the unseen top part of the pile (discards go to the public bottom)
    offer_piles: dict[str, list[str]] = state_field(Copy.VALUES, private=True)
    offer_now: dict[str, str] = state_field(Copy.SHALLOW)
    offer_box: dict[str, str] = state_field(Copy.SHALLOW, private=True)
    first_player: int = state_field()
    next_first: int | None = state_field()
    travel_rank: int = state_field()
    vidal_sold: list[bool] = state_field(Copy.SHALLOW)
    tiles: dict[str, str] = state_field(Copy.SHALLOW)  # route tile -> up | down | held
    caravans: list[list[dict[str, Any]]] = state_field(Copy.ITEMS)
    SHARE_LEGAL_CACHE = False  # `shuffle_hidden` changes its copy by hand

    def shuffle_hidden(self, seat: int, rng: ChanceRng) -> Mp2State:
        """Re-deal what `seat` cannot see: other seats' goal cards (and offers), the pile's unseen top, the
        city-card deck, and the offer tiles below each visible next tile (with the boxed ones)."""
        other = self.clone()
        deal_hidden(other, seat, rng, own_goal=self.goals[seat], own_offer=list(self.goal_offers[seat]))
        return other


PRIVATE_FIELDS = Mp2State.PRIVATE_FIELDS  # derived from the declarations: what sampled states redraw


def deal_hidden(state: Mp2State, seat: int, rng: ChanceRng, *, own_goal: str, own_offer: list[str]) -> None:
    """Re-deal, in place, everything `seat` cannot see, keeping every count and public fact."""
    known = set(own_offer) | ({own_goal} if own_goal else set())
    pool = [g for g in sorted(GOALS) if g not in known]
    rng.shuffle(pool)
    for s in range(state.num_players):
        if s == seat:
            continue
        offer = sorted(pool[-len(state.goal_offers[s]) :]) if state.goal_offers[s] else []
        del pool[len(pool) - len(offer) :]
        state.goal_offers[s] = offer
        if state.goals[s]:
            state.goals[s] = rng.choice(offer)
    hidden = sorted(state.pile[: state.pile_hidden])
    rng.shuffle(hidden)
    state.pile = hidden + list(state.pile[state.pile_hidden :])
    deck = sorted(state.card_deck)
    rng.shuffle(deck)
    state.card_deck = deck
    for numeral in NUMERALS:
        pile = state.offer_piles[numeral]
        unseen = sorted([*pile[1:], state.offer_box[numeral]])
        rng.shuffle(unseen)
        state.offer_box[numeral] = unseen.pop()
        state.offer_piles[numeral] = pile[:1] + unseen
