"""What the Marco Polo family's states share (Voyages, Marco Polo II): the family base state.

Pure: no Django, no I/O, no RNG of its own. `FamilyState` is an `EffectStackState` holding the fields
both games have in the same form (characters, resources, dice, post counts, the dice spaces, the turn and
round counters, the event log, the final breakdown). It keeps the turn and round scaffolding, the post
placement loop, the views' shared part and the result; the effect kinds both games share are in
`family_effects`. A game declares its `FamilyRules` and its other fields, data and rules, and fills the
hooks (`_start_round`, `_final_scores`, `_arrive_in`, `_public_facts`, `_own_goals`, `_revealed`, those of
the shared effect kinds; optionally `_turn_ended`, `_round_ended`, `_next_round`, `_post_removed`,
`node_name`, `_gain`). Nothing here knows a game's tables.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from engine_service.games.base import GameResult, JsonDict
from engine_service.games.common.effects import (
    OVER,
    SETUP,
    Effect,
    EffectBase,
    EffectStackState,
    Handler,
)
from engine_service.games.common.family_effects import (
    Posts,
    PostsEffect,
    Relocate,
    RelocateEffect,
    posts_effect,
)
from engine_service.games.common.resources import gain
from engine_service.games.fields import Copy, state_field
from engine_service.games.rng import ChanceRng

EVENTS_KEPT = 24


@dataclass(frozen=True, eq=False)
class FamilyRules:
    """The settings of a family game that the base uses (declared once per game, as its `FAMILY`)."""

    effects: Mapping[str, Handler]  # the effect kinds' handlers (the state's `EFFECTS`)
    step_cap: int  # decisions before the game ends with final scoring (the state's `STEP_CAP`)
    resources: tuple[str, ...]  # the names in a seat's resource bundle
    posts: int  # trading posts a seat starts with
    board_spaces: Iterable[str]  # the dice spaces whose placements are kept in `spaces`
    milestones: Mapping[int, int]  # posts placed -> points
    quiet_posts: bool = False  # posts may be quiet (Marco Polo II's Q7): a relocation keeps the flag
    rounds: int = 5


class FamilyState(EffectStackState):
    """The part of a Marco Polo family state both games share. A game names its `FAMILY` rules and declares
    its other fields (and the element types of `posts`, `figures`, `active`, `done`, `goals`,
    `goal_offers`, `posts_this_turn`, which differ: node ids and contract ids are ints in Voyages)."""

    FAMILY: ClassVar[FamilyRules]
    # The fields every family state has, declared once (`fields.state_field`: how a clone copies each, which
    # are private; saving, loading, `clone` and `PRIVATE_FIELDS` derive from them). `__init__` sets their
    # start values (a game those of `figures`, `posts`, `goals`, `active`, `goal_offers`, `done` and
    # `posts_this_turn`); a game declares its own fields, and again a family field it copies otherwise.
    chars: list[str] = state_field(Copy.SHALLOW)
    res: list[dict[str, int]] = state_field(Copy.ITEMS)
    dice: list[list[str]] = state_field(Copy.ITEMS)
    posts: list[list[Any]] = state_field(Copy.ITEMS)
    posts_left: list[int] = state_field(Copy.SHALLOW)
    posts_placed: list[int] = state_field(Copy.SHALLOW)
    figures: list[list[Any]] = state_field(Copy.ITEMS)
    active: list[list[Any]] = state_field(Copy.ITEMS)
    done: list[list[Any]] = state_field(Copy.ITEMS)
    goals: list[Any] = state_field(Copy.SHALLOW, private=True)
    goal_offers: list[list[Any]] = state_field(Copy.ITEMS, private=True)
    spaces: dict[str, list[list[Any]]] = state_field(Copy.VALUES)  # placements are never changed in place
    khan: list[list[Any]] = state_field(Copy.SHALLOW)
    black_left: int = state_field()
    round: int = state_field()
    turn_seat: int = state_field()
    phase: str = state_field()
    main_done: bool = state_field()
    black_bought: bool = state_field()
    posts_this_turn: list[Any] = state_field(Copy.SHALLOW)
    pending: list[Effect] = state_field(Copy.ITEMS)  # effects' nested lists are replaced, never changed
    draft_pool: list[str] = state_field(Copy.SHALLOW)
    turns: int = state_field()
    events: list[JsonDict] = state_field(Copy.SHALLOW)  # entries never change
    end_reason: str | None = state_field()
    final: list[JsonDict] | None = state_field()  # set once, at the end

    def __init_subclass__(cls, **kwargs: Any) -> None:
        cls.EFFECTS = cls.FAMILY.effects
        cls.STEP_CAP = cls.FAMILY.step_cap
        super().__init_subclass__(**kwargs)

    def __init__(self, *, num_players: int, options: Mapping[str, Any], rng: ChanceRng) -> None:
        super().__init__(num_players=num_players, options=options, rng=rng)
        n = num_players
        self.chars: list[str] = [""] * n
        self.res: list[dict[str, int]] = [dict.fromkeys(self.FAMILY.resources, 0) for _ in range(n)]
        self.dice: list[list[str]] = [[] for _ in range(n)]
        self.posts_left: list[int] = [self.FAMILY.posts] * n
        self.posts_placed: list[int] = [0] * n
        self.spaces: dict[str, list[list[Any]]] = {name: [] for name in self.FAMILY.board_spaces}
        self.khan: list[list[Any]] = []
        self.black_left = 0
        self.round = 0
        self.turn_seat = 0
        self.phase: str = SETUP
        self.main_done = False
        self.black_bought = False
        self.pending: list[Effect] = []
        self.draft_pool: list[str] = []
        self.turns = 0
        self.events: list[JsonDict] = []
        self.end_reason: str | None = None
        self.final: list[JsonDict] | None = None

    # --- small helpers ----------------------------------------------------------------------------------
    def _log(self, event: JsonDict) -> None:
        self.events.append({"round": self.round, **event})
        if len(self.events) > EVENTS_KEPT:
            del self.events[: len(self.events) - EVENTS_KEPT]

    def _order_from(self, first: int) -> list[int]:
        return [(first + i) % self.num_players for i in range(self.num_players)]

    def _gain(self, seat: int, bundle: Mapping[str, int], times: int = 1) -> None:
        gain(self.res[seat], bundle, times)

    # --- the hooks the shared effect kinds use ---------------------------------------------------------
    @abstractmethod
    def _start_game(self) -> None:
        """After the setup choices: the game's starting positions, then the first round."""

    @abstractmethod
    def _reward(self, seat: int, reward: Mapping[str, int]) -> None:
        """Gain a reward bundle; its choices become effects resolved next."""

    @abstractmethod
    def _draw_contract(self) -> Any | None:
        """The top contract of the pile rewards draw from (None when it is empty)."""

    @abstractmethod
    def _discard_contract(self, cid: Any) -> None:
        """Put a contract given up where the game keeps them."""

    @abstractmethod
    def _bonus_cities(self, seat: int) -> list[Any]:
        """The cities whose bonuses the seat may take again with a city card."""

    @abstractmethod
    def _copied_bonus(self, seat: int, city: Any) -> EffectBase:
        """The bonus of one of those cities, taken again."""

    # --- turns and rounds -------------------------------------------------------------------------------
    def _begin_turn(self) -> None:
        self.main_done = False
        self.black_bought = False
        self.posts_this_turn = []

    def _end_turn(self) -> None:
        """The next seat holding dice has the turn; when none does, the round ends."""
        self.turns += 1
        self._turn_ended()
        self.main_done = False
        self.black_bought = False
        self.posts_this_turn = []
        for offset in range(1, self.num_players + 1):
            seat = (self.turn_seat + offset) % self.num_players
            if self.dice[seat]:
                self.turn_seat = seat
                self._begin_turn()
                return
        self._end_round()

    def _turn_ended(self) -> None:
        """What a game settles when a turn ends, before the next one begins (default: nothing)."""

    def _end_round(self) -> None:
        self._round_ended()
        self._log({"event": "round_end", "round": self.round})
        if self.round >= self.FAMILY.rounds:
            self._finish("completed")
            return
        self._next_round()

    def _round_ended(self) -> None:
        """What a game clears when a round ends, before the round-end event (default: nothing)."""

    def _next_round(self) -> None:
        self._start_round()

    @abstractmethod
    def _start_round(self) -> None: ...

    def _finish(self, reason: str) -> None:
        breakdown = self._final_scores()
        for seat, parts in enumerate(breakdown):
            self.res[seat]["vp"] += int(parts["total"])
        self.final = breakdown
        self.phase = OVER
        self.pending = []
        self.end_reason = reason
        self._log({"event": "game_end", "reason": reason})

    @abstractmethod
    def _final_scores(self) -> list[JsonDict]:
        """Each seat's final scoring breakdown (with its "total"), added to its points by `_finish`."""

    # --- posts ------------------------------------------------------------------------------------------
    def _place_posts(self, effect: PostsEffect) -> None:
        """Place posts in `nodes` in order (with none left, a post is relocated first); bonuses are
        collected and taken after the last post (quiet posts bring none)."""
        seat = int(effect["seat"])
        nodes = list(effect["nodes"])
        bonuses = list(effect["bonuses"])
        quiet = bool(effect.get("quiet"))
        while nodes:
            node = nodes.pop(0)
            if node in self.posts[seat]:
                continue
            if self.posts_left[seat] <= 0:
                relocate = RelocateEffect(t=Relocate.kind, seat=seat, node=node)
                self._push(
                    [relocate, posts_effect(seat, nodes, bonuses, quiet if self.FAMILY.quiet_posts else None)]
                )
                return
            self.posts_left[seat] -= 1
            self.posts_placed[seat] += 1
            milestone = self.FAMILY.milestones.get(self.posts_placed[seat], 0)
            self.res[seat]["vp"] += milestone
            self._log({"event": "post", "seat": seat, "city": node, "milestone_vp": milestone})
            found = self._arrive_in(seat, node)
            if not quiet:
                bonuses += found
        self._push(bonuses)

    @abstractmethod
    def _arrive_in(self, seat: int, node: Any) -> list[EffectBase]:
        """Put the post on the map and return the bonus effects of that city."""

    def _relocate(self, seat: int, old: Any, new: Any) -> None:
        """Move the post in `old` to `new`; its bonuses join the posts being placed (unless quiet)."""
        self.posts[seat] = [n for n in self.posts[seat] if n != old]
        self._post_removed(seat, old)
        self._log({"event": "relocate", "seat": seat, "from": old, "to": new})
        bonuses = self._arrive_in(seat, new)
        top = self.pending[0] if self.pending else None
        if top is not None and top["t"] == Posts.kind and int(top["seat"]) == seat:
            if not top.get("quiet"):
                self.pending[0] = {**top, "bonuses": [*top["bonuses"], *bonuses]}
        else:
            self._push(bonuses)

    def _post_removed(self, seat: int, node: Any) -> None:
        """What a game undoes when a post leaves a city (default: nothing)."""

    def node_name(self, node: Any) -> str:
        """A node's id in action ids."""
        return str(node)

    # --- end and views ----------------------------------------------------------------------------------
    def is_over(self) -> bool:
        return self.phase == OVER

    def result(self) -> GameResult:
        if not self.is_over():
            raise ValueError("the game is not over")
        scores = [r["vp"] for r in self.res]
        camels = [r["camels"] for r in self.res]
        return GameResult.from_keys(scores, camels, self.end_reason or "completed")

    def _public(self) -> JsonDict:
        """The state without its private fields, with the game's public facts about them."""
        payload = self._payload()
        for name in self.PRIVATE_FIELDS:
            del payload[name]
        current = self.current_seats()
        payload.update(
            {
                "game_id": self.spec.game_id,
                "step": self.step,
                "num_players": self.num_players,
                "options": dict(self.options),
                "current_seat": current[0] if current else None,
                **self._public_facts(),
            }
        )
        return payload

    @abstractmethod
    def _public_facts(self) -> JsonDict:
        """What everyone may know of the private fields (pile sizes, counts, unseen sets)."""

    def observation(self, seat: int) -> JsonDict:
        view = self._public()
        view["seat"] = seat
        view.update(self._own_goals(seat))
        view["goal_offer"] = list(self.goal_offers[seat])
        return view

    @abstractmethod
    def _own_goals(self, seat: int) -> JsonDict:
        """The seat's own goal cards, as its observation names them."""

    def spectator_view(self, *, reveal: bool = False) -> JsonDict:
        view = self._public()
        view["seat"] = None
        if reveal:
            view.update(self._revealed())
        return view

    @abstractmethod
    def _revealed(self) -> JsonDict:
        """Every hidden card, for the spectator view once the game is over."""


__all__ = ["EVENTS_KEPT", "FamilyRules", "FamilyState"]
