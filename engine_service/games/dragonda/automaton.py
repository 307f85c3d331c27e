"""Marco Polo: Dragonda's turn automaton: `_run` performs every automatic step (the turn's start, drawing,
the Event cards' rolls and bands, upkeep at sea, the turn's end) until a decision is needed, and `_apply`
resolves a decision (the opening purchases, trades, Event passes and cancels, attacks, moves, transport).

Layer: pure game rules. No Django, no gRPC, no clock, no I/O, never the global `random`: every roll comes
from the state's own `ChanceRng`. `DragondaAutomaton` is one link of `DragondaState`'s chain (see
`setup_state`); it does not render views or save.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from engine_service.games.base import Action, JsonDict
from engine_service.games.dragonda.actions import DragondaActions
from engine_service.games.dragonda.board import (
    BOARD,
    HOME,
    LAND_MEANS,
    MEANS_TABLE,
    REQUIRED,
    cargo_total,
)
from engine_service.games.dragonda.pending import DEFENCE, PENDING, Defence, pending_kind
from engine_service.games.dragonda.setup_state import (
    PASS_PRICE,
    WIN_XP,
)

if TYPE_CHECKING:  # `pending`'s units take the whole state
    from engine_service.games.dragonda.rules import DragondaState


class DragondaAutomaton(DragondaActions):
    """The turn automaton (see the module docstring)."""

    # --- the automaton ----------------------------------------------------------------------------------
    def _run(self) -> None:
        """Perform automatic steps until a seat must decide (or the game is over)."""
        while True:
            if self.stack:
                top = self.stack[-1]
                if pending_kind(top).settle(cast("DragondaState", self), top):
                    continue
                return
            phase = self.phase
            if phase == "start":
                self._start_turn()
            elif phase == "cards_enter":
                self.phase = "cards"
                if len(self._cards_actions(self.active)) <= 1:
                    self.phase = "move_enter"
            elif phase == "move_enter":
                self._enter_move()
            elif phase == "trade_enter":
                self.phase = "trade"
                if not BOARD.is_place(self.pos[self.active]) or len(self._trade_actions(self.active)) <= 1:
                    self.phase = "transport_enter"
            elif phase == "transport_enter":
                self._enter_transport()
            elif phase == "end":
                self._end_turn()
            else:
                return

    def _start_turn(self) -> None:
        seat = self.active
        self.turn = self._fresh_turn()
        self.turn["blocked"] = self.still_pending[seat]
        self.still_pending[seat] = False
        card = self.deck.pop()
        if card in BOARD.events:
            self.turn["drew"] = "event"
            self.turn["event"] = card
            self._under_deck(card)
            event = BOARD.events[card]
            if BOARD.zone[self.pos[seat]] in event["zones"]:
                self._log({"event": "draw_event", "seat": seat, "card": card})
                self._event_begin(seat, event)
            else:
                self._log({"event": "draw_event", "seat": seat, "card": card, "effect": "none (zone)"})
                self.phase = "cards_enter"
            if event["all_players"]:
                self._event_others(seat, event)
        else:
            self.turn["drew"] = "adventure"
            self.hands[seat].append(card)
            self.hands[seat].sort()
            self._log({"event": "draw_adventure", "seat": seat})
            self.phase = "cards_enter"

    # --- events -------------------------------------------------------------------------------------------
    def _event_begin(self, seat: int, event: JsonDict) -> None:
        option = event["pass"]
        if option and option["kind"] == "replace" and any(self.passes[seat][p] for p in option["passes"]):
            self.phase = "event_pass"
            return
        self._event_roll(seat, event)

    def _event_roll(self, seat: int, event: JsonDict) -> None:
        roll = self._roll(event)
        self.turn["roll"] = roll
        option = event["pass"]
        if (
            option
            and option["kind"] == "cancel"
            and option["lo"] <= roll <= option["hi"]
            and any(self.passes[seat][p] for p in option["passes"])
        ):
            self.phase = "event_cancel"
            return
        self.phase = "cards_enter"
        self._apply_band(seat, event, roll, own=True)

    def _roll(self, event: JsonDict) -> int:
        if not event["roll"]:
            return 0  # a fixed card: no dice
        return self.rng.randint(1, 6) + self.rng.randint(1, 6)

    @staticmethod
    def _band(event: JsonDict, roll: int) -> JsonDict:
        if not event["roll"]:
            band: JsonDict = event["bands"][0]
            return band
        return next(b for b in event["bands"] if b["lo"] <= roll <= b["hi"])

    def _apply_band(self, seat: int, event: JsonDict, roll: int, *, own: bool) -> None:
        band = self._band(event, roll)
        self._log(
            {
                "event": "event_result",
                "seat": seat,
                "card": event["id"],
                "roll": roll or None,
                "result": f"{band['lo']}-{band['hi']}" if event["roll"] else "fixed",
            }
        )
        if band["money"] > 0:
            self.money[seat] += band["money"]
        elif band["money"] < 0:
            self._pay(seat, -band["money"], None, event["id"])
        if band["xp"]:
            self._add_xp(seat, band["xp"])
        if band["still"]:
            if own:
                self._stop_now(seat)
            else:
                self._stop_next(seat)
        hits = {"land": self.means[seat] in LAND_MEANS, "ship": self.means[seat] == "ship", None: False}
        if hits[band["lose"]]:
            self._lose_means(seat, event["id"])
        total = cargo_total(self.cargo[seat])
        if band["goods"] == "two":
            self._push_drop(seat, min(2, total), event["id"])
        elif band["goods"] == "half":
            self._push_drop(seat, (total + 1) // 2, event["id"])

    def _event_others(self, drawer: int, event: JsonDict) -> None:
        """An ALL card (E40): every other player in a listed zone resolves it too, in play order."""
        start = self.order.index(drawer)
        for k in range(1, self.num_players):
            seat = self.order[(start + k) % self.num_players]
            if BOARD.zone[self.pos[seat]] in event["zones"]:
                self._apply_band(seat, event, self._roll(event), own=False)

    # --- decisions: effects -----------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> None:
        kind = action.kind
        d = action.details
        if self.stack:
            pending_kind(self.stack[-1]).resolve(cast("DragondaState", self), self.stack[-1], action)
        elif kind == "means" and self.phase == "setup_means":
            m = str(d["means"])
            self.means[seat] = m
            self.money[seat] -= MEANS_TABLE[m].price
            self._log({"event": "buy_means", "seat": seat, "means": m})
            self.phase = "setup_shop"
        elif kind in ("buy", "sell", "buy_pass"):
            self._trade(seat, action)
        elif kind == "trade_done":
            if self.phase == "setup_shop":
                self._next_setup_player()
            else:
                self.phase = "transport_enter"
        elif kind == "event_pass":
            self._event_pass(seat, action)
        elif kind == "event_cancel":
            self._event_cancel(seat, action)
        elif kind == "cards_done":
            self.phase = "move_enter"
        elif kind == "discard":
            card = self._take_card(seat, str(d["card"]))
            self._under_deck(card)
            self._log({"event": "discard", "seat": seat})
        elif kind == "attack":
            name = str(d["card"])
            card = self._take_card(seat, name)
            self._under_deck(card)
            self.turn["attacked"] = True
            target = int(d["target"])
            self._log({"event": "attack", "seat": seat, "card": name, "target": target})
            self.stack.append(Defence.frame(target, seat, card))
        elif kind == "move_stop":
            self.phase = "trade_enter"
        elif kind == "move":
            path = [str(space) for space in d["path"]]
            for space in path:
                self.pos[seat] = space
                self._visit(seat, space)
            self.turn["moved"] = len(path)
            self._log({"event": "move", "seat": seat, "to": path[-1], "steps": len(path)})
            self.phase = "trade_enter"
        elif kind == "passage":
            to = str(d["to"])
            self._log({"event": "passage", "seat": seat, "from": self.pos[seat], "to": to})
            self.pos[seat] = to
            self._visit(seat, to)
            self.phase = "trade_enter"
        elif kind in ("keep", "give_up", "buy_means", "transport_done"):
            self._transport(seat, action)
        else:  # pragma: no cover - legal_actions only makes the kinds above
            raise AssertionError(kind)
        self._run()

    def _next_setup_player(self) -> None:
        self.turn = self._fresh_turn()
        self.turn_index += 1
        if self.turn_index >= self.num_players:
            self.turn_index = 0
            self.round = 1
            self.phase = "start"
        else:
            self.phase = "setup_means"

    def _trade(self, seat: int, action: Action) -> None:
        d = action.details
        if action.kind == "buy_pass":
            p = str(d["pass"])
            self.money[seat] -= PASS_PRICE
            self.passes[seat][p] += 1
            self.supply[p] -= 1
            self._log({"event": "buy_pass", "seat": seat, "pass": p})
            return
        good, q, total = str(d["good"]), int(d["quantity"]), int(d["total"])
        if action.kind == "buy":
            self.money[seat] -= total
            self.cargo[seat][good] += q
        else:
            self.money[seat] += total
            self.cargo[seat][good] -= q
        self.turn["traded"][good] = action.kind
        self._log(
            {
                "event": action.kind,
                "seat": seat,
                "good": good,
                "quantity": q,
                "total": total,
                "place": self.pos[seat],
            }
        )

    def _event_pass(self, seat: int, action: Action) -> None:
        event = BOARD.events[self.turn["event"]]
        if action.id == "decline":
            self._event_roll(seat, event)
            return
        p = str(action.details["pass"])
        self.passes[seat][p] -= 1
        self.supply[p] += 1
        self._add_xp(seat, int(event["pass"]["xp"]))
        self._log(
            {"event": "use_pass", "seat": seat, "card": event["id"], "pass": p, "xp": event["pass"]["xp"]}
        )
        self.phase = "cards_enter"

    def _event_cancel(self, seat: int, action: Action) -> None:
        event = BOARD.events[self.turn["event"]]
        roll = int(self.turn["roll"])
        self.phase = "cards_enter"
        if "pass" not in action.details:  # accept:roll
            self._apply_band(seat, event, roll, own=True)
            return
        p = str(action.details["pass"])
        self.passes[seat][p] -= 1
        self.supply[p] += 1
        self._log({"event": "cancel_with_pass", "seat": seat, "card": event["id"], "pass": p, "roll": roll})

    def _resolve_attack(self, frame: JsonDict, action: Action) -> None:
        """A defence frame resolved by `action` (the heuristic weighs both outcomes with it)."""
        PENDING[DEFENCE].resolve(cast("DragondaState", self), frame, action)

    def _enter_move(self) -> None:
        seat = self.active
        if self.turn["blocked"]:
            self._log({"event": "blocked", "seat": seat})
            self.phase = "trade_enter"
            return
        movement = MEANS_TABLE[self.means[seat]].movement
        if self.false_guide[seat]:
            movement //= 2
            self.false_guide[seat] = False
        self.turn["movement"] = movement
        self.phase = "move"
        sea = self.means[seat] == "ship"
        if not (movement and BOARD.neighbours(self.pos[seat], sea=sea)) and not self._passage_allowed(seat):
            self.phase = "trade_enter"  # nowhere to go: no decision

    def _enter_transport(self) -> None:
        seat = self.active
        if self.means[seat] == "ship" and not BOARD.is_land(self.pos[seat]):
            self._pay(seat, MEANS_TABLE["ship"].upkeep, None, "upkeep at sea")
            self._after_transport(seat)
            return
        self.phase = "transport"
        actions = self._transport_actions(seat)
        if len(actions) == 1:
            self._transport(
                seat, actions[0]
            )  # nothing to choose: on foot with nothing to buy, or forced to give up

    def _transport(self, seat: int, action: Action) -> None:
        kind = action.kind
        current = self.means[seat]
        if kind == "keep":
            self.money[seat] -= MEANS_TABLE[current].upkeep
        elif kind == "give_up":
            self.means[seat] = "foot"
            self._log({"event": "give_up", "seat": seat, "means": current})
        elif kind == "buy_means":
            m = str(action.details["means"])
            self.means[seat] = m
            self.money[seat] -= MEANS_TABLE[m].price
            self.turn["new_means"] = True
            self._log({"event": "buy_means", "seat": seat, "means": m, "gave_up": current})
        self._after_transport(seat)

    def _after_transport(self, seat: int) -> None:
        self.phase = "end"
        excess = cargo_total(self.cargo[seat]) - self.capacity(seat)
        if excess > 0:
            self._push_drop(seat, excess, "capacity")

    def _end_turn(self) -> None:
        seat = self.active
        if self.pos[seat] == HOME and self.xp[seat] >= WIN_XP and len(self.visited[seat]) == len(REQUIRED):
            self.winner = seat
            self._log({"event": "victory", "seat": seat})
            self._finish("completed")
            return
        self.blocked_last[seat] = bool(self.turn["blocked"])
        self.turn_index += 1
        if self.turn_index >= self.num_players:
            self.turn_index = 0
            if self.round >= self.round_cap:
                self._finish("turn_cap")
                return
            self.round += 1
        self.phase = "start"

    def _finish(self, reason: str) -> None:
        self.phase = "over"
        self.end_reason = reason
        self.stack = []
