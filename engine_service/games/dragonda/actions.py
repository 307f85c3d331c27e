"""Marco Polo: Dragonda's legal-action lists: whose decision it is, the trade offers (with their bounded
quantities), the attacks and cards, the defences, the moves (a cached breadth-first search of the board)
and the transport purchases, plus the ids older records used (`legacy_id`).

Layer: pure game rules. No Django, no gRPC, no clock, no I/O, never the global `random`. `DragondaActions`
is one link of `DragondaState`'s chain (see `setup_state`); it lists actions and never changes the state
(applying them is the automaton's).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, cast

from engine_service.games.base import Action, JsonDict
from engine_service.games.dragonda.board import (
    BOARD,
    BONUS_PLACES,
    GOODS,
    LAND_CAPACITY,
    LAND_MEANS,
    MAX_CAPACITY,
    MEANS,
    MEANS_TABLE,
    PASS_SHOP,
    PASSES,
    REQUIRED,
    card_slug,
    cargo_total,
)
from engine_service.games.dragonda.pending import DEFENCE, PENDING, pending_kind
from engine_service.games.dragonda.setup_state import (
    HAND_LIMIT,
    PASS_LIMIT,
    PASS_PRICE,
    PASSAGE_MONEY,
    QUANTITIES,
    DragondaSetup,
)

if TYPE_CHECKING:  # `pending`'s units take the whole state
    from engine_service.games.dragonda.rules import DragondaState


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


class DragondaActions(DragondaSetup):
    """The legal-action lists (see the module docstring)."""

    # --- decisions: lists -------------------------------------------------------------------------------
    def current_seats(self) -> list[int]:
        if self.phase == "over":
            return []
        if self.stack:
            return [int(self.stack[-1]["seat"])]
        return [self.active]

    def _legal_actions(self, seat: int) -> list[Action]:
        if self.stack:
            return pending_kind(self.stack[-1]).actions(cast("DragondaState", self), self.stack[-1])
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
        return PENDING[DEFENCE].actions(cast("DragondaState", self), frame)

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
