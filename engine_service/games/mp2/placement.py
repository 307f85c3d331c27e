"""Marco Polo II's dice placement (the normal actions): the tokens a seat may place, every legal placement
on the blue spaces, the city spaces, the Khan's spaces and the city cards, and what placing does.

Pure: no Django, no gRPC, no clock, no global `random`. `Mp2Placement` is one link of `Mp2State`'s chain
(see `setup_state`); it may call the movement and setup links below it, never the turn menu, and it declares
no saved field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.games.base import Action
from engine_service.games.common import dice
from engine_service.games.common.effects import EffectBase
from engine_service.games.common.family_effects import (
    CountEffect,
    reward_effect,
)
from engine_service.games.mp2.effects import (
    CARD_BONUS,
    CardEffect,
    Exchange,
    Offer,
    OfferEffect,
    Pick,
    PickEffect,
    Repeat,
    SealPick,
    SealPickEffect,
    marker_effect,
    move_effect,
)
from engine_service.games.mp2.movement import Mp2Movement
from engine_service.games.mp2.setup_state import (
    BLUE,
    BOOK_OF,
    KHAN_SLOTS,
    MAIN_ORDER,
    SPECIAL_SPACES,
    TRAVEL1_COINS,
    TRAVEL_CAP,
    TRAVEL_RANK,
)
from engine_service.games.mp2.tables import (
    BOOKS,
    CITY_CARDS,
    CONTRACT_CITIES,
    FIGURE_VALUE,
    SEAL_NAMES,
    SEALS,
    SPECIAL_CITIES,
    tok_value,
)


class Mp2Placement(Mp2Movement):
    """The dice placement (see the module docstring)."""

    # --- dice placement (the normal actions) ------------------------------------------------------------
    def _tokens(self, seat: int) -> list[str]:
        """Dice and, for Donata, her spare figures ("F<colour>") while she still holds a die."""
        held = self.dice[seat]
        if held and self.spare_figs[seat]:
            return [*held, *(f"F{c}" for c in self.spare_figs[seat])]
        return list(held)

    def _placements(self, seat: int, *, only: str | None = None, first: bool = False) -> list[Action]:
        """Every legal dice placement (for `only` that space; with `first`, at most one per space, enough
        for the turn menu)."""
        tokens = self._tokens(seat)
        char = self.chars[seat]
        actions: list[Action] = []
        groups_by_size: dict[int, list[tuple[str, ...]]] = {}
        performable: dict[tuple[str, int, int], bool] = {}

        def groups(size: int) -> list[tuple[str, ...]]:
            if size not in groups_by_size:
                groups_by_size[size] = dice.distinct_groups(tokens, size) if len(tokens) >= size else []
            return groups_by_size[size]

        def can(name: str, strength: int, extra: int) -> bool:
            key = (name, strength, extra)
            if key not in performable:
                performable[key] = self._performable(seat, name, strength, extra)
            return performable[key]

        for name in MAIN_ORDER if only is None else (only,):
            if name == "khan":
                found = self._khan_placements(seat, groups(1))
                actions.extend(found[:1] if first else found)
                continue
            if name in BLUE:
                space = BLUE[name]
                size = 1 if name == "seals" and char == "dewu" else space.dice
                if name.startswith("travel") and char == "gantulga" and name != "travel1":
                    continue
                placed = self.spaces[name]
                blocked = dice.colour_used(placed, seat)
                for group in groups(size):
                    if placed and any(t[0] == "F" for t in group):
                        continue
                    if blocked and any(dice.kind_of(t) == dice.COLOUR for t in group):
                        continue
                    values = [tok_value(t) for t in group]
                    fee = dice.placement_fee(space, bool(placed), values)
                    if fee is None:
                        continue
                    extra = fee + (TRAVEL1_COINS if name == "travel1" else 0)
                    if extra and not self.can_pay(seat, {"coins": extra}):
                        continue
                    if not can(name, min(values), extra):
                        continue
                    actions.append(self._place_action(name, group, fee, min(values)))
                    if first:
                        break
                continue
            for group in groups(1):
                tok = group[0]
                if not self._city_space_open(seat, name, tok):
                    continue
                if not can(name, tok_value(tok), 0):
                    continue
                actions.append(self._place_action(name, group, 0, tok_value(tok)))
                if first:
                    break
        return actions

    def _city_space_open(self, seat: int, name: str, tok: str) -> bool:
        """A special-city or city-card space: free, post (or figure colour) rules, colour once per city."""
        if name in self.brown:
            return False
        if name.startswith("card-"):
            slot = name[5:]
            if slot not in self.cards:
                return False
            city = None if slot in ("A1", "A2") else slot
        else:
            city = name.split("-")[0]
        if tok[0] == "F":
            colour = int(tok[1:])
            if city is not None and colour < self.num_players and city not in self.posts[colour]:
                return False
        elif city is not None and (city not in self.posts[seat] or city in self.posts_this_turn):
            return False
        if city is not None and not name.startswith("card-"):
            owner = int(tok[1:]) if tok[0] == "F" else seat
            coloured = tok[0] == "F" or dice.kind_of(tok) == dice.COLOUR
            for k in (1, 2):
                placed = self.brown.get(f"{city}-{k}")
                if (
                    coloured
                    and placed is not None
                    and placed[0] == owner
                    and dice.kind_of(placed[1]) == dice.COLOUR
                ):
                    return False
        return True

    @staticmethod
    def _place_action(name: str, group: Sequence[str], fee: int, strength: int) -> Action:
        details: dict[str, Any] = {"space": name, "dice": list(group), "fee": fee, "strength": strength}
        return Action(f"place:{name}:{'+'.join(group)}", "place", details)

    def _khan_placements(self, seat: int, singles: list[tuple[str, ...]]) -> list[Action]:
        if len(self.khan) >= KHAN_SLOTS:
            return []
        floor = tok_value(self.khan[-1][1]) if self.khan else 1
        actions = []
        for group in singles:
            tok = group[0]
            if tok[0] == "F":
                owner, blocked_kind = int(tok[1:]), True
            else:
                owner, blocked_kind = seat, dice.kind_of(tok) == dice.COLOUR
            if blocked_kind and dice.colour_used([[s, [t]] for s, t in self.khan], owner):
                continue
            if tok_value(tok) >= floor:
                actions.append(self._place_action("khan", group, 0, tok_value(tok)))
        return actions

    def _performable(self, seat: int, name: str, strength: int, coins_out: int) -> bool:
        if name in BOOK_OF:
            return strength >= int(BOOKS[BOOK_OF[name]]["min_die"])
        if name == "seals":
            return bool(self._seal_choices(seat, strength))
        if name.startswith("travel"):
            return self._can_step(seat, {"coins": coins_out}, {})
        if name == "contracts":
            return bool(self._available_contracts(seat))
        if name in SPECIAL_SPACES:
            return True
        if name.startswith("card-"):
            return self._card_performable(seat, self.cards[name[5:]], strength)
        raise AssertionError(name)  # pragma: no cover

    def _seal_choices(self, seat: int, tier: int) -> list[str]:
        return [s for s in SEAL_NAMES if s not in self.seals[seat] and SEALS[s]["min_die"] <= tier]

    def _available_contracts(self, seat: int) -> list[tuple[str, int]]:
        out = []
        for city in CONTRACT_CITIES:
            if city in self.posts[seat]:
                for slot, cid in enumerate(self.contract_spaces[city]):
                    if cid is not None:
                        out.append((city, slot + 1))
        return out

    def _card_performable(self, seat: int, card: str, die: int) -> bool:
        data = CITY_CARDS[card]
        kind = data["kind"]
        if kind in ("die_coins", "die_table"):
            return True
        if kind == "count":
            return bool(self.done[seat]) if data["of"] == "contracts" else bool(self.posts[seat])
        if kind == "city_bonus":
            return bool(self._bonus_cities(seat))
        if kind == "exchange":
            return any(self._can_give(seat, o["give"]) for o in data["options"])
        if kind == "seal":
            return self.can_pay(seat, data["cost"]) and bool(self._seal_choices(seat, die))
        if kind == "move":
            return self._can_step(seat, {}, data["per_step"])
        if kind == "repeat":
            return self.can_pay(seat, data["cost"])
        raise AssertionError(kind)  # pragma: no cover

    def _copied_bonus(self, seat: int, city: str) -> EffectBase:
        """A copied "!" bonus: a special city's bonus, or the marker of a marker city."""
        if city in SPECIAL_CITIES:
            return reward_effect(seat, SPECIAL_CITIES[city]["bonus"])
        return marker_effect(seat, self.markers[city])

    def _bonus_cities(self, seat: int) -> list[str]:
        cities = self.marker_cities_of(seat)
        if self.options["bonus_copy_scope"] == "with_special":
            cities += [c for c in SPECIAL_CITIES if c in self.posts[seat]]
        return cities

    def _can_give(self, seat: int, give: Mapping[str, int], times: int = 1) -> bool:
        """Exchange affordability: victory points may be given even below zero."""
        return self.can_pay(seat, {k: v for k, v in give.items() if k != "vp"}, times)

    def _place(self, seat: int, action: Action) -> None:
        details = action.details
        name = str(details["space"])
        group = [str(t) for t in details["dice"]]
        placed_dice = [t for t in group if t[0] != "F"]
        figs = [int(t[1:]) for t in group if t[0] == "F"]
        strength = int(details["strength"])
        occupied = bool(self.spaces[name]) if name in BLUE else False
        dice.remove_tokens(self.dice[seat], placed_dice)
        if figs:
            self.spare_figs[seat] = [c for c in self.spare_figs[seat] if c not in figs]
        fee = int(details["fee"])
        extra = fee + (TRAVEL1_COINS if name == "travel1" else 0)
        if extra:
            self._pay(seat, {"coins": extra})
        self.main_done = True
        entries: list[list[Any]] = []
        if placed_dice:
            entries.append([seat, placed_dice])
        entries += [[colour, [f"c{FIGURE_VALUE}"]] for colour in figs]
        self._log({"event": "place", "seat": seat, "space": name, "dice": group, "fee": fee})
        if name == "khan":
            owner = figs[0] if figs else seat
            self.khan = [*self.khan, [owner, entries[0][1][0]]]
        elif name in BLUE:
            self.spaces[name] = [*self.spaces[name], *entries]
        else:
            self.brown[name] = [entries[0][0], entries[0][1][0]]
        if placed_dice and occupied and self.chars[seat] == "donata":
            self._push([reward_effect(seat, {"camels": 2})])
        if name in BOOK_OF:
            numeral = BOOK_OF[name]
            self._push([OfferEffect(t=Offer.kind, seat=seat, book=numeral)])
        elif name == "khan":
            self._gain(seat, {"coins": 4, "camels": 2})
        elif name == "seals":
            self._push([SealPickEffect(t=SealPick.kind, seat=seat, tier=strength)])
        elif name in TRAVEL_RANK:
            rank = 1 if self.chars[seat] == "gantulga" else TRAVEL_RANK[name]
            if rank >= self.travel_rank:
                self.travel_rank = rank
                self.next_first = seat
            self._push([move_effect(seat, name, min(TRAVEL_CAP[name], strength), {}, optional=False)])
        elif name == "contracts":
            self._push([PickEffect(t=Pick.kind, seat=seat, taken=[])])
        elif name in SPECIAL_SPACES:
            self._use_special(seat, name, strength)
        else:
            self._use_card(seat, self.cards[name[5:]], strength)

    def _use_special(self, seat: int, name: str, die: int) -> None:
        city = name.split("-")[0]
        data = SPECIAL_CITIES[city]
        effects: list[EffectBase] = [reward_effect(seat, data["action"])]
        if self.improved(seat, data["seal"]):
            if self.options["special_city_repeat"] == "by_die":
                times = 1 if die <= 3 else 2
            else:
                times = int(name.split("-")[1])
            effects += [reward_effect(seat, SEALS[data["seal"]]["bonus"])] * times
        self._push(effects)

    def _use_card(self, seat: int, card: str, die: int) -> None:
        data = CITY_CARDS[card]
        kind = data["kind"]
        self._log({"event": "card", "seat": seat, "card": card, "die": die})
        if kind == "die_coins":
            self._gain(seat, {"coins": int(data["per_pip"]) * die})
        elif kind == "die_table":
            self._gain(seat, {data["good"]: int(data["table"][die - 1])})
        elif kind == "count":
            count = len(self.done[seat]) if data["of"] == "contracts" else len(self.posts[seat])
            self._gain(seat, data["gain"], min(die, count))
        elif kind == "city_bonus":
            self._push([CountEffect(t=CARD_BONUS.kind, seat=seat, n=int(data["table"][die - 1]))])
        elif kind == "exchange":
            self._push([CardEffect(t=Exchange.kind, seat=seat, card=card, max=die)])
        elif kind == "seal":
            self._pay(seat, data["cost"])
            self._push([SealPickEffect(t=SealPick.kind, seat=seat, tier=die)])
        elif kind == "move":
            self._push([move_effect(seat, "card", die, data["per_step"], optional=False)])
        elif kind == "repeat":
            self._push([CardEffect(t=Repeat.kind, seat=seat, card=card, max=die)])
        else:  # pragma: no cover
            raise AssertionError(kind)
