"""The Voyages of Marco Polo's effect kinds: one handler per kind, with its payload, actions and resolution.

Pure: no Django, no I/O, no RNG of its own (a reroll or a black die uses the state's `ChanceRng` through the
state). Each kind is a `TypedDict` (the keys stored in `pending`, short ones documented: they stay as
recorded matches have them, since the state hash covers them) and a handler registered in `EFFECTS`
(grouped by concern, after the kinds both family games share, `common.family_effects`, some of them
configured here with this game's kind and event names); `CHOICE_EFFECTS` is derived from it. Handlers
change the state only through its attributes and helpers in `rules.py` (placement, movement, rewards,
posts); they never mutate an effect's nested lists in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import TYPE_CHECKING, Any

from engine_service.games.base import Action
from engine_service.games.common import cardrow
from engine_service.games.common.effects import (
    AutoEffect,
    ChoiceEffect,
    EffectBase,
    choice_kinds,
    registry,
)
from engine_service.games.common.family_effects import (
    FAMILY_EFFECTS,
    GOOD_PAIRS,
    CityChoice,
    Compensation,
    CountEffect,
    DrawnContract,
    FullHand,
    Good,
    new_contracts,
    simple,
)
from engine_service.games.common.resources import can_afford, gain, max_times, pay
from engine_service.games.voyages.tables import (
    BAZAAR,
    CITY_BONUSES,
    CITY_CARDS,
    SLUG,
    SMALL_CITIES,
)

if TYPE_CHECKING:
    from engine_service.games.voyages.rules import VoyagesState

XIAN_LETTER = "D"


def can_give(res: Mapping[str, int], give: Mapping[str, int]) -> bool:
    """Exchange affordability: victory points may be given even below zero (the track starts at 50, D10)."""
    return can_afford(res, {k: v for k, v in give.items() if k != "vp"})


# --- payloads (the stored keys of each kind beyond "t" and "seat") -----------------------------------------
class DiceEffect(EffectBase):
    space: str  # the main action's space whose dice are chosen


class ColumnEffect(EffectBase):
    space: str  # the bazaar space
    max: int  # the die's strength: the highest column


class PickEffect(EffectBase):
    die: int  # the die's strength: the contract spaces 1..die may be taken
    taken: list[int]  # spaces taken so far (at most two)


class TravelEffect(EffectBase):
    max: int  # steps the Travel die allows
    first: dict[str, Any] | None  # Niccolo: the first figure's chosen route, while the second may go on


class MoveEffect(EffectBase):
    max: int  # steps
    per_step: dict[str, int]  # a cost paid per step (card 13: 2 camels)
    skip: bool  # the move may be declined


class CardEffect(EffectBase):
    card: int  # the city card


class RepeatEffect(CardEffect):
    max: int  # the die: at most so many times


class ExchangeEffect(CardEffect):
    left: int  # exchanges still allowed
    done: int  # exchanges made
    dir: int | None  # the direction kept by the first exchange (D13), or None


class CityLoopEffect(EffectBase):
    left: int  # paid city bonuses still allowed
    used: list[int]  # cities used already


class BuyMovesEffect(EffectBase):
    left: int  # moves still to buy
    bought: int  # moves bought


class CityBonusEffect(EffectBase):
    letter: str  # the small-city bonus letter


def move_effect(seat: int, steps: int, per_step: Mapping[str, int], *, skip: bool) -> MoveEffect:
    return {"t": Move.kind, "seat": seat, "max": steps, "per_step": dict(per_step), "skip": skip}


# --- the turn's second level -------------------------------------------------------------------------------
class Dice(ChoiceEffect["VoyagesState", DiceEffect]):
    """The dice of the main action on the space chosen from the menu."""

    kind = "dice"

    def actions(self, state: VoyagesState, effect: DiceEffect) -> list[Action]:
        return state._placements(int(effect["seat"]), only=str(effect["space"]))

    def resolve(self, state: VoyagesState, effect: DiceEffect, action: Action) -> None:
        state.pending.pop(0)
        state._place(int(effect["seat"]), action)


class Bonus(ChoiceEffect["VoyagesState", EffectBase]):
    """A bonus action: money bag, black die, reroll or adjustment (with its die)."""

    kind = "bonus"

    def actions(self, state: VoyagesState, effect: EffectBase) -> list[Action]:
        return state._bonus_menu(int(effect["seat"]))

    def resolve(self, state: VoyagesState, effect: EffectBase, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        if action.id == "black":
            pay(state.res[seat], {"camels": 3})
            state.black_bought = True
            state._take_black_die(seat)
        else:
            state._apply_die_bonus(seat, action)


# --- setup and round start ---------------------------------------------------------------------------------
class KeepGoals(ChoiceEffect["VoyagesState", EffectBase]):
    """Expert goal draft: keep 2 of the 4 goal cards dealt."""

    kind = "keep_goals"

    def actions(self, state: VoyagesState, effect: EffectBase) -> list[Action]:
        offer = state.goal_offers[int(effect["seat"])]
        return [
            Action(f"keep:{a}+{b}", "goals", {"goals": [a, b]}) for a, b in combinations(sorted(offer), 2)
        ]

    def resolve(self, state: VoyagesState, effect: EffectBase, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        state.goals[seat] = sorted(int(g) for g in action.details["goals"])
        state._log({"event": "goals_kept", "seat": seat})


class CityBonus(AutoEffect["VoyagesState", CityBonusEffect]):
    kind = "city_bonus"

    def run(self, state: VoyagesState, effect: CityBonusEffect) -> None:
        seat = int(effect["seat"])
        state._log({"event": "city_bonus", "seat": seat, "letter": effect["letter"]})
        state._reward(seat, CITY_BONUSES[effect["letter"]]["reward"])


class Column(ChoiceEffect["VoyagesState", ColumnEffect]):
    """A bazaar space's reward: columns 1..strength (at most 6)."""

    kind = "column"

    def actions(self, state: VoyagesState, effect: ColumnEffect) -> list[Action]:
        columns = BAZAAR[effect["space"]]["columns"]
        return [
            Action(f"column:{k}", "bazaar", {"space": effect["space"], "reward": columns[k - 1]})
            for k in range(1, min(6, int(effect["max"])) + 1)
        ]

    def resolve(self, state: VoyagesState, effect: ColumnEffect, action: Action) -> None:
        state.pending.pop(0)
        state._reward(int(effect["seat"]), action.details["reward"])


class Xian(ChoiceEffect["VoyagesState", EffectBase]):
    """Xian's bonus: the bonus of any other small city."""

    kind = "xian"

    def actions(self, state: VoyagesState, effect: EffectBase) -> list[Action]:
        actions = []
        for node in SMALL_CITIES:
            letter = state.city_bonus[str(node)]
            if letter != XIAN_LETTER:
                details = {"city": node, "letter": letter, "bonus": CITY_BONUSES[letter]["text"]}
                actions.append(Action(f"xian:{SLUG[node]}", "city_bonus", details))
        return actions

    def resolve(self, state: VoyagesState, effect: EffectBase, action: Action) -> None:
        state.pending.pop(0)
        letter = str(action.details["letter"])
        state._push([CityBonusEffect(t=CityBonus.kind, seat=int(effect["seat"]), letter=letter)])


# --- contracts ---------------------------------------------------------------------------------------------
# The top special contract: kept if a slot is free, else a choice (contract_full: decline it, to the pile's
# bottom, or discard an active one).
DRAW_CONTRACT = DrawnContract(
    "draw_contract",
    full_kind="contract_full",
    empty_event="special_pile_empty",
    kept_event="special_contract",
)
CONTRACT_FULL = FullHand("contract_full", kept_event="special_contract")


class Pick(ChoiceEffect["VoyagesState", PickEffect]):
    """The Contracts action: up to two of the board's spaces 1..die, then discards and space bonuses."""

    kind = "pick"

    def actions(self, state: VoyagesState, effect: PickEffect) -> list[Action]:
        taken = list(effect["taken"])
        actions = [Action("done", "contracts", {"taken": taken})] if taken else []
        if len(taken) < 2:
            for space in range(1, min(int(effect["die"]), len(state.board)) + 1):
                if space not in taken:
                    details = {"space": space, "contract": state.board[space - 1]}
                    actions.append(Action(f"take:{space}", "contracts", details))
        return actions

    def resolve(self, state: VoyagesState, effect: PickEffect, action: Action) -> None:
        seat = int(effect["seat"])
        if action.id == "done":
            self.finish(state, seat, list(effect["taken"]))
            return
        effect["taken"] = [*effect["taken"], int(action.details["space"])]
        space_limit = min(int(effect["die"]), len(state.board))
        if len(effect["taken"]) == 2 or len(effect["taken"]) >= space_limit:
            self.finish(state, seat, list(effect["taken"]))

    @staticmethod
    def finish(state: VoyagesState, seat: int, taken: list[int]) -> None:
        state.pending.pop(0)
        spaces = sorted(taken)
        cards = cardrow.take_from_row(state.board, spaces)
        state._log({"event": "take_contracts", "seat": seat, "spaces": spaces, "contracts": cards})
        effects = new_contracts(seat, cards, len(state.active[seat]) + len(cards) - 2)
        for space in spaces:
            if space in (5, 6):
                effects.append(CountEffect(t=SpaceBonus.kind, seat=seat, n=space - 4))
        state._push(effects)


class SpaceBonus(ChoiceEffect["VoyagesState", CountEffect]):
    """Contract spaces 5-6: `n` coins or `n` camels."""

    kind = "space_bonus"

    def actions(self, state: VoyagesState, effect: CountEffect) -> list[Action]:
        n = int(effect["n"])
        return [
            Action("bonus:coins", "space_bonus", {"coins": n}),
            Action("bonus:camels", "space_bonus", {"camels": n}),
        ]

    def resolve(self, state: VoyagesState, effect: CountEffect, action: Action) -> None:
        state.pending.pop(0)
        gain(state.res[int(effect["seat"])], {k: int(v) for k, v in action.details.items()})


# --- travel, moves and posts -------------------------------------------------------------------------------
class Travel(ChoiceEffect["VoyagesState", TravelEffect]):
    """The Travel action: a route of up to `max` steps, priced by the Travel table; Niccolo's second figure
    may then go on with the steps left (`first` holds the first figure's route meanwhile)."""

    kind = "travel"

    def actions(self, state: VoyagesState, effect: TravelEffect) -> list[Action]:
        seat = int(effect["seat"])
        res = state.res[seat]
        first = effect["first"]
        if first is None:
            options = state._route_options(seat, int(effect["max"]), res["coins"], res["camels"], table=True)
            return [state._route_action(seat, o) for o in options]
        actions = [Action("stay", "move", {"second": None})]
        remaining = int(effect["max"]) - int(first["steps"])
        if remaining > 0:
            options = state._route_options(
                seat,
                remaining,
                res["coins"] - int(first["coins"]),
                res["camels"] - int(first["camels"]),
                table=True,
                figures=[1 - int(first["fig"])],
                base_steps=int(first["steps"]),
            )
            actions += [state._route_action(seat, o) for o in options]
        return actions

    def resolve(self, state: VoyagesState, effect: TravelEffect, action: Action) -> None:
        seat = int(effect["seat"])
        details = dict(action.details)
        first = effect["first"]
        if first is None and state.chars[seat] == "niccolo" and int(effect["max"]) > int(details["steps"]):
            effect["first"] = details
            return
        state.pending.pop(0)
        moves = [details] if first is None else [first]
        if first is not None and action.id != "stay":
            moves.append(details)
        state._move(seat, moves, table=True)


class Move(ChoiceEffect["VoyagesState", MoveEffect]):
    """A move outside Travel (rewards, cards 13 and 30): up to `max` steps, maybe declined."""

    kind = "move"

    def actions(self, state: VoyagesState, effect: MoveEffect) -> list[Action]:
        seat = int(effect["seat"])
        res = state.res[seat]
        actions = [Action("skip", "move", {})] if effect["skip"] else []
        options = state._route_options(
            seat, int(effect["max"]), res["coins"], res["camels"], per_step=effect["per_step"]
        )
        return actions + [state._route_action(seat, o) for o in options]

    def resolve(self, state: VoyagesState, effect: MoveEffect, action: Action) -> None:
        state.pending.pop(0)
        if action.id != "skip":
            state._move(int(effect["seat"]), [action.details], table=False)


# --- city cards --------------------------------------------------------------------------------------------
def same_direction(state: VoyagesState, card: int) -> bool:
    return bool(CITY_CARDS[card]["always_same"]) or state.options["exchange_direction"] == "same"


class Repeat(ChoiceEffect["VoyagesState", RepeatEffect]):
    """A repeat card: pay its cost 1..max times (as affordable) for its gain each time."""

    kind = "repeat"

    def actions(self, state: VoyagesState, effect: RepeatEffect) -> list[Action]:
        data = CITY_CARDS[int(effect["card"])]
        most = max_times(state.res[int(effect["seat"])], data["cost"], int(effect["max"]))
        return [
            Action(f"times:{k}", "card", {"card": effect["card"], "times": k}) for k in range(1, most + 1)
        ]

    def resolve(self, state: VoyagesState, effect: RepeatEffect, action: Action) -> None:
        seat = int(effect["seat"])
        res = state.res[seat]
        state.pending.pop(0)
        data = CITY_CARDS[int(effect["card"])]
        times = int(action.details["times"])
        pay(res, data["cost"], times)
        if data["kind"] == "repeat_good_choice":
            state._push([simple(Good.kind, seat)] * times)
        else:
            gain(res, data["gain"], times)
        state._log({"event": "card", "seat": seat, "card": effect["card"], "times": times})


class Exchange(ChoiceEffect["VoyagesState", ExchangeEffect]):
    """An exchange card: up to `left` exchanges one at a time, or stop after the first."""

    kind = "exchange"

    def actions(self, state: VoyagesState, effect: ExchangeEffect) -> list[Action]:
        data = CITY_CARDS[int(effect["card"])]
        actions = [Action("stop", "card", {})] if effect["done"] else []
        for option in data["options"]:
            if effect["dir"] is not None and option["dir"] != effect["dir"]:
                continue
            if can_give(state.res[int(effect["seat"])], option["give"]):
                details = {"give": option["give"], "get": option["get"], "dir": option["dir"]}
                actions.append(Action(f"ex:{option['name']}", "card", details))
        return actions

    def resolve(self, state: VoyagesState, effect: ExchangeEffect, action: Action) -> None:
        if action.id == "stop":
            state.pending.pop(0)
            return
        res = state.res[int(effect["seat"])]
        gain(res, action.details["give"], -1)
        gain(res, action.details["get"])
        effect["done"] = int(effect["done"]) + 1
        effect["left"] = int(effect["left"]) - 1
        if same_direction(state, int(effect["card"])):
            effect["dir"] = int(action.details["dir"])
        if effect["left"] <= 0:
            state.pending.pop(0)


CITY_PICK = CityChoice("city_pick")  # card 7: the bonuses of 1 or 2 of the seat's small cities


class CityLoop(ChoiceEffect["VoyagesState", CityLoopEffect]):
    """A card that buys small-city bonuses for 1 coin each, each city once, up to `left`."""

    kind = "city_loop"

    def actions(self, state: VoyagesState, effect: CityLoopEffect) -> list[Action]:
        seat = int(effect["seat"])
        actions = [Action("stop", "card", {})] if effect["used"] else []
        if state.res[seat]["coins"] >= 1 and int(effect["left"]) > 0:
            for c in state.small_cities_of(seat):
                if c not in effect["used"]:
                    actions.append(Action(f"city:{SLUG[c]}", "card", {"city": c, "coins": 1}))
        return actions

    def resolve(self, state: VoyagesState, effect: CityLoopEffect, action: Action) -> None:
        if action.id == "stop":
            state.pending.pop(0)
            return
        seat = int(effect["seat"])
        pay(state.res[seat], {"coins": 1})
        city = int(action.details["city"])
        effect["used"] = [*effect["used"], city]
        effect["left"] = int(effect["left"]) - 1
        if effect["left"] <= 0:
            state.pending.pop(0)
        state._push([state._copied_bonus(seat, city)])


class BuyMoves(ChoiceEffect["VoyagesState", BuyMovesEffect]):
    """Card 30: buy moves for 2 different goods each, then walk them as one movement (`go`)."""

    kind = "buy_moves"

    def actions(self, state: VoyagesState, effect: BuyMovesEffect) -> list[Action]:
        res = state.res[int(effect["seat"])]
        actions = [Action("go", "card", {"moves": effect["bought"]})] if effect["bought"] else []
        if int(effect["left"]) > 0:
            for a, b in GOOD_PAIRS:
                if res[a] >= 1 and res[b] >= 1:
                    actions.append(Action(f"pay:{a}+{b}", "card", {"goods": [a, b]}))
        return actions

    def resolve(self, state: VoyagesState, effect: BuyMovesEffect, action: Action) -> None:
        seat = int(effect["seat"])
        if action.id != "go":
            for g in action.details["goods"]:
                pay(state.res[seat], {str(g): 1})
            effect["bought"] = int(effect["bought"]) + 1
            effect["left"] = int(effect["left"]) - 1
            if effect["left"] > 0:
                return
        state.pending.pop(0)
        state._push([move_effect(seat, effect["bought"], {}, skip=True)])


# The kinds by concern (those both family games share first).
COMP = Compensation("comp", logged=True)
TURN = (Dice(), Bonus())
SETUP = (KeepGoals(), COMP)
REWARDS = (CityBonus(), Column(), Xian(), SpaceBonus())
CONTRACTS = (DRAW_CONTRACT, CONTRACT_FULL, Pick())
MOVES = (Travel(), Move())
CARDS = (Repeat(), Exchange(), CITY_PICK, CityLoop(), BuyMoves())
EFFECTS = registry(*FAMILY_EFFECTS, *TURN, *SETUP, *REWARDS, *CONTRACTS, *MOVES, *CARDS)
CHOICE_EFFECTS = choice_kinds(EFFECTS)
