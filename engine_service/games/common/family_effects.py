"""The effect kinds the Marco Polo family's games share (Voyages, Marco Polo II): one handler per kind, with
its payload, actions and resolution, as in each game's own `effects.py`.

Pure: no Django, no I/O, no RNG. The concrete kinds here (`FAMILY_EFFECTS`: the character draft, a good,
two different goods, a reward, posts, a post relocated, the game's start, discarding for new contracts and
placing them) behave the same in both games; the
base classes (`Compensation`, `DrawnContract`, `FullHand`, `CityChoice`) are the shape of a kind both games
have with a game's own kind name, event names or cities. They reach the game only through `FamilyState`'s
fields and hooks (`_reward`, `_start_game`, `_draw_contract`, `_discard_contract`, `node_name`, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import TYPE_CHECKING, Any, NotRequired

from engine_service.games.base import Action
from engine_service.games.common.effects import AutoEffect, ChoiceEffect, EffectBase

if TYPE_CHECKING:
    from engine_service.games.common.family import FamilyState

GOODS = ("pepper", "silk", "gold")
GOOD_PAIRS = (("pepper", "silk"), ("pepper", "gold"), ("silk", "gold"))


# --- payloads (the stored keys beyond "t" and "seat") ------------------------------------------------------
class CountEffect(EffectBase):
    """A kind whose payload is one number (compensation, Voyages' space bonus and city pick, ...)."""

    n: int  # compensation: coins + camels to take; city choices: how many cities (1 or 2); ...


class RewardEffect(EffectBase):
    r: dict[str, int]  # the reward bundle (resources and choice counts)


class FullHandEffect(EffectBase):
    new: Any  # the contract drawn while both contract slots are full


class DiscardOldEffect(EffectBase):
    need: int  # contracts still to discard
    old: NotRequired[list[Any]]  # Marco Polo II: only the contracts held before the new ones may go


class PlaceNewEffect(EffectBase):
    cards: list[Any]  # contracts to add to the seat's active ones
    coins: NotRequired[int]  # Marco Polo II's Contracts action: its 3 coins


class PostsEffect(EffectBase):
    nodes: list[Any]  # cities still to get a post, in order
    bonuses: list[EffectBase]  # the effects collected so far, pushed after the last post
    quiet: NotRequired[bool]  # Marco Polo II's Q7 alternative: these posts bring no bonus


class RelocateEffect(EffectBase):
    node: Any  # the city that wants a post while none is left


def simple(kind: str, seat: int) -> EffectBase:
    """An effect of a kind with no payload beyond its seat (bonus, draft, good, goods2, ...)."""
    return {"t": kind, "seat": seat}


def reward_effect(seat: int, bundle: Mapping[str, Any]) -> RewardEffect:
    return {"t": Reward.kind, "seat": seat, "r": dict(bundle)}


def posts_effect(
    seat: int, nodes: list[Any], bonuses: list[EffectBase] | None = None, quiet: bool | None = None
) -> PostsEffect:
    """Posts to place in `nodes` (with the bonuses collected so far; `quiet` only where a game has it)."""
    effect: PostsEffect = {
        "t": Posts.kind,
        "seat": seat,
        "nodes": nodes,
        "bonuses": [] if bonuses is None else bonuses,
    }
    if quiet is not None:
        effect["quiet"] = quiet
    return effect


def new_contracts(
    seat: int, cards: list[Any], need: int, *, old: list[Any] | None = None, coins: int | None = None
) -> list[EffectBase]:
    """`need` discards to make room for `cards` (only `old` ones, where named), then the new ones placed
    (with `coins`, where the action brings some)."""
    effects: list[EffectBase] = []
    if need > 0:
        discard = DiscardOldEffect(t=DiscardOld.kind, seat=seat, need=need)
        if old is not None:
            discard["old"] = old
        effects.append(discard)
    place = PlaceNewEffect(t=PlaceNew.kind, seat=seat, cards=cards)
    if coins is not None:
        place["coins"] = coins
    effects.append(place)
    return effects


def goods_choices(seat: int, goods: int, pairs: int) -> list[EffectBase]:
    """A reward's choices of goods: `goods` single goods, then `pairs` of two different goods."""
    return [simple(Good.kind, seat)] * goods + [simple(Goods2.kind, seat)] * pairs


# --- the kinds both games have alike -----------------------------------------------------------------------
class StartGame(AutoEffect["FamilyState", EffectBase]):
    kind = "start_game"

    def run(self, state: FamilyState, effect: EffectBase) -> None:
        state._start_game()


class Draft(ChoiceEffect["FamilyState", EffectBase]):
    """The character draft: one of the characters still in the pool."""

    kind = "draft"

    def actions(self, state: FamilyState, effect: EffectBase) -> list[Action]:
        return [Action(f"pick:{key}", "character", {"character": key}) for key in state.draft_pool]

    def resolve(self, state: FamilyState, effect: EffectBase, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        key = str(action.details["character"])
        state.chars[seat] = key
        state.draft_pool = [k for k in state.draft_pool if k != key]
        state._log({"event": "draft", "seat": seat, "character": key})


class Reward(AutoEffect["FamilyState", RewardEffect]):
    kind = "reward"

    def run(self, state: FamilyState, effect: RewardEffect) -> None:
        state._reward(int(effect["seat"]), effect["r"])


class Good(ChoiceEffect["FamilyState", EffectBase]):
    """One good of the seat's choice."""

    kind = "good"

    def actions(self, state: FamilyState, effect: EffectBase) -> list[Action]:
        return [Action(f"good:{g}", "good", {"good": g}) for g in GOODS]

    def resolve(self, state: FamilyState, effect: EffectBase, action: Action) -> None:
        state.pending.pop(0)
        state._gain(int(effect["seat"]), {str(action.details["good"]): 1})


class Goods2(ChoiceEffect["FamilyState", EffectBase]):
    """Two different goods of the seat's choice."""

    kind = "goods2"

    def actions(self, state: FamilyState, effect: EffectBase) -> list[Action]:
        return [Action(f"goods:{a}+{b}", "goods", {"goods": [a, b]}) for a, b in GOOD_PAIRS]

    def resolve(self, state: FamilyState, effect: EffectBase, action: Action) -> None:
        state.pending.pop(0)
        for g in action.details["goods"]:
            state._gain(int(effect["seat"]), {str(g): 1})


class Posts(AutoEffect["FamilyState", PostsEffect]):
    kind = "posts"

    def run(self, state: FamilyState, effect: PostsEffect) -> None:
        state._place_posts(effect)


class Relocate(ChoiceEffect["FamilyState", RelocateEffect]):
    """No post left: move one of the seat's posts to `node`."""

    kind = "relocate"

    def actions(self, state: FamilyState, effect: RelocateEffect) -> list[Action]:
        return [
            Action(f"relocate:{state.node_name(node)}", "relocate", {"from": node, "to": effect["node"]})
            for node in sorted(state.posts[int(effect["seat"])])
            if node != effect["node"]
        ]

    def resolve(self, state: FamilyState, effect: RelocateEffect, action: Action) -> None:
        state.pending.pop(0)
        state._relocate(int(effect["seat"]), action.details["from"], action.details["to"])


class DiscardOld(ChoiceEffect["FamilyState", DiscardOldEffect]):
    """Room for new contracts: discard `need` contracts (of the `old` ones, where named), one at a time."""

    kind = "discard_old"

    def actions(self, state: FamilyState, effect: DiscardOldEffect) -> list[Action]:
        active = state.active[int(effect["seat"])]
        old = effect.get("old")
        candidates = active if old is None else [c for c in old if c in active]
        return [Action(f"discard:{c}", "contract", {"discard": c}) for c in candidates]

    def resolve(self, state: FamilyState, effect: DiscardOldEffect, action: Action) -> None:
        seat = int(effect["seat"])
        old = action.details["discard"]
        state.active[seat] = [c for c in state.active[seat] if c != old]
        state._discard_contract(old)
        state._log({"event": "discard_contract", "seat": seat, "contract": old})
        effect["need"] = int(effect["need"]) - 1
        if effect["need"] <= 0:
            state.pending.pop(0)


class PlaceNew(AutoEffect["FamilyState", PlaceNewEffect]):
    """New contracts join the seat's active ones (with the coins the action brings)."""

    kind = "place_new"

    def run(self, state: FamilyState, effect: PlaceNewEffect) -> None:
        seat = int(effect["seat"])
        state.active[seat] = [*state.active[seat], *effect["cards"]]
        coins = int(effect.get("coins", 0))
        if coins:
            state._gain(seat, {"coins": coins})


FAMILY_EFFECTS = (
    StartGame(),
    Draft(),
    Reward(),
    Good(),
    Goods2(),
    Posts(),
    Relocate(),
    DiscardOld(),
    PlaceNew(),
)


# --- the kinds both games have in the same shape (a game configures an instance) ---------------------------
class Compensation(ChoiceEffect["FamilyState", CountEffect]):
    """Compensation for a low roll: `n` as any mix of coins and camels (`logged`: with an event)."""

    def __init__(self, kind: str, *, logged: bool) -> None:
        self.kind = kind
        self.logged = logged

    def actions(self, state: FamilyState, effect: CountEffect) -> list[Action]:
        n = int(effect["n"])
        return [
            Action(f"comp:{c}coins+{n - c}camels", "compensation", {"coins": c, "camels": n - c})
            for c in range(n, -1, -1)
        ]

    def resolve(self, state: FamilyState, effect: CountEffect, action: Action) -> None:
        seat = int(effect["seat"])
        coins, camels = int(action.details["coins"]), int(action.details["camels"])
        state.pending.pop(0)
        state._gain(seat, {"coins": coins, "camels": camels})
        if self.logged:
            state._log({"event": "compensation", "seat": seat, "coins": coins, "camels": camels})


class DrawnContract(AutoEffect["FamilyState", EffectBase]):
    """A contract drawn from a pile: kept if a slot is free, else a choice (`full_kind`); the game names
    the kind, the choice and its events."""

    def __init__(self, kind: str, *, full_kind: str, empty_event: str, kept_event: str) -> None:
        self.kind = kind
        self.full_kind = full_kind
        self.empty_event = empty_event
        self.kept_event = kept_event

    def run(self, state: FamilyState, effect: EffectBase) -> None:
        seat = int(effect["seat"])
        card = state._draw_contract()
        if card is None:
            state._log({"event": self.empty_event, "seat": seat})
        elif len(state.active[seat]) < 2:
            state.active[seat] = [*state.active[seat], card]
            state._log({"event": self.kept_event, "seat": seat, "contract": card})
        else:
            state._push([FullHandEffect(t=self.full_kind, seat=seat, new=card)])


class FullHand(ChoiceEffect["FamilyState", FullHandEffect]):
    """A drawn contract with both slots full: decline it or discard an active one (the discarded one goes
    where the game's `_discard_contract` puts it)."""

    def __init__(self, kind: str, *, kept_event: str) -> None:
        self.kind = kind
        self.kept_event = kept_event

    def actions(self, state: FamilyState, effect: FullHandEffect) -> list[Action]:
        new = effect["new"]
        actions = [Action("decline", "contract", {"contract": new, "keep": False})]
        for old in state.active[int(effect["seat"])]:
            actions.append(Action(f"discard:{old}", "contract", {"contract": new, "discard": old}))
        return actions

    def resolve(self, state: FamilyState, effect: FullHandEffect, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        new = effect["new"]
        if action.id == "decline":
            state._discard_contract(new)
        else:
            old = action.details["discard"]
            state.active[seat] = [*(c for c in state.active[seat] if c != old), new]
            state._discard_contract(old)
        state._log({"event": self.kept_event, "seat": seat, "contract": new, "choice": action.id})


class CityChoice(ChoiceEffect["FamilyState", CountEffect]):
    """A city card that takes the bonuses of `n` (1 or 2) of the seat's bonus cities again."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def actions(self, state: FamilyState, effect: CountEffect) -> list[Action]:
        mine = state._bonus_cities(int(effect["seat"]))
        name = state.node_name
        actions = [Action(f"city:{name(c)}", "card", {"cities": [c]}) for c in mine]
        if int(effect["n"]) >= 2:
            actions += [
                Action(f"city:{name(a)}+{name(b)}", "card", {"cities": [a, b]})
                for a, b in combinations(mine, 2)
            ]
        return actions

    def resolve(self, state: FamilyState, effect: CountEffect, action: Action) -> None:
        seat = int(effect["seat"])
        state.pending.pop(0)
        state._push([state._copied_bonus(seat, city) for city in action.details["cities"]])
