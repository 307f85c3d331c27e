"""Marco Polo: Dragonda's state and rules (`dragonda-v1`). The package docstring is the spec.

Layer: pure game rules. No Django, no gRPC, no clock, no I/O beyond the packaged data (`board`), never the
global `random`: every die and shuffle comes from the state's own `ChanceRng`.

The state is a small automaton: `phase` names where the current turn stands, and `stack` holds pending
sub-decisions of any seat (a defence by an attacked seat, goods to give back), each kind one unit of
`pending.py` (its frame's keys, its actions, its resolution). `_run` performs every automatic step
(drawing, rolling, upkeep at sea, the end of a turn) until a decision is needed. The state's fields are
declared once (`fields.state_field`) at the top of `DragondaSetup` (`setup_state`).

Action ids follow one grammar: a verb, then its arguments, each after a colon (`buy:SP:5`,
`attack:FALSE_GUIDE:s2`, `move:ACR:via:DAM`), no spaces; an Adventure card is named by its name with
underscores for spaces (`card_slug`); each kind has ids of its own (`done:trade`, `done:cards`,
`done:transport`; `accept:roll`, `accept:attack`; `means:<m>` in the opening, `buy_means:<m>` later).
`data/reference.json` documents every kind. Records made before this grammar name actions by their older
ids (`legacy_id`), which `upgrade_action_id` maps to the current ones; the state itself holds no action id
(the log names cards by their printed names), so those records' state hashes are unchanged.

The rules are split by concern along one inheritance chain: `setup_state` (constants, fields, setup,
helpers), `actions` (the legal-action lists and the moves' search), `automaton` (the turn automaton, the
Event cards and applying decisions); `DragondaState` here adds the end, the views, loading's checks and the
hidden information's re-deal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine_service.games.base import GameResult, JsonDict
from engine_service.games.dragonda.actions import legacy_id, quantities
from engine_service.games.dragonda.automaton import DragondaAutomaton
from engine_service.games.dragonda.board import (
    BOARD,
    MEANS_TABLE,
)
from engine_service.games.dragonda.board import card_slug as card_slug  # re-exported: tests and bots use it
from engine_service.games.dragonda.board import cargo_total as cargo_total
from engine_service.games.dragonda.setup_state import (
    BONUS_XP,
    DECISION_PHASES,
    DEFAULT_ROUND_CAP,
    PASSAGE_MONEY,
    WIN_XP,
)
from engine_service.games.rng import ChanceRng

__all__ = [
    "BONUS_XP",
    "DEFAULT_ROUND_CAP",
    "PASSAGE_MONEY",
    "WIN_XP",
    "DragondaState",
    "card_slug",
    "cargo_total",
    "deal_hidden",
    "legacy_id",
    "quantities",
]


class DragondaState(DragondaAutomaton):
    """One game of Marco Polo: Dragonda. Its state is the fields declared on `DragondaSetup` (plain JSON
    values), in saving order; `GameState` derives the start values, saving, loading and `clone` from them."""

    # --- end --------------------------------------------------------------------------------------------
    def is_over(self) -> bool:
        return self.phase == "over"

    def scores(self) -> list[int]:
        """Victory conditions met out of 6, plus 1 for the winner (so the winner always ranks first)."""
        return [self.conditions_met(s) + (1 if self.winner == s else 0) for s in range(self.num_players)]

    def tiebreaks(self) -> list[list[int]]:
        """XP, then fewest steps to VEN (negated), then zecchini (spec 1.13)."""
        return [
            [self.xp[s], -BOARD.home_distance(self.pos[s]), self.money[s]] for s in range(self.num_players)
        ]

    def result(self) -> GameResult:
        if not self.is_over():
            raise ValueError("the game is not over")
        return GameResult.from_keys(self.scores(), self.tiebreaks(), self.end_reason or "completed")

    # --- views ------------------------------------------------------------------------------------------
    def _public(self) -> JsonDict:
        deciding = self.current_seats()
        return {
            "game_id": self.spec.game_id,
            "step": self.step,
            "num_players": self.num_players,
            "round_cap": self.round_cap,
            "round": self.round,
            "order": list(self.order),
            "start_rolls": [list(r) for r in self.start_rolls],
            "active": self.active if self.phase != "over" else None,
            "deciding": deciding[0] if deciding else None,
            "phase": self.phase,
            "players": [
                {
                    "seat": s,
                    "money": self.money[s],
                    "xp": self.xp[s],
                    "pos": self.pos[s],
                    "zone": BOARD.zone[self.pos[s]],
                    "means": self.means[s],
                    "cargo": dict(self.cargo[s]),
                    "passes": dict(self.passes[s]),
                    "hand_count": len(self.hands[s]),
                    "visited": list(self.visited[s]),
                    "still_pending": self.still_pending[s],
                    "blocked_last": self.blocked_last[s],
                    "false_guide": self.false_guide[s],
                }
                for s in range(self.num_players)
            ],
            "supply": dict(self.supply),
            "bonus": dict(self.bonus),
            "deck_count": len(self.deck),
            "turn": {**self.turn, "traded": dict(self.turn["traded"])},
            "stack": [dict(frame) for frame in self.stack],
            "winner": self.winner,
            "end_reason": self.end_reason,
            "log": [dict(e) for e in self.log],
        }

    def observation(self, seat: int) -> JsonDict:
        view = self._public()
        view["seat"] = seat
        view["hand"] = list(self.hands[seat])
        return view

    def spectator_view(self, *, reveal: bool = False) -> JsonDict:
        view = self._public()
        view["seat"] = None
        if reveal:
            view["hands"] = [list(h) for h in self.hands]
        return view

    # --- persistence ------------------------------------------------------------------------------------
    def load_payload(self, payload: Mapping[str, Any]) -> None:
        super().load_payload(payload)
        self._validate()

    def _validate(self) -> None:
        """What loading checks beyond the declared per-seat lengths."""
        n = self.num_players
        if sorted(self.order) != list(range(n)):
            raise ValueError("dragonda state: order must be a permutation of the seats")
        for s in range(n):
            if self.pos[s] not in BOARD.zone:
                raise ValueError(f"dragonda state: unknown space {self.pos[s]!r} for seat {s}")
            if self.means[s] not in MEANS_TABLE:
                raise ValueError(f"dragonda state: unknown means {self.means[s]!r} for seat {s}")
        cards = sorted(self.deck + [c for h in self.hands for c in h])
        if cards != sorted(BOARD.all_cards):
            raise ValueError("dragonda state: deck and hands must hold the 76 cards exactly once")
        if self.phase not in (*DECISION_PHASES, "over") and not self.stack:
            raise ValueError(f"dragonda state: phase {self.phase!r} is not a decision point")

    def shuffle_hidden(self, seat: int, rng: ChanceRng) -> DragondaState:
        """Other seats' Adventure hands and the deck order re-dealt at random; hand sizes kept."""
        other = self.clone()
        others = [s for s in range(self.num_players) if s != seat]
        deal_hidden(other, others, [c for s in others for c in other.hands[s]] + other.deck, rng)
        other._legal_cache = None  # the re-dealt hands change the defences offered
        return other


def deal_hidden(state: DragondaState, seats: list[int], pool: list[str], rng: ChanceRng) -> None:
    """Deal `seats` hands of their current sizes from the Adventure cards of `pool`, the rest is the deck."""
    adventures = sorted(c for c in pool if c in BOARD.adventures)
    rest = sorted(c for c in pool if c not in BOARD.adventures)
    rng.shuffle(adventures)
    for s in seats:
        count = len(state.hands[s])
        state.hands[s] = sorted(adventures[:count])
        adventures = adventures[count:]
    deck = rest + adventures
    rng.shuffle(deck)
    state.deck = deck
