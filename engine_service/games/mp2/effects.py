"""Marco Polo II's effect kinds (The Caravans' included): one handler per kind, with its payload, actions and
resolution.

Pure: no Django, no I/O, no RNG of its own (a die bonus rolls through the state's `ChanceRng`). Each kind is
a `TypedDict` (the keys stored in `pending`, short ones documented: they stay as recorded matches have them,
since the state hash covers them) and a handler registered in `EFFECTS` (grouped by concern, after the kinds
both family games share, `common.family_effects`, some of them configured here with this game's kind and
event names); `CHOICE_EFFECTS` is derived from it. Handlers change the state only through its attributes
and helpers in `rules.py` (placement, rewards, posts, caravans); they never mutate an effect's nested
lists in place.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from itertools import combinations, product
from typing import TYPE_CHECKING, Any, NotRequired

from engine_service.games.base import Action
from engine_service.games.common.dice import COLOUR, kind_of
from engine_service.games.common.effects import AutoEffect, ChoiceEffect, EffectBase, choice_kinds, registry
from engine_service.games.common.family_effects import (
    FAMILY_EFFECTS,
    CityChoice,
    Compensation,
    CountEffect,
    DrawnContract,
    FullHand,
    new_contracts,
    posts_effect,
)
from engine_service.games.common.resources import max_times_with, pay_with
from engine_service.games.mp2.tables import (
    BOOKS,
    CARAVAN_SELL_VP,
    CITY_CARDS,
    COLOURS,
    GOODS,
    ISABELLA_FACE,
    ISABELLA_PAIR,
    MARKERS,
    MONGKE_OASIS_VP,
    NEIGHBOURS,
    OASES,
    OFFER_TILES,
    POST_CITIES,
    ROUTE_SEAL,
    SEALS,
    UPGRADE,
    WILD,
    WILD_COVERS,
    tok_value,
)

if TYPE_CHECKING:
    from engine_service.games.mp2.rules import Mp2State


# --- payloads (the stored keys of each kind beyond "t" and "seat") -----------------------------------------
class DieBonusEffect(EffectBase):
    bonus: str  # bag | reroll | adjust: which die bonus the die is chosen for
    as_action: bool  # the money bag taken as the turn's normal action (no placement was possible)


class DicePickEffect(EffectBase):
    space: str  # the normal action's space whose dice are chosen


class OfferEffect(EffectBase):
    book: str  # the book's numeral (I, II, III)


class SealPickEffect(EffectBase):
    tier: int  # the die: seals of this minimum die or lower


class MoveEffect(EffectBase):
    mode: str  # travel1 | travel2 | travel3 | card | reward
    left: int  # steps left
    taken: int  # steps walked
    per: dict[str, int]  # a cost paid per step (city cards)
    optional: bool  # may be skipped before any step
    moved: list[int]  # figures moved (each moves once)
    entered: list[str]  # nodes entered on the way (the upper Travel's extra post)
    oases: list[str]  # oases entered (Möngke)


class ExtraPostEffect(EffectBase):
    nodes: list[str]  # the end cities getting posts
    candidates: list[str]  # cities passed where the upper Travel's extra post may go


class PickEffect(EffectBase):
    taken: list[list[Any]]  # [city, slot] taken so far


class CityContractEffect(EffectBase):
    city: str  # the contract city a post was placed in


class CardEffect(EffectBase):
    """repeat, exchange."""

    card: str  # the city card
    max: int  # the die: at most so many times


class CaravanMoveEffect(EffectBase):
    left: list[int]  # steps left for each caravan


class CaravanGoodEffect(EffectBase):
    goods: list[str]  # the completed caravan's goods still to use, first one now


class ReturnTileEffect(EffectBase):
    caravan: int  # the completed caravan's index
    tiles: list[str]  # Tartarino: the route tiles he may return


class CaravanHomeEffect(EffectBase):
    caravan: int  # the caravan's index
    tile: NotRequired[str | None]  # the route tile returned (default: its own)


class MarkerEffect(EffectBase):
    marker: str  # a city bonus marker (CB1-CB7)


def marker_effect(seat: int, marker: str) -> MarkerEffect:
    return {"t": Marker.kind, "seat": seat, "marker": marker}


def move_effect(
    seat: int, mode: str, steps: int, per_step: Mapping[str, int], *, optional: bool
) -> MoveEffect:
    return {
        "t": Move.kind,
        "seat": seat,
        "mode": mode,
        "left": steps,
        "taken": 0,
        "per": dict(per_step),
        "optional": optional,
        "moved": [],
        "entered": [],
        "oases": [],
    }


# --- the turn's second level -------------------------------------------------------------------------------
class SecondLevel(ChoiceEffect["Mp2State", Any]):
    """A choice of the turn menu's second level: the action taken is applied as a turn action."""

    def resolve(self, state: Mp2State, effect: Any, action: Action) -> None:
        state.pending.pop(0)
        state._turn_apply(int(effect["seat"]), action)


class DieBonus(SecondLevel):
    """The die for a money bag, a reroll or a change of value."""

    kind = "die_bonus"

    def actions(self, state: Mp2State, effect: DieBonusEffect) -> list[Action]:
        return state._die_bonus_actions(int(effect["seat"]), str(effect["bonus"]), bool(effect["as_action"]))


class DicePick(SecondLevel):
    """The dice of the normal action on the space chosen from the menu."""

    kind = "dice_pick"

    def actions(self, state: Mp2State, effect: DicePickEffect) -> list[Action]:
        return state._placements(int(effect["seat"]), only=str(effect["space"]))


# --- setup and round start ---------------------------------------------------------------------------------
class KeepGoal(ChoiceEffect["Mp2State", EffectBase]):
    kind = "keep_goal"

    def actions(self, state: Mp2State, effect: EffectBase) -> list[Action]:
        return [Action(f"keep:{g}", "goal", {"goal": g}) for g in state.goal_offers[int(effect["seat"])]]

    def resolve(self, state: Mp2State, effect: EffectBase, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        state.goals[seat] = str(action.details["goal"])
        state._log({"event": "goal_kept", "seat": seat})


class DonataPick(ChoiceEffect["Mp2State", EffectBase]):
    """Donata's three spare figures, by colour."""

    kind = "donata_pick"

    def actions(self, state: Mp2State, effect: EffectBase) -> list[Action]:
        colours = state.donata_colours(int(effect["seat"]))
        return [
            Action(f"figures:{'+'.join(COLOURS[c] for c in trio)}", "figures", {"colours": list(trio)})
            for trio in combinations(colours, 3)
        ]

    def resolve(self, state: Mp2State, effect: EffectBase, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        state.spare_figs[seat] = [int(c) for c in action.details["colours"]]
        state._log({"event": "figures", "seat": seat, "colours": list(action.details["colours"])})


class FirstRound(AutoEffect["Mp2State", EffectBase]):
    kind = "first_round"

    def run(self, state: Mp2State, effect: EffectBase) -> None:
        state._start_round()


class Income(AutoEffect["Mp2State", EffectBase]):
    kind = "income"

    def run(self, state: Mp2State, effect: EffectBase) -> None:
        state._income(int(effect["seat"]))


class Isabella(ChoiceEffect["Mp2State", EffectBase]):
    """Isabella's round start: which pairs of equal colour dice take the pair bonus (the rest: faces)."""

    kind = "isabella"

    def actions(self, state: Mp2State, effect: EffectBase) -> list[Action]:
        counts = Counter(tok_value(t) for t in state.dice[int(effect["seat"])] if kind_of(t) == COLOUR)
        values = sorted(v for v, c in counts.items() if c >= 2)
        actions = []
        for ks in product(*(range(counts[v] // 2 + 1) for v in values)):
            chosen = {v: k for v, k in zip(values, ks, strict=True) if k}
            name = "+".join(f"{k}x{v}" for v, k in sorted(chosen.items())) or "none"
            actions.append(
                Action(f"pairs:{name}", "isabella", {"pairs": {str(v): k for v, k in chosen.items()}})
            )
        return actions

    def resolve(self, state: Mp2State, effect: EffectBase, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        pairs = {int(v): int(k) for v, k in action.details["pairs"].items()}
        for value, k in pairs.items():
            state._gain(seat, ISABELLA_PAIR[value], k)
        singles = Counter(tok_value(t) for t in state.dice[seat])
        for value, k in pairs.items():
            singles[value] -= 2 * k
        for value, count in singles.items():
            state._gain(seat, ISABELLA_FACE[value], count)


class MailinDouble(ChoiceEffect["Mp2State", EffectBase]):
    """Mailin's round start: one of her "!" bonuses once more."""

    kind = "mailin_double"

    def actions(self, state: Mp2State, effect: EffectBase) -> list[Action]:
        return [
            Action(f"double:{city}", "double", {"city": city})
            for city in state._double_choices(int(effect["seat"]))
        ]

    def resolve(self, state: Mp2State, effect: EffectBase, action: Action) -> None:
        state.pending.pop(0)
        state._push([state._copied_bonus(int(effect["seat"]), str(action.details["city"]))])


# --- rewards -----------------------------------------------------------------------------------------------
class Marker(AutoEffect["Mp2State", MarkerEffect]):
    kind = "marker"

    def run(self, state: Mp2State, effect: MarkerEffect) -> None:
        seat = int(effect["seat"])
        state._log({"event": "city_bonus", "seat": seat, "marker": effect["marker"]})
        state._reward(seat, MARKERS[effect["marker"]])


class OtherMarker(ChoiceEffect["Mp2State", EffectBase]):
    """CB7: the bonus of any marker on the board (but itself)."""

    kind = "other_marker"

    def actions(self, state: Mp2State, effect: EffectBase) -> list[Action]:
        return [
            Action(f"marker:{m}", "city_bonus", {"marker": m})
            for m in sorted(set(state.markers.values()))
            if MARKERS[m].get("other_marker") is None
        ]

    def resolve(self, state: Mp2State, effect: EffectBase, action: Action) -> None:
        state.pending.pop(0)
        state._push([marker_effect(int(effect["seat"]), str(action.details["marker"]))])


class Offer(ChoiceEffect["Mp2State", OfferEffect]):
    """A book's offer: one of its two free gains, or the offer tile's for 1 or 2 jade; then caravan steps."""

    kind = "offer"

    def actions(self, state: Mp2State, effect: OfferEffect) -> list[Action]:
        book = BOOKS[effect["book"]]
        tile = OFFER_TILES[state.offer_now[effect["book"]]]
        jade = state.res[int(effect["seat"])]["jade"]
        actions = [
            Action("offer:free1", "offer", {"jade": 0, "gain": book["free"][0]}),
            Action("offer:free2", "offer", {"jade": 0, "gain": book["free"][1]}),
        ]
        for k in (1, 2):
            if jade >= k:
                details = {"jade": k, "gain": tile[f"jade{k}"], "tile": tile["id"]}
                actions.append(Action(f"offer:jade{k}", "offer", details))
        return actions

    def resolve(self, state: Mp2State, effect: OfferEffect, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        if int(action.details["jade"]):
            pay_with(state.res[seat], {"jade": int(action.details["jade"])}, WILD, ())
        state._log({"event": "offer", "seat": seat, "book": effect["book"], "choice": action.id})
        state._reward(seat, action.details["gain"])
        if state.options["caravans"] and state.caravans[seat]:
            steps = int(BOOKS[effect["book"]]["caravan_steps"]) + (2 if state.chars[seat] == "tebaldo" else 0)
            caravans = len(state.caravans[seat])
            state._push([CaravanMoveEffect(t=CaravanMove.kind, seat=seat, left=[steps] * caravans)])


class SealPick(ChoiceEffect["Mp2State", SealPickEffect]):
    """A guild seal not held yet, of minimum die up to `tier`; it brings its jade."""

    kind = "seal_pick"

    def actions(self, state: Mp2State, effect: SealPickEffect) -> list[Action]:
        return [
            Action(f"seal:{s}", "seal", {"seal": s, "jade": SEALS[s]["jade"]})
            for s in state._seal_choices(int(effect["seat"]), int(effect["tier"]))
        ]

    def resolve(self, state: Mp2State, effect: SealPickEffect, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        seal = str(action.details["seal"])
        state.seals[seat] = {**state.seals[seat], seal: 1}
        state._gain(seat, {"jade": int(SEALS[seal]["jade"])})
        state._log({"event": "seal", "seat": seat, "seal": seal})


# --- movement and posts ------------------------------------------------------------------------------------
class Move(ChoiceEffect["Mp2State", MoveEffect]):
    """A movement of up to `left` steps, each figure once (Travel, city cards, rewards); posts and bonuses
    are settled when it ends (`finish`), also when it ends for lack of any possible step."""

    kind = "move"

    def actions(self, state: Mp2State, effect: MoveEffect) -> list[Action]:
        seat = int(effect["seat"])
        actions = []
        if int(effect["taken"]) > 0:
            actions.append(Action("move:stop", "move", {}))
        elif effect["optional"]:
            actions.append(Action("skip", "move", {}))
        left = int(effect["left"])
        if left <= 0:
            return actions
        two = len(state.figures[seat]) > 1
        for fig in range(len(state.figures[seat])):
            if fig in effect["moved"]:
                continue
            prefix = f"f{fig + 1}:" if two else ""
            for end, steps, cost, walked in state._routes(seat, fig, left, effect["per"]):
                price = "+".join(f"{v}{k}" for k, v in cost.items() if v) or "free"
                details = {"figure": fig, "to": end, "steps": steps, "path": list(walked), "cost": cost}
                actions.append(Action(f"route:{prefix}{end}:{price}", "move", details))
        return actions

    def resolve(self, state: Mp2State, effect: MoveEffect, action: Action) -> None:
        if action.id in ("move:stop", "skip"):
            state.pending.pop(0)
            if action.id == "move:stop":
                self.finish(state, effect)
            return
        seat = int(effect["seat"])
        details = action.details
        fig = int(details["figure"])
        path = [str(n) for n in details["path"]]
        state._pay(seat, details["cost"])
        figures = list(state.figures[seat])
        figures[fig] = str(details["to"])
        state.figures[seat] = figures
        effect["left"] = int(effect["left"]) - int(details["steps"])
        effect["taken"] = int(effect["taken"]) + int(details["steps"])
        effect["moved"] = [*effect["moved"], fig]
        effect["entered"] = [*effect["entered"], *path]
        effect["oases"] = [
            *effect["oases"],
            *dict.fromkeys(n for n in path if n in OASES and n not in effect["oases"]),
        ]
        state._log(
            {"event": "move", "seat": seat, "figure": fig, "path": path, "cost": dict(details["cost"])}
        )
        others = [f for f in range(len(state.figures[seat])) if f not in effect["moved"]]
        if int(effect["left"]) <= 0 or not others or not state._steps(seat, effect["per"], {}):
            state.pending.pop(0)
            self.finish(state, effect)

    def abandon(self, state: Mp2State, effect: MoveEffect) -> None:
        if int(effect["taken"]) > 0:
            self.finish(state, effect)

    @staticmethod
    def finish(state: Mp2State, effect: MoveEffect) -> None:
        """Settle a movement: posts where moved figures end (and the upper Travel's extra post in a city
        passed), Möngke's oasis rewards; all placement bonuses after the posts."""
        seat = int(effect["seat"])
        posts = state.posts[seat]
        ends: list[str] = []
        for fig in effect["moved"]:
            node = state.figures[seat][int(fig)]
            if node in POST_CITIES and node not in posts and node not in ends:
                ends.append(node)
        effects: list[EffectBase] = []
        if effect["mode"] == "travel3":
            finals = {state.figures[seat][int(f)] for f in effect["moved"]}
            candidates = sorted(
                {n for n in effect["entered"] if n in POST_CITIES and n not in posts and n not in finals}
            )
            if candidates:
                effects.append(
                    ExtraPostEffect(t=ExtraPost.kind, seat=seat, nodes=ends, candidates=candidates)
                )
        if not effects:
            effects.append(posts_effect(seat, ends))
        if state.chars[seat] == "mongke" and effect["oases"]:
            n = len(effect["oases"])
            state.res[seat]["vp"] += MONGKE_OASIS_VP * n
            effects.append(CountEffect(t=Mongke.kind, seat=seat, n=n))
        state._log({"event": "moved", "seat": seat, "to": list(state.figures[seat]), "mode": effect["mode"]})
        state._push(effects)


class ExtraPost(ChoiceEffect["Mp2State", ExtraPostEffect]):
    """The upper Travel's extra post in one city passed (or none)."""

    kind = "extra_post"

    def actions(self, state: Mp2State, effect: ExtraPostEffect) -> list[Action]:
        return [Action("extra:none", "post", {"city": None})] + [
            Action(f"extra:{city}", "post", {"city": city}) for city in effect["candidates"]
        ]

    def resolve(self, state: Mp2State, effect: ExtraPostEffect, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        nodes = list(effect["nodes"])
        extra = action.details["city"]
        if extra is not None and not state.options["extra_post_bonus"]:
            # Q7 alternative: the extra post brings no bonus; the end cities' posts do.
            state._push(
                [
                    posts_effect(seat, nodes),
                    posts_effect(seat, [str(extra)], quiet=True),
                ]
            )
        else:
            nodes += [str(extra)] if extra else []
            state._push([posts_effect(seat, nodes)])


class Mongke(ChoiceEffect["Mp2State", CountEffect]):
    """Möngke's oases: per oasis entered 2 coins or 1 camel (the points are already scored)."""

    kind = "mongke"

    def actions(self, state: Mp2State, effect: CountEffect) -> list[Action]:
        n = int(effect["n"])
        return [
            Action(f"oasis:{c}coins+{n - c}camels", "oasis", {"coins": 2 * c, "camels": n - c})
            for c in range(n, -1, -1)
        ]

    def resolve(self, state: Mp2State, effect: CountEffect, action: Action) -> None:
        state.pending.pop(0)
        coins, camels = int(action.details["coins"]), int(action.details["camels"])
        state._gain(int(effect["seat"]), {"coins": coins, "camels": camels})


# --- contracts ---------------------------------------------------------------------------------------------
def take_contract(state: Mp2State, city: str, slot: int) -> str:
    """Take the contract off a city's space (1 or 2), leaving it empty until the turn ends."""
    cid = state.contract_spaces[city][slot - 1]
    assert cid is not None
    spaces = list(state.contract_spaces[city])
    spaces[slot - 1] = None
    state.contract_spaces[city] = spaces
    return cid


class Pick(ChoiceEffect["Mp2State", PickEffect]):
    """The Contracts action: up to two contracts (Vidal one) in post cities, then 3 coins."""

    kind = "pick"

    def actions(self, state: Mp2State, effect: PickEffect) -> list[Action]:
        seat = int(effect["seat"])
        taken = [tuple(t) for t in effect["taken"]]
        actions = [Action("done", "contracts", {"taken": effect["taken"]})] if taken else []
        if len(taken) < self.limit(state, seat):
            for city, slot in state._available_contracts(seat):
                if (city, slot) not in taken:
                    details = {"city": city, "slot": slot, "contract": state.contract_spaces[city][slot - 1]}
                    actions.append(Action(f"take:{city}:{slot}", "contracts", details))
        return actions

    def resolve(self, state: Mp2State, effect: PickEffect, action: Action) -> None:
        seat = int(effect["seat"])
        if action.id != "done":
            effect["taken"] = [*effect["taken"], [action.details["city"], int(action.details["slot"])]]
            if len(effect["taken"]) < self.limit(state, seat):
                return
        state.pending.pop(0)
        self.finish(state, seat, list(effect["taken"]))

    def abandon(self, state: Mp2State, effect: PickEffect) -> None:
        if effect["taken"]:
            self.finish(state, int(effect["seat"]), list(effect["taken"]))

    @staticmethod
    def limit(state: Mp2State, seat: int) -> int:
        return 1 if state.chars[seat] == "vidal" else 2

    @staticmethod
    def finish(state: Mp2State, seat: int, taken: list[list[Any]]) -> None:
        cards = [take_contract(state, city, int(slot)) for city, slot in taken]
        state._log({"event": "take_contracts", "seat": seat, "contracts": cards})
        need = len(state.active[seat]) + len(cards) - 2
        state._push(new_contracts(seat, cards, need, old=list(state.active[seat]), coins=3))


class CityContract(ChoiceEffect["Mp2State", CityContractEffect]):
    """A post in a contract city: one of its contracts may be taken (or declined)."""

    kind = "city_contract"

    def actions(self, state: Mp2State, effect: CityContractEffect) -> list[Action]:
        city = str(effect["city"])
        places = [(city, s + 1) for s, c in enumerate(state.contract_spaces[city]) if c is not None]
        return take_one_actions(state, places)

    def resolve(self, state: Mp2State, effect: CityContractEffect, action: Action) -> None:
        take_one(state, int(effect["seat"]), action)


class RewardContract(ChoiceEffect["Mp2State", EffectBase]):
    """A reward's contract: one from any post city's spaces (or none)."""

    kind = "reward_contract"

    def actions(self, state: Mp2State, effect: EffectBase) -> list[Action]:
        return take_one_actions(state, state._available_contracts(int(effect["seat"])))

    def resolve(self, state: Mp2State, effect: EffectBase, action: Action) -> None:
        take_one(state, int(effect["seat"]), action)


def take_one_actions(state: Mp2State, places: list[tuple[str, int]]) -> list[Action]:
    actions = [Action("decline", "contract", {})]
    for city, slot in places:
        details = {"city": city, "slot": slot, "contract": state.contract_spaces[city][slot - 1]}
        actions.append(Action(f"contract:take:{city}:{slot}", "contract", details))
    return actions


def take_one(state: Mp2State, seat: int, action: Action) -> None:
    state.pending.pop(0)
    if action.id == "decline":
        return
    cid = take_contract(state, str(action.details["city"]), int(action.details["slot"]))
    state._log({"event": "take_contracts", "seat": seat, "contracts": [cid]})
    need = 1 if len(state.active[seat]) >= 2 else 0
    state._push(new_contracts(seat, [cid], need, old=list(state.active[seat])))


# The pile's top contract: kept if a slot is free, else a choice (pile_full: decline it or discard an active
# one; regular contracts go to the pile's bottom, starting ones to the box).
PILE_CONTRACT = DrawnContract(
    "pile_contract", full_kind="pile_full", empty_event="contract_pile_empty", kept_event="pile_contract"
)
PILE_FULL = FullHand("pile_full", kept_event="pile_contract")


# --- city cards --------------------------------------------------------------------------------------------
class Repeat(ChoiceEffect["Mp2State", CardEffect]):
    """A repeat card: pay its cost 1..max times (as affordable, jade standing in) for its gain each time."""

    kind = "repeat"

    def actions(self, state: Mp2State, effect: CardEffect) -> list[Action]:
        data = CITY_CARDS[str(effect["card"])]
        res = state.res[int(effect["seat"])]
        most = max_times_with(res, data["cost"], WILD, WILD_COVERS, int(effect["max"]))
        return [
            Action(f"times:{k}", "card", {"card": effect["card"], "times": k}) for k in range(1, most + 1)
        ]

    def resolve(self, state: Mp2State, effect: CardEffect, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        data = CITY_CARDS[str(effect["card"])]
        times = int(action.details["times"])
        state._pay(seat, data["cost"], times)
        for _ in range(times):
            state._reward(seat, data["gain"])


class Exchange(ChoiceEffect["Mp2State", CardEffect]):
    """An exchange card: one of its exchanges, 1..max times at once."""

    kind = "exchange"

    def actions(self, state: Mp2State, effect: CardEffect) -> list[Action]:
        seat = int(effect["seat"])
        actions = []
        for option in CITY_CARDS[str(effect["card"])]["options"]:
            for k in range(1, int(effect["max"]) + 1):
                if not state._can_give(seat, option["give"], k):
                    break
                details = {"give": option["give"], "get": option["get"], "times": k}
                actions.append(Action(f"ex:{option['name']}:{k}", "card", details))
        return actions

    def resolve(self, state: Mp2State, effect: CardEffect, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        times = int(action.details["times"])
        give = action.details["give"]
        state._pay(seat, {k: v for k, v in give.items() if k != "vp"}, times)
        state.res[seat]["vp"] -= int(give.get("vp", 0)) * times
        state._gain(seat, action.details["get"], times)


CARD_BONUS = CityChoice("card_bonus")  # CC03-like cards: the "!" bonuses of 1 or 2 of the seat's cities


# --- caravans (The Caravans) -------------------------------------------------------------------------------
class Load(ChoiceEffect["Mp2State", EffectBase]):
    """A claimed route's caravan: load 1..capacity goods."""

    kind = "load"

    def actions(self, state: Mp2State, effect: EffectBase) -> list[Action]:
        res = state.res[int(effect["seat"])]
        cap = int(state.options["caravan_capacity"])
        loads: list[tuple[str, ...]] = []
        for size in range(1, cap + 1):
            held = sorted(g for g in GOODS for _ in range(min(res[g], size)))
            loads += sorted(set(combinations(held, size)))
        return [Action(f"load:{'+'.join(combo)}", "caravan", {"goods": list(combo)}) for combo in loads]

    def resolve(self, state: Mp2State, effect: EffectBase, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        goods = [str(g) for g in action.details["goods"]]
        pay_with(state.res[seat], dict(Counter(goods)), WILD, ())
        caravans = state.caravans[seat]
        last = dict(caravans[-1])
        last["goods"] = goods
        state.caravans[seat] = [*caravans[:-1], last]
        state._log({"event": "caravan_loaded", "seat": seat, "goods": goods})


class CaravanMove(ChoiceEffect["Mp2State", CaravanMoveEffect]):
    """A book's caravan steps: one step at a time for any caravan with steps left (sea routes need the
    seal), or stop."""

    kind = "caravan_move"

    def actions(self, state: Mp2State, effect: CaravanMoveEffect) -> list[Action]:
        seat = int(effect["seat"])
        actions = [Action("stop", "caravan", {})]
        seals = state.seals[seat]
        several = len(state.caravans[seat]) > 1
        for i, caravan in enumerate(state.caravans[seat]):
            if int(effect["left"][i]) <= 0:
                continue
            prefix = f"{i + 1}:" if several else ""
            for other, _cost in NEIGHBOURS[str(caravan["at"])]:
                seal = ROUTE_SEAL[(caravan["at"], other)]
                if not seal or seal in seals:
                    actions.append(Action(f"cstep:{prefix}{other}", "caravan", {"caravan": i, "to": other}))
        return actions

    def resolve(self, state: Mp2State, effect: CaravanMoveEffect, action: Action) -> None:
        if action.id == "stop":
            state.pending.pop(0)
            return
        seat = int(effect["seat"])
        i = int(action.details["caravan"])
        caravans = list(state.caravans[seat])
        caravans[i] = {**caravans[i], "at": str(action.details["to"])}
        state.caravans[seat] = caravans
        left = list(effect["left"])
        left[i] -= 1
        effect["left"] = left
        state._log({"event": "caravan_step", "seat": seat, "caravan": i + 1, "to": action.details["to"]})
        if all(k <= 0 for k in left):
            state.pending.pop(0)


class CaravanGood(ChoiceEffect["Mp2State", CaravanGoodEffect]):
    """A completed route's goods, one at a time: doubled, upgraded (pepper, silk) or sold for points."""

    kind = "caravan_good"

    def actions(self, state: Mp2State, effect: CaravanGoodEffect) -> list[Action]:
        good = str(effect["goods"][0])
        actions = [Action(f"double:{good}", "caravan", {"good": good, "use": "double"})]
        if good in UPGRADE:
            actions.append(Action(f"upgrade:{good}", "caravan", {"good": good, "use": "upgrade"}))
        sell = {"good": good, "use": "sell", "vp": CARAVAN_SELL_VP[good]}
        actions.append(Action(f"sell:{good}", "caravan", sell))
        return actions

    def resolve(self, state: Mp2State, effect: CaravanGoodEffect, action: Action) -> None:
        seat = int(effect["seat"])
        good = str(action.details["good"])
        use = str(action.details["use"])
        if use == "double":
            state._gain(seat, {good: 2})
        elif use == "upgrade":
            state._gain(seat, {UPGRADE[good]: 1})
        else:
            state.res[seat]["vp"] += CARAVAN_SELL_VP[good]
        state._log({"event": "caravan_good", "seat": seat, "good": good, "use": use})
        rest = list(effect["goods"])[1:]
        if rest:
            effect["goods"] = rest
        else:
            state.pending.pop(0)


class ReturnTile(ChoiceEffect["Mp2State", ReturnTileEffect]):
    """Tartarino with two routes: which route tile goes back."""

    kind = "return_tile"

    def actions(self, state: Mp2State, effect: ReturnTileEffect) -> list[Action]:
        return [Action(f"return:{t}", "caravan", {"tile": t}) for t in effect["tiles"]]

    def resolve(self, state: Mp2State, effect: ReturnTileEffect, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        home = CaravanHomeEffect(
            t=CaravanHome.kind, seat=seat, caravan=effect["caravan"], tile=action.details["tile"]
        )
        state._push([home])


class CaravanHome(AutoEffect["Mp2State", CaravanHomeEffect]):
    """A completed caravan leaves; its route tile (or the one Tartarino chose) is turned down."""

    kind = "caravan_home"

    def run(self, state: Mp2State, effect: CaravanHomeEffect) -> None:
        seat, i = int(effect["seat"]), int(effect["caravan"])
        caravans = list(state.caravans[seat])
        own = caravans[i]["tile"]
        returned = effect.get("tile") or own
        if returned != own:  # Tartarino returned his other tile: the remaining caravan keeps this one
            caravans = [{**c, "tile": own} if c["tile"] == returned else c for c in caravans]
        del caravans[i]
        state.caravans[seat] = caravans
        state.tiles = {**state.tiles, returned: "down"}
        state._log({"event": "caravan_home", "seat": seat, "tile": returned})


# The kinds by concern (those both family games share first).
COMP = Compensation("comp", logged=False)
TURN = (DieBonus(), DicePick())
SETUP = (KeepGoal(), DonataPick(), FirstRound(), Income(), COMP, Isabella(), MailinDouble())
REWARDS = (Marker(), OtherMarker(), Offer(), SealPick())
MOVES = (Move(), ExtraPost(), Mongke())
CONTRACTS = (Pick(), CityContract(), RewardContract(), PILE_CONTRACT, PILE_FULL)
CARDS = (Repeat(), Exchange(), CARD_BONUS)
CARAVANS = (Load(), CaravanMove(), CaravanGood(), ReturnTile(), CaravanHome())
EFFECTS = registry(*FAMILY_EFFECTS, *TURN, *SETUP, *REWARDS, *MOVES, *CONTRACTS, *CARDS, *CARAVANS)
CHOICE_EFFECTS = choice_kinds(EFFECTS)
