"""Marco Polo: Dragonda's constants and the base of its state: the fields (declared once here), the setup
(the start rolls and order) and the small helpers (money, XP, stops, visits, losses, cards, capacity).

Layer: pure game rules. No Django, no gRPC, no clock, no I/O, never the global `random`. `DragondaSetup`
is the bottom of `DragondaState`'s chain (`DragondaSetup` <- `DragondaActions` <- `DragondaAutomaton` <-
`DragondaState`); it must not call up the chain (no action lists, no automaton here).
"""

from __future__ import annotations

from engine_service.games.base import GameState, JsonDict
from engine_service.games.dragonda.board import (
    BOARD,
    BONUS_PLACES,
    GOODS,
    HOME,
    MEANS_TABLE,
    PASSES,
    REQUIRED,
    cargo_total,
)
from engine_service.games.dragonda.pending import Drop
from engine_service.games.fields import Copy, state_field

START_MONEY = 230
WIN_XP = 51
HAND_LIMIT = 3
PASS_PRICE = 5
PASS_LIMIT = 2
PASS_SUPPLY = 8
KEEP_ON_LOSS = 3
DEMAND_XP = 1
BONUS_XP = 5
DEFAULT_ROUND_CAP = 150
QUANTITIES = (1, 2, 3, 5, 10)
LOG_KEPT = 24
PASSAGE_MONEY = 100  # below this a player stranded on a sea-only port may take the passage

DECISION_PHASES = (
    "setup_means",
    "setup_shop",
    "event_pass",
    "event_cancel",
    "cards",
    "move",
    "trade",
    "transport",
)


class DragondaSetup(GameState):
    """One game of Marco Polo: Dragonda. Its state is the fields declared below (plain JSON values), in
    saving order; `GameState` derives the start values, saving, loading and `clone` from them."""

    order: list[int] = state_field(Copy.SHALLOW, initial=lambda s: list(range(s.num_players)))
    start_rolls: list[list[int]] = state_field(Copy.ITEMS, seat_value=list)
    money: list[int] = state_field(Copy.SHALLOW, seat_value=lambda: START_MONEY)
    xp: list[int] = state_field(Copy.SHALLOW, seat_value=lambda: 0)
    pos: list[str] = state_field(Copy.SHALLOW, seat_value=lambda: HOME)
    means: list[str] = state_field(Copy.SHALLOW, seat_value=lambda: "foot")
    cargo: list[dict[str, int]] = state_field(Copy.ITEMS, seat_value=lambda: dict.fromkeys(GOODS, 0))
    passes: list[dict[str, int]] = state_field(Copy.ITEMS, seat_value=lambda: dict.fromkeys(PASSES, 0))
    hands: list[list[str]] = state_field(Copy.ITEMS, seat_value=list, private=True)
    visited: list[list[str]] = state_field(Copy.ITEMS, seat_value=list)
    still_pending: list[bool] = state_field(Copy.SHALLOW, seat_value=lambda: False)
    blocked_last: list[bool] = state_field(Copy.SHALLOW, seat_value=lambda: False)
    false_guide: list[bool] = state_field(Copy.SHALLOW, seat_value=lambda: False)
    # the top card is the last element; "under the deck" is index 0
    deck: list[str] = state_field(Copy.SHALLOW, factory=list, private=True)
    supply: dict[str, int] = state_field(Copy.SHALLOW, factory=lambda: dict.fromkeys(PASSES, PASS_SUPPLY))
    bonus: dict[str, int | None] = state_field(Copy.SHALLOW, factory=lambda: {"NAG": None, "MANPAL": None})
    phase: str = state_field(default="setup_means")
    turn_index: int = state_field(default=0)
    round: int = state_field(default=0)  # 0 during the opening purchases, then 1..round_cap
    turn: JsonDict = state_field(Copy.SHALLOW, factory=lambda: DragondaSetup._fresh_turn(), inner=("traded",))
    stack: list[JsonDict] = state_field(Copy.ITEMS, factory=list)  # frames change in place, one level deep
    winner: int | None = state_field(default=None)
    end_reason: str | None = state_field(default=None)
    log: list[JsonDict] = state_field(Copy.SHALLOW, factory=list)  # entries never change

    @property
    def round_cap(self) -> int:
        return int(self.options.get("round_cap", DEFAULT_ROUND_CAP))

    @staticmethod
    def _fresh_turn() -> JsonDict:
        return {
            "blocked": False,
            "drew": None,  # "event" | "adventure"
            "event": None,  # the Event card id being or last resolved this turn (public)
            "roll": None,
            "attacked": False,
            "movement": 0,  # spaces the token may move this turn (0 when blocked)
            "moved": 0,  # spaces it moved
            "traded": {},  # good -> "buy" | "sell" (a good is only bought or only sold in one trade step)
            "new_means": False,
        }

    # --- setup ------------------------------------------------------------------------------------------
    def setup(self) -> None:
        """Turn-order dice (ties re-rolled among the tied only), then the deck shuffle (spec 1.3)."""
        self.order = self._order_by_dice(list(range(self.num_players)))
        deck = list(BOARD.all_cards)
        self.rng.shuffle(deck)
        self.deck = deck
        self._log(
            {"event": "play_order", "order": list(self.order), "rolls": [list(r) for r in self.start_rolls]}
        )
        self.turn_index = 0
        self.phase = "setup_means"

    def _order_by_dice(self, seats: list[int]) -> list[int]:
        totals = {}
        for seat in seats:
            total = self.rng.randint(1, 6) + self.rng.randint(1, 6)
            self.start_rolls[seat].append(total)
            totals[seat] = total
        ordered: list[int] = []
        for value in sorted(set(totals.values()), reverse=True):
            tied = [s for s in seats if totals[s] == value]
            ordered.extend(tied if len(tied) == 1 else self._order_by_dice(tied))
        return ordered

    # --- small helpers ----------------------------------------------------------------------------------
    @property
    def active(self) -> int:
        return self.order[self.turn_index]

    def _log(self, entry: JsonDict) -> None:
        self.log.append({"round": self.round, **entry})
        del self.log[:-LOG_KEPT]

    def _add_xp(self, seat: int, amount: int) -> None:
        self.xp[seat] = max(0, self.xp[seat] + amount)

    def _pay(self, seat: int, amount: int, to: int | None, why: str) -> None:
        """A demand: pay it in full, or pay nothing and lose 1 XP (spec 1.1, resolution #11)."""
        if self.money[seat] >= amount:
            self.money[seat] -= amount
            if to is not None:
                self.money[to] += amount
            self._log({"event": "pay", "seat": seat, "amount": amount, "to": to, "why": why})
        else:
            self._add_xp(seat, -DEMAND_XP)
            self._log({"event": "unpaid", "seat": seat, "amount": amount, "why": why, "xp": -DEMAND_XP})

    def _stop_next(self, seat: int) -> bool:
        """STILL aimed at `seat`'s next turn: void if one is already pending or its last turn was blocked."""
        if self.still_pending[seat] or self.blocked_last[seat]:
            return False
        self.still_pending[seat] = True
        return True

    def _stop_now(self, seat: int) -> None:
        """STILL from the active player's own Event: blocks this turn unless the last one was blocked."""
        if not self.blocked_last[seat]:
            self.turn["blocked"] = True

    def _visit(self, seat: int, space: str) -> None:
        if space in REQUIRED and space not in self.visited[seat]:
            self.visited[seat].append(space)
            self.visited[seat].sort()
        key = BONUS_PLACES.get(space)
        if key is not None and self.bonus[key] is None:
            self.bonus[key] = seat
            self._add_xp(seat, BONUS_XP)
            self._log({"event": "first_arrival", "seat": seat, "place": space, "xp": BONUS_XP})

    def _lose_means(self, seat: int, why: str) -> None:
        lost = self.means[seat]
        self.means[seat] = "foot"
        self._log({"event": "lose_means", "seat": seat, "means": lost, "why": why})
        if not BOARD.is_land(self.pos[seat]):
            shore = BOARD.ashore[self.pos[seat]]
            self.pos[seat] = shore
            self._visit(seat, shore)
            self._log({"event": "washed_ashore", "seat": seat, "to": shore})
        excess = cargo_total(self.cargo[seat]) - KEEP_ON_LOSS
        if excess > 0:
            self._push_drop(seat, excess, "keep_three")

    def _push_drop(self, seat: int, count: int, reason: str) -> None:
        count = min(count, cargo_total(self.cargo[seat]))
        if count > 0:
            self.stack.append(Drop.frame(seat, count, reason))

    def _under_deck(self, card: str) -> None:
        self.deck.insert(0, card)

    def _take_card(self, seat: int, name: str) -> str:
        card = min(c for c in self.hands[seat] if BOARD.card_name[c] == name)
        self.hands[seat].remove(card)
        return card

    def capacity(self, seat: int) -> int:
        return MEANS_TABLE[self.means[seat]].capacity

    def conditions_met(self, seat: int) -> int:
        """Victory conditions met out of 6: 51 XP and each of the five required cities."""
        return (1 if self.xp[seat] >= WIN_XP else 0) + len(self.visited[seat])
