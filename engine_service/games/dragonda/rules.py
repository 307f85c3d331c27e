"""Marco Polo: Dragonda's state and rules (`dragonda-v1`). The package docstring is the spec.

Layer: pure game rules. No Django, no gRPC, no clock, no I/O beyond the packaged data (`board`), never the
global `random`: every die and shuffle comes from the state's own `ChanceRng`.

The state is a small automaton: `phase` names where the current turn stands, and `stack` holds pending
sub-decisions of any seat (a defence by an attacked seat, goods to give back), each kind one unit of
`pending.py` (its frame's keys, its actions, its resolution). `_run` performs every automatic step
(drawing, rolling, upkeep at sea, the end of a turn) until a decision is needed. The state's fields are
declared once (`fields.state_field`) at the top of `DragondaState`.

Action ids follow one grammar: a verb, then its arguments, each after a colon (`buy:SP:5`,
`attack:FALSE_GUIDE:s2`, `move:ACR:via:DAM`), no spaces; an Adventure card is named by its name with
underscores for spaces (`card_slug`); each kind has ids of its own (`done:trade`, `done:cards`,
`done:transport`; `accept:roll`, `accept:attack`; `means:<m>` in the opening, `buy_means:<m>` later).
`data/reference.json` documents every kind. Records made before this grammar name actions by their older
ids (`legacy_id`), which `upgrade_action_id` maps to the current ones; the state itself holds no action id
(the log names cards by their printed names), so those records' state hashes are unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from engine_service.games.base import Action, GameResult, GameState, JsonDict
from engine_service.games.dragonda.board import (
    BOARD,
    BONUS_PLACES,
    GOODS,
    HOME,
    LAND_CAPACITY,
    LAND_MEANS,
    MAX_CAPACITY,
    MEANS,
    MEANS_TABLE,
    PASS_SHOP,
    PASSES,
    REQUIRED,
)
from engine_service.games.dragonda.board import card_slug as card_slug  # re-exported: tests and bots use it
from engine_service.games.dragonda.board import cargo_total as cargo_total
from engine_service.games.dragonda.pending import DEFENCE, PENDING, Defence, Drop, pending_kind
from engine_service.games.fields import Copy, state_field
from engine_service.games.rng import ChanceRng

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


def quantities(limit: int) -> list[int]:
    """The bounded list of quantities offered for one trade decision: 1, 2, 3, 5, 10 and the maximum."""
    return sorted({q for q in QUANTITIES if q <= limit} | ({limit} if limit > 0 else set()))


def legacy_id(action: Action) -> str:
    """The id `action` had before the ids followed one grammar: `done` for the three ends of a step,
    `accept` for both acceptances, `means:<m>` for a means bought in the transport step, card names with
    their spaces."""
    if action.kind in ("trade_done", "cards_done", "transport_done"):
        return "done"
    if action.id in ("accept:roll", "accept:attack"):
        return "accept"
    if action.kind == "buy_means":
        return f"means:{action.details['means']}"
    if action.kind in ("discard", "attack", "defence") and "card" in action.details:
        name = str(action.details["card"])
        return action.id.replace(card_slug(name), name, 1)
    return action.id


class DragondaState(GameState):
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
    turn: JsonDict = state_field(Copy.SHALLOW, factory=lambda: DragondaState._fresh_turn(), inner=("traded",))
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

    # --- the automaton ----------------------------------------------------------------------------------
    def _run(self) -> None:
        """Perform automatic steps until a seat must decide (or the game is over)."""
        while True:
            if self.stack:
                top = self.stack[-1]
                if pending_kind(top).settle(self, top):
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

    # --- decisions: lists -------------------------------------------------------------------------------
    def current_seats(self) -> list[int]:
        if self.phase == "over":
            return []
        if self.stack:
            return [int(self.stack[-1]["seat"])]
        return [self.active]

    def _legal_actions(self, seat: int) -> list[Action]:
        if self.stack:
            return pending_kind(self.stack[-1]).actions(self, self.stack[-1])
        phase = self.phase
        if phase == "setup_means":
            return [
                Action(f"means:{m}", "means", {"means": m, "price": MEANS_TABLE[m].price})
                for m in MEANS
                if MEANS_TABLE[m].price <= self.money[seat]
            ]
        if phase in ("setup_shop", "trade"):
            return self._trade_actions(seat)
        if phase == "event_pass":
            event = BOARD.events[self.turn["event"]]
            option = event["pass"]
            actions = [Action("decline", "event_pass", {"card": event["id"]})]
            for p in option["passes"]:
                if self.passes[seat][p]:
                    actions.append(
                        Action(f"use:{p}", "event_pass", {"card": event["id"], "pass": p, "xp": option["xp"]})
                    )
            return actions
        if phase == "event_cancel":
            event = BOARD.events[self.turn["event"]]
            actions = [
                Action("accept:roll", "event_cancel", {"card": event["id"], "roll": self.turn["roll"]})
            ]
            for p in event["pass"]["passes"]:
                if self.passes[seat][p]:
                    actions.append(
                        Action(
                            f"cancel:{p}",
                            "event_cancel",
                            {"card": event["id"], "pass": p, "roll": self.turn["roll"]},
                        )
                    )
            return actions
        if phase == "cards":
            return self._cards_actions(seat)
        if phase == "move":
            return self._move_actions(seat)
        if phase == "transport":
            return self._transport_actions(seat)
        raise AssertionError(f"no decision in phase {phase}")  # pragma: no cover

    def upgrade_action_id(self, seat: int, action_id: str) -> str:
        """The current id of the legal action that an older record names by its `legacy_id`; `action_id`
        itself when none has it."""
        for action in self.legal_actions(seat):
            if legacy_id(action) == action_id:
                return action.id
        return action_id

    def _trade_actions(self, seat: int) -> list[Action]:
        actions = [Action("done:trade", "trade_done", {})]
        place = self.pos[seat]
        cargo = self.cargo[seat]
        traded = self.turn["traded"]
        setup = self.phase == "setup_shop"
        if not setup:
            for good in GOODS:
                if cargo[good] and traded.get(good) != "buy":
                    price = BOARD.sell[place][good]
                    for q in quantities(cargo[good]):
                        actions.append(
                            Action(
                                f"sell:{good}:{q}",
                                "sell",
                                {"good": good, "quantity": q, "price": price, "total": q * price},
                            )
                        )
        if setup:
            limit = self.capacity(seat)
        elif BOARD.is_port(place):
            limit = MAX_CAPACITY
        else:
            limit = max(LAND_CAPACITY, self.capacity(seat))
        room = limit - cargo_total(cargo)
        if room > 0:
            for good in GOODS:
                if traded.get(good) == "sell":
                    continue
                price = BOARD.buy[place][good]
                for q in quantities(min(room, self.money[seat] // price)):
                    actions.append(
                        Action(
                            f"buy:{good}:{q}",
                            "buy",
                            {"good": good, "quantity": q, "price": price, "total": q * price},
                        )
                    )
        for p in PASSES:
            if (
                PASS_SHOP[p] == place
                and self.passes[seat][p] < PASS_LIMIT
                and self.supply[p] > 0
                and self.money[seat] >= PASS_PRICE
            ):
                actions.append(Action(f"buy:{p}", "buy_pass", {"pass": p, "price": PASS_PRICE}))
        return actions

    def _attack_legal(self, name: str, target: int) -> bool:
        condition = str(BOARD.attack_def[name]["target"])
        if condition == "holds_land_means":
            return self.means[target] in LAND_MEANS
        if condition == "on_land":
            return BOARD.is_land(self.pos[target])
        if condition == "holds_ship":
            return self.means[target] == "ship"
        if condition == "can_be_stopped":
            return not self.still_pending[target] and not self.blocked_last[target]
        if condition == "has_xp":
            return self.xp[target] >= 1
        if condition == "on_place":
            return BOARD.is_place(self.pos[target])
        if condition == "not_blocked_next":
            return not self.still_pending[target] and not self.false_guide[target]
        return condition == "anyone"

    def _cards_actions(self, seat: int) -> list[Action]:
        hand = self.hands[seat]
        names = sorted({BOARD.card_name[c] for c in hand})
        discards = [Action(f"discard:{card_slug(name)}", "discard", {"card": name}) for name in names]
        actions = [] if len(hand) > HAND_LIMIT else [Action("done:cards", "cards_done", {"hand": len(hand)})]
        actions.extend(discards)
        if not self.turn["attacked"]:
            for name in names:
                if name not in BOARD.attack_def:
                    continue
                for target in range(self.num_players):
                    if target != seat and self._attack_legal(name, target):
                        actions.append(
                            Action(
                                f"attack:{card_slug(name)}:s{target}",
                                "attack",
                                {"card": name, "target": target},
                            )
                        )
        return actions

    def _defence_actions(self, frame: JsonDict) -> list[Action]:
        """What the attacked seat of a defence frame is offered (the heuristic reads it)."""
        return PENDING[DEFENCE].actions(self, frame)

    def _passage_allowed(self, seat: int) -> bool:
        return (
            self.pos[seat] in BOARD.passage
            and self.means[seat] != "ship"
            and self.money[seat] < PASSAGE_MONEY
        )

    def _relevant_places(self, seat: int) -> list[str]:
        """Places whose entering changes something: unvisited required cities, unclaimed bonus places."""
        places = [c for c in REQUIRED if c not in self.visited[seat]]
        places += [p for p, key in BONUS_PLACES.items() if self.bonus[key] is None]
        return places

    def move_options(self, seat: int) -> list[tuple[str, tuple[str, ...], list[str]]]:
        """Every distinct move: (destination, relevant places entered on the way, one shortest such path)."""
        movement = int(self.turn["movement"])
        if movement <= 0:
            return []
        sea = self.means[seat] == "ship"
        return [
            (str(a.details["to"]), tuple(a.details["via"]), list(a.details["path"]))
            for a in _moves(self.pos[seat], sea, movement, tuple(self._relevant_places(seat)))
        ]

    def _move_actions(self, seat: int) -> list[Action]:
        actions = [Action("stop", "move_stop", {"movement": self.turn["movement"]})]
        movement = int(self.turn["movement"])
        if movement > 0:
            sea = self.means[seat] == "ship"
            actions.extend(_moves(self.pos[seat], sea, movement, tuple(self._relevant_places(seat))))
        if self._passage_allowed(seat):
            port = BOARD.passage[self.pos[seat]]
            actions.append(Action(f"passage:{port}", "passage", {"to": port}))
        return actions

    def _transport_actions(self, seat: int) -> list[Action]:
        current = self.means[seat]
        money = self.money[seat]
        actions: list[Action] = []
        if current == "foot":
            actions.append(Action("done:transport", "transport_done", {}))
        else:
            upkeep = MEANS_TABLE[current].upkeep
            keep = Action("keep", "keep", {"means": current, "upkeep": upkeep})
            give_up = Action("give_up", "give_up", {"means": current})
            actions.extend([keep, give_up] if money >= upkeep else [give_up])
        place = self.pos[seat]
        for m in MEANS[1:]:
            if m == current or MEANS_TABLE[m].price > money:
                continue
            if m == "ship" and not BOARD.is_port(place):
                continue
            actions.append(Action(f"buy_means:{m}", "buy_means", {"means": m, "price": MEANS_TABLE[m].price}))
        return actions

    # --- decisions: effects -----------------------------------------------------------------------------
    def _apply(self, seat: int, action: Action) -> None:
        kind = action.kind
        d = action.details
        if self.stack:
            pending_kind(self.stack[-1]).resolve(self, self.stack[-1], action)
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
        PENDING[DEFENCE].resolve(self, frame, action)

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


@lru_cache(maxsize=8192)
def _moves(start: str, sea: bool, movement: int, relevant: tuple[str, ...]) -> tuple[Action, ...]:
    """Every distinct move from `start`, as actions: each (destination, relevant places newly entered on
    the way) once, with the first path a breadth-first search finds (neighbours in board order).

    Two walks with the same end and the same newly entered relevant places (unvisited required cities,
    unclaimed bonus places) are the same move for the rules: only the end's zone and those visits matter."""
    bit = {place: 1 << i for i, place in enumerate(relevant)}
    parent: dict[tuple[str, int], tuple[str, int] | None] = {(start, 0): None}
    frontier = [(start, 0)]
    for _ in range(movement):
        nxt_frontier = []
        for node, mask in frontier:
            for nxt in BOARD.neighbours(node, sea=sea):
                item = (nxt, mask | bit.get(nxt, 0))
                if item not in parent:
                    parent[item] = (node, mask)
                    nxt_frontier.append(item)
        frontier = nxt_frontier
    options = []
    for node, mask in parent:
        if (node, mask) == (start, 0):
            continue
        path: list[str] = []
        back: tuple[str, int] | None = (node, mask)
        while back is not None and back != (start, 0):
            path.append(back[0])
            back = parent[back]
        path.reverse()
        via = tuple(sorted(p for p in relevant if mask & bit[p] and p != node))
        options.append((node, via, path))
    options.sort(key=lambda o: (BOARD.order_key(o[0]), o[1]))
    return tuple(
        Action(
            f"move:{dest}" + (f":via:{'+'.join(via)}" if via else ""),
            "move",
            {"to": dest, "via": list(via), "path": path, "steps": len(path)},
        )
        for dest, via, path in options
    )


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
