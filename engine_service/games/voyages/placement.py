"""The Voyages of Marco Polo's dice placement (the main actions): the legal placements on the action
spaces, the Khan's spaces and the city cards, with their values and costs, and what placing does.

Pure: no Django, no gRPC, no clock, no global `random`. `VoyagesPlacement` is one link of `VoyagesState`'s
chain (see `setup_state`); it may call the movement and setup links below it, never the turn menu, and it
declares no saved field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine_service.games.base import Action
from engine_service.games.common.dice import (
    COLOUR,
    colour_used,
    distinct_groups,
    kind_of,
    placement_fee,
    remove_tokens,
    value_of,
)
from engine_service.games.common.family_effects import (
    CountEffect,
    goods_choices,
)
from engine_service.games.common.resources import can_afford, gain, pay
from engine_service.games.voyages.effects import (
    CITY_PICK,
    BuyMoves,
    BuyMovesEffect,
    CityLoop,
    CityLoopEffect,
    Column,
    ColumnEffect,
    Exchange,
    ExchangeEffect,
    Pick,
    PickEffect,
    Repeat,
    RepeatEffect,
    Travel,
    TravelEffect,
    can_give,
    move_effect,
)
from engine_service.games.voyages.movement import VoyagesMovement
from engine_service.games.voyages.setup_state import (
    KHAN_SLOTS,
    MAIN_ORDER,
    SLOT_INDEX,
    SPACES,
)
from engine_service.games.voyages.tables import (
    BAZAAR,
    CARD_SLOTS,
    CITY_CARDS,
    GOODS,
    ROUTES,
    TRAVEL_COST,
)


class VoyagesPlacement(VoyagesMovement):
    """The dice placement (see the module docstring)."""

    # --- dice placement (the main actions) --------------------------------------------------------------
    def _placements(self, seat: int, only: str | None = None, first: bool = False) -> list[Action]:
        """Legal dice placements (second-level `dice:` actions), for every space or `only` one; with
        `first`, at most one per space (enough to know which spaces the menu offers)."""
        held = self.dice[seat]
        coins = self.res[seat]["coins"]
        berke = self.chars[seat] == "berke"
        actions: list[Action] = []
        for name in MAIN_ORDER if only is None else ([only] if only in SPACES or only == "khan" else []):
            if name == "khan":
                khan = self._khan_placements(seat)
                actions.extend(khan[:1] if first else khan)
                continue
            space = SPACES[name]
            if len(held) < space.dice:
                continue
            placed = self.spaces[name]
            blocked = colour_used(placed, seat)
            fee_free = berke or not placed
            performable: dict[int, bool] = {}
            found = False
            for group in distinct_groups(held, space.dice):
                if blocked and any(kind_of(t) == COLOUR for t in group):
                    continue
                for chosen in self._value_choices(group, name, fee_free):
                    values = [value_of(t) or chosen for t in group]
                    fee = placement_fee(space, bool(placed), values, exempt=berke)
                    if fee is None or fee > coins:
                        continue
                    if fee not in performable:
                        performable[fee] = self._performable(seat, name, coins - fee)
                    if performable[fee]:
                        actions.append(self._place_action(name, group, chosen, fee, min(values)))
                        found = True
                        if first:
                            break
                if found and first:
                    break
        return actions + self._card_placements(seat, only, first)

    def _card_placements(self, seat: int, only: str | None, first: bool) -> list[Action]:
        """Placements on the city cards (or the `only` one) whose city holds the seat's post and which are
        unused this round (with `next_turn` timing, not for a post placed this turn)."""
        actions: list[Action] = []
        coins = self.res[seat]["coins"]
        for slot, (slot_name, city) in enumerate(CARD_SLOTS):
            if only is not None and only != f"card-{slot_name}":
                continue
            if self.card_used[slot] is not None or city not in self.posts[seat]:
                continue
            if self.options["city_card_timing"] == "next_turn" and city in self.posts_this_turn:
                continue
            card = self.cards[slot]
            found = False
            for group in distinct_groups(self.dice[seat], 1):
                for chosen in self._value_choices(group, "card", True):
                    value = value_of(group[0]) or chosen
                    if self._card_performable(seat, card, value, coins):
                        actions.append(self._place_action(f"card-{slot_name}", group, chosen, 0, value, card))
                        found = True
                        if first:
                            break
                if first and found:
                    break
        return actions
        return actions

    @staticmethod
    def _value_choices(group: Sequence[str], name: str, fee_free: bool = False) -> list[int]:
        """Raschid's unrolled dice (value 0) take a value chosen on use. Where no fee is due and the value
        only caps the strength (a lower strength stays choosable afterwards) 6 is offered alone, and on
        5 coins (value irrelevant) 1 alone; on occupied spaces every value is a real fee/strength trade."""
        if all(value_of(t) != 0 for t in group):
            return [0]
        if name == "coins5":
            return [1]
        if fee_free and name != "khan":
            return [6]
        return [1, 2, 3, 4, 5, 6]

    @staticmethod
    def _place_action(
        name: str, group: Sequence[str], chosen: int, fee: int, strength: int, card: int | None = None
    ) -> Action:
        suffix = f"@{chosen}" if chosen else ""
        details: dict[str, Any] = {"space": name, "dice": list(group), "fee": fee, "strength": strength}
        if chosen:
            details["value"] = chosen
        if card is not None:
            details["card"] = card
        return Action(f"dice:{'+'.join(group)}{suffix}", "place", details)

    def _khan_placements(self, seat: int) -> list[Action]:
        if len(self.khan) >= KHAN_SLOTS:
            return []
        blocked = colour_used([[s, [t]] for s, t in self.khan], seat)
        floor = value_of(self.khan[-1][1]) if self.khan else 1
        actions = []
        for group in distinct_groups(self.dice[seat], 1):
            tok = group[0]
            if blocked and kind_of(tok) == COLOUR:
                continue
            for chosen in self._value_choices(group, "khan"):
                value = value_of(tok) or chosen
                if value >= floor:
                    actions.append(self._place_action("khan", group, chosen, 0, value))
        return actions

    def _performable(self, seat: int, name: str, coins_left: int) -> bool:
        if name == "contracts":
            return bool(self.board)
        if name == "travel":
            return self._can_travel(seat, coins_left)
        return True

    def _can_travel(self, seat: int, coins: int) -> bool:
        """At least one affordable Travel step for some figure (3 coins plus the route's extra cost)."""
        camels = self.res[seat]["camels"]
        links = self._extra_links(seat)
        for start in self.figures[seat]:
            neighbours = list(ROUTES.neighbours(start)) + (list(links(start)) if links else [])
            for _other, (extra_camels, extra_coins) in neighbours:
                if extra_camels <= camels and TRAVEL_COST[1] + extra_coins <= coins:
                    return True
        return False

    def _card_performable(self, seat: int, card: int, die: int, coins: int) -> bool:
        data = CITY_CARDS[card]
        kind = data["kind"]
        res = self.res[seat]
        if kind in ("die_coins", "die_table", "count_posts"):
            return True
        if kind == "count_contracts":
            return bool(self.done[seat])
        if kind in ("repeat", "repeat_good_choice"):
            return can_afford(res, data["cost"]) and (kind != "repeat_good_choice" or coins >= 2)
        if kind == "repeat_move":
            return bool(self._route_options(seat, 1, coins, res["camels"], per_step={"camels": 2}))
        if kind == "exchange":
            return any(can_give(res, option["give"]) for option in data["options"])
        if kind == "city_bonus_table":
            return bool(self.small_cities_of(seat))
        if kind == "repeat_city_bonus":
            return bool(self.small_cities_of(seat)) and coins >= 1
        if kind == "repeat_move_goods":
            return sum(1 for g in GOODS if res[g] > 0) >= 2
        raise AssertionError(kind)

    def _place(self, seat: int, action: Action) -> None:
        details = action.details
        name = str(details["space"])
        group = list(details["dice"])
        chosen = int(details.get("value", 0))
        used = [t if value_of(t) else f"{kind_of(t)}{chosen}" for t in group]
        remove_tokens(self.dice[seat], group)
        fee = int(details["fee"])
        strength = int(details["strength"])
        if fee:
            pay(self.res[seat], {"coins": fee})
        self.main_done = True
        self._log({"event": "place", "seat": seat, "space": name, "dice": used, "fee": fee})
        if name == "khan":
            self.khan = [*self.khan, [seat, used[0]]]
        elif name.startswith("card-"):
            self.card_used[SLOT_INDEX[name[5:]]] = seat
        else:
            self.spaces[name] = [*self.spaces[name], [seat, used]]
        if name == "coins5":
            gain(self.res[seat], {"coins": 5})
            if self.num_players == 2:
                for other in self.mercator_seats(seat):
                    gain(self.res[other], {"coins": 2})
        elif name in BAZAAR:
            for other in self.mercator_seats(seat):
                gain(self.res[other], {BAZAAR[name]["good"]: 1})
            self._push([ColumnEffect(t=Column.kind, seat=seat, space=name, max=strength)])
        elif name == "khan":
            gain(self.res[seat], {"camels": 2})
            if self.num_players <= 3:
                for other in self.mercator_seats(seat):
                    gain(self.res[other], {"camels": 1})
            self._push(goods_choices(seat, 1, 0))
        elif name == "contracts":
            self._push([PickEffect(t=Pick.kind, seat=seat, die=strength, taken=[])])
        elif name == "travel":
            self.last_travel = seat
            self._push([TravelEffect(t=Travel.kind, seat=seat, max=strength, first=None)])
        else:
            self._use_card(seat, int(details["card"]), strength)

    def _use_card(self, seat: int, card: int, die: int) -> None:
        data = CITY_CARDS[card]
        kind = data["kind"]
        res = self.res[seat]
        if kind == "die_coins":
            gain(res, {"coins": data["per_pip"] * die})
        elif kind == "die_table":
            gain(res, {data["good"]: data["table"][die - 1]})
        elif kind == "count_posts":
            gain(res, data["gain"], min(die, len(self.posts[seat])))
        elif kind == "count_contracts":
            gain(res, data["gain"], min(die, len(self.done[seat])))
        elif kind in ("repeat", "repeat_good_choice"):
            self._push([RepeatEffect(t=Repeat.kind, seat=seat, card=card, max=die)])
        elif kind == "repeat_move":
            self._push([move_effect(seat, die, {"camels": 2}, skip=False)])
        elif kind == "exchange":
            self._push([ExchangeEffect(t=Exchange.kind, seat=seat, card=card, left=die, done=0, dir=None)])
        elif kind == "city_bonus_table":
            self._push([CountEffect(t=CITY_PICK.kind, seat=seat, n=data["table"][die - 1])])
        elif kind == "repeat_city_bonus":
            self._push([CityLoopEffect(t=CityLoop.kind, seat=seat, left=die, used=[])])
        elif kind == "repeat_move_goods":
            self._push([BuyMovesEffect(t=BuyMoves.kind, seat=seat, left=die, bought=0)])
        else:  # pragma: no cover
            raise AssertionError(kind)
