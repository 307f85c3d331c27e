"""Marco Polo II's board constants and the base of its state: the fields' start values, the setup, the small
resource helpers, the rounds (income, the black dice, the round's refills) and the contract pile.

Pure: no Django, no gRPC, no clock, no global `random`; chance comes only from the state's own `ChanceRng`.
`Mp2Setup` is the bottom of `Mp2State`'s chain (`Mp2Setup` <- `Mp2Movement` <- `Mp2Placement` <- `Mp2Turn`
<- `Mp2State`); it must not call up the chain (no turn menu, placement or movement here), and it declares
no saved field (those are declared once, on `Mp2State` in `rules`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine_service.games.base import JsonDict
from engine_service.games.common import cardrow, dice
from engine_service.games.common.effects import PLAY, EffectBase
from engine_service.games.common.family import FamilyRules, FamilyState
from engine_service.games.common.family_effects import (
    CountEffect,
    Draft,
    StartGame,
    reward_effect,
    simple,
)
from engine_service.games.common.resources import can_afford_with, gain, pay_with
from engine_service.games.mp2.effects import (
    COMP,
    EFFECTS,
    DonataPick,
    FirstRound,
    Income,
    Isabella,
    KeepGoal,
    MailinDouble,
    marker_effect,
)
from engine_service.games.mp2.scoring import final_scores
from engine_service.games.mp2.tables import (
    BASE_CHARACTERS,
    BEIJING,
    CARAVAN_CHARACTERS,
    CARD_CITIES,
    CITY_CARDS,
    COLOURS,
    CONTRACT_CITIES,
    CONTRACTS,
    GOALS,
    ISABELLA_FACE,
    MARKER_CITIES,
    MARKERS,
    MILESTONES,
    OFFER_TILES,
    OUTPOST_CITIES,
    OUTPOSTS,
    REGULAR_CONTRACTS,
    RESOURCES,
    ROUTE_TILES,
    SEAL_NAMES,
    SEALS,
    SPECIAL_CITIES,
    START_CONTRACTS,
    WILD,
    WILD_COVERS,
    tok_value,
)
from engine_service.games.rng import ChanceRng

ROUNDS = 5
STEP_CAP = 12000
START_COINS = 8
START_CAMELS = 3
COLOUR_DICE = 5
POSTS = 11
KHAN_SLOTS = 4
GOAL_OFFER = 3
BLACK_DICE = {2: 4, 3: 5, 4: 6}
BLACK_DIE_CAMELS = 3
NUMERALS = ("I", "II", "III")

BLUE: dict[str, dice.SpaceDef] = {
    "book1": dice.SpaceDef("book1", 1),
    "book2": dice.SpaceDef("book2", 1),
    "book3a": dice.SpaceDef("book3a", 1),
    "book3b": dice.SpaceDef("book3b", 1),
    "seals": dice.SpaceDef("seals", 2),
    "travel1": dice.SpaceDef("travel1", 1),
    "travel2": dice.SpaceDef("travel2", 2),
    "travel3": dice.SpaceDef("travel3", 3),
    "contracts": dice.SpaceDef("contracts", 1),
}
BOOK_OF = {"book1": "I", "book2": "II", "book3a": "III", "book3b": "III"}
TRAVEL_RANK = {"travel1": 1, "travel2": 2, "travel3": 3}
TRAVEL_CAP = {"travel1": 1, "travel2": 3, "travel3": 6}
TRAVEL1_COINS = 2
SPECIAL_SPACES = tuple(f"{city}-{k}" for city in ("BAL", "HOR", "BAG") for k in (1, 2))
CARD_SLOTS = (*CARD_CITIES, "A1", "A2")
BROWN_ONE = dice.SpaceDef("brown", 1, shared=False)
MAIN_ORDER = (
    "book1",
    "book2",
    "book3a",
    "book3b",
    "khan",
    "seals",
    "travel1",
    "travel2",
    "travel3",
    "contracts",
    *SPECIAL_SPACES,
    *(f"card-{slot}" for slot in CARD_SLOTS),
)


class Mp2Setup(FamilyState):
    """Marco Polo II's fields, setup, helpers, rounds and contract pile (see the module docstring)."""

    FAMILY = FamilyRules(EFFECTS, STEP_CAP, RESOURCES, POSTS, BLUE, MILESTONES, quiet_posts=True)

    def __init__(self, *, num_players: int, options: Mapping[str, Any], rng: ChanceRng) -> None:
        super().__init__(num_players=num_players, options=options, rng=rng)
        self.extra_shields: list[int] = [0] * num_players
        # Donata's figures, by colour index
        self.spare_figs: list[list[int]] = [[] for _ in range(num_players)]
        self.done: list[list[str]] = [[] for _ in range(num_players)]
        self.posts: list[list[str]] = [[] for _ in range(num_players)]
        self.goals: list[str] = [""] * num_players
        self.figures: list[list[str]] = [[BEIJING] for _ in range(num_players)]
        self.goal_offers: list[list[str]] = [[] for _ in range(num_players)]
        self.active: list[list[str]] = [[] for _ in range(num_players)]
        self.seals: list[dict[str, int]] = [{} for _ in range(num_players)]  # seal -> 1 basic, 2 improved
        self.brown: dict[str, list[Any]] = {}
        self.cards: dict[str, str] = {}
        self.card_deck: list[str] = []
        self.card_box: list[str] = []
        self.outposts: dict[str, str] = {}
        self.kept_tiles: list[list[str]] = [[] for _ in range(num_players)]
        self.markers: dict[str, str] = {}
        self.marker_box = ""
        self.contract_spaces: dict[str, list[str | None]] = {}
        self.pile: list[str] = []  # index 0 is the top
        self.pile_hidden = 0  # the unseen top part of the pile (discards go to the public bottom)
        self.offer_piles: dict[str, list[str]] = {}
        self.offer_now: dict[str, str] = {}
        self.offer_box: dict[str, str] = {}
        self.first_player = 0
        self.next_first: int | None = None
        self.travel_rank = 0
        self.posts_this_turn: list[str] = []
        self.vidal_sold: list[bool] = [False] * num_players
        self.tiles: dict[str, str] = {}  # route tile -> up | down | held
        self.caravans: list[list[dict[str, Any]]] = [[] for _ in range(num_players)]

    # --- setup ------------------------------------------------------------------------------------------
    def setup(self) -> None:
        n = self.num_players
        rng = self.rng
        markers = sorted(MARKERS)
        rng.shuffle(markers)
        self.markers = {city: markers[i] for i, city in enumerate(MARKER_CITIES)}
        self.marker_box = markers[len(MARKER_CITIES)]
        outposts = sorted(OUTPOSTS)
        rng.shuffle(outposts)
        self.outposts = {city: outposts[i] for i, city in enumerate(OUTPOST_CITIES)}
        cards = sorted(CITY_CARDS)
        rng.shuffle(cards)
        self.cards = {slot: cards[i] for i, slot in enumerate(CARD_SLOTS)}
        self.card_deck = cards[len(CARD_SLOTS) :]
        regular = list(REGULAR_CONTRACTS)
        rng.shuffle(regular)
        self.contract_spaces = {city: [regular.pop(0), regular.pop(0)] for city in CONTRACT_CITIES}
        self.pile = regular
        self.pile_hidden = len(regular)
        for numeral in NUMERALS:
            tiles = sorted(t for t, d in OFFER_TILES.items() if d["book"] == numeral)
            rng.shuffle(tiles)
            self.offer_box[numeral] = tiles.pop()
            self.offer_now[numeral] = tiles.pop(0)
            self.offer_piles[numeral] = tiles
        self.first_player = rng.randbelow(n)
        starting = list(START_CONTRACTS)
        rng.shuffle(starting)
        goals = sorted(GOALS)
        rng.shuffle(goals)
        for seat in range(n):
            self.active[seat] = [starting[seat]]
            self.res[seat]["coins"] = START_COINS
            self.res[seat]["camels"] = START_CAMELS
            self.goal_offers[seat] = sorted(goals[seat * GOAL_OFFER : (seat + 1) * GOAL_OFFER])
        # 2 players: neutral value-1 dice on Khan spaces 1-2 and one space of each special city, a value-5
        # die on the lower Book III space; 3 players: a value-1 die on Khan space 1 (they stay all game).
        if n == 2:
            self.khan = [[-1, "n1"], [-1, "n1"]]
            self.spaces["book3b"] = [[-1, ["n5"]]]
            for city in ("BAL", "HOR", "BAG"):
                self.brown[f"{city}-1"] = [-1, "n1"]
        elif n == 3:
            self.khan = [[-1, "n1"]]
        if self.options["caravans"]:
            self.tiles = dict.fromkeys(sorted(ROUTE_TILES), "up")
            pool = list(BASE_CHARACTERS + CARAVAN_CHARACTERS)
        else:
            pool = list(BASE_CHARACTERS)
        pool.sort()
        rng.shuffle(pool)
        self.draft_pool = sorted(pool[: n + 1])
        # The last player picks first, then counter-clockwise; then everyone keeps one goal card.
        last = (self.first_player - 1) % n
        effects: list[EffectBase] = [simple(Draft.kind, (last - i) % n) for i in range(n)]
        effects += [simple(KeepGoal.kind, seat) for seat in self._order_from(self.first_player)]
        effects.append(simple(StartGame.kind, self.first_player))
        self._push(effects)
        self._run()

    def _start_game(self) -> None:
        donata = None
        for seat, char in enumerate(self.chars):
            if char == "mailin":
                self._gain(seat, {"coins": 3})
                self.figures[seat] = [BEIJING, BEIJING]
            elif char == "donata":
                donata = seat
        self._log({"event": "setup", "characters": list(self.chars)})
        if donata is not None:
            self._push([simple(DonataPick.kind, donata), simple(FirstRound.kind, self.first_player)])
        else:
            self._start_round()

    def donata_colours(self, seat: int) -> list[int]:
        """Colours whose spare figure is free: every colour but a Mailin player's (her 2nd figure)."""
        return [c for c in range(len(COLOURS)) if not (c < self.num_players and self.chars[c] == "mailin")]

    # --- small helpers ----------------------------------------------------------------------------------
    def _gain(self, seat: int, bundle: Mapping[str, int], times: int = 1) -> None:
        gain(self.res[seat], bundle, times)
        jade = bundle.get("jade", 0) * times
        if jade > 0 and self.chars[seat] == "abha":
            self.res[seat]["vp"] += jade

    def can_pay(self, seat: int, cost: Mapping[str, int], times: int = 1) -> bool:
        """Jade pays any coin or camel of a cost; it never replaces pepper, silk or gold."""
        return can_afford_with(self.res[seat], cost, WILD, WILD_COVERS, times)

    def _pay(self, seat: int, cost: Mapping[str, int], times: int = 1) -> None:
        pay_with(self.res[seat], cost, WILD, WILD_COVERS, times)

    def improved(self, seat: int, seal: str) -> bool:
        return self.seals[seat].get(seal, 0) == 2

    def marker_cities_of(self, seat: int) -> list[str]:
        return [c for c in MARKER_CITIES if c in self.posts[seat] and c in self.markers]

    def _take_black_die(self, seat: int) -> None:
        if self.black_left <= 0:
            self._log({"event": "black_die_none_left", "seat": seat})
            return
        self.black_left -= 1
        tok = dice.roll(self.rng, "b")
        self.dice[seat] = sorted([*self.dice[seat], tok])
        self._log({"event": "black_die", "seat": seat, "die": tok})
        self._isabella_face(seat, tok_value(tok))

    def _isabella_face(self, seat: int, value: int) -> None:
        if self.chars[seat] == "isabella":
            self._gain(seat, ISABELLA_FACE[value])

    # --- rounds and turns -------------------------------------------------------------------------------
    def _start_round(self) -> None:
        self.round += 1
        n = self.num_players
        if self.round > 1 and self.next_first is not None:
            self.first_player = self.next_first
        self.next_first = None
        self.travel_rank = 0
        self.spaces = {name: [p for p in placed if p[0] == -1] for name, placed in self.spaces.items()}
        self.khan = [p for p in self.khan if p[0] == -1]
        self.brown = {k: v for k, v in self.brown.items() if v[0] == -1}
        self.black_left = BLACK_DICE[n]
        self.vidal_sold = [False] * n
        if self.round > 1:
            for numeral in NUMERALS:
                nxt = cardrow.draw_top(self.offer_piles[numeral])  # type: ignore[arg-type]
                if nxt is not None:
                    self.offer_now[numeral] = str(nxt)
            for slot in ("A1", "A2"):
                old = self.cards.pop(slot, None)
                if old is not None:
                    self.card_box.append(old)
                drawn = cardrow.draw_top(self.card_deck)  # type: ignore[arg-type]
                if drawn is not None:
                    self.cards[slot] = str(drawn)
        self.tiles = {t: "up" if state == "down" else state for t, state in self.tiles.items()}
        for seat in range(n):
            self.dice[seat] = sorted(dice.roll(self.rng, dice.COLOUR) for _ in range(COLOUR_DICE))
        self._log({"event": "round", "first_player": self.first_player, "dice": [list(d) for d in self.dice]})
        effects: list[EffectBase] = []
        for seat in self._order_from(self.first_player):
            effects.append(simple(Income.kind, seat))
            total = sum(tok_value(t) for t in self.dice[seat])
            if total < 15:
                effects.append(CountEffect(t=COMP.kind, seat=seat, n=15 - total))
            if self.chars[seat] == "isabella":
                effects.append(simple(Isabella.kind, seat))
        self.phase = PLAY
        self.turn_seat = self.first_player
        self._begin_turn()
        self._push(effects)

    def _income(self, seat: int) -> None:
        """Round-start "!" bonuses: bonus markers of post cities, special cities, character, improved seals."""
        effects: list[EffectBase] = []
        if self.chars[seat] == "abha":
            self._gain(seat, {"coins": 2})
        for city in self.marker_cities_of(seat):
            effects.append(marker_effect(seat, self.markers[city]))
        for city, data in SPECIAL_CITIES.items():
            if city in self.posts[seat]:
                effects.append(reward_effect(seat, data["bonus"]))
        for seal in SEAL_NAMES:
            if self.improved(seat, seal):
                effects.append(reward_effect(seat, SEALS[seal]["bonus"]))
        if self.chars[seat] == "mailin" and self._double_choices(seat):
            effects.append(simple(MailinDouble.kind, seat))
        self._push(effects)

    def _double_choices(self, seat: int) -> list[str]:
        cities = self.marker_cities_of(seat)
        if self.options["bonus_copy_scope"] == "with_special":
            cities += [c for c in SPECIAL_CITIES if c in self.posts[seat]]
        return cities

    def _turn_ended(self) -> None:
        self._refill_contracts()

    def _refill_contracts(self) -> None:
        for city in CONTRACT_CITIES:
            slots = self.contract_spaces[city]
            if None in slots:
                new = [c if c is not None else self._draw_contract() for c in slots]
                self.contract_spaces[city] = new

    def _draw_contract(self) -> str | None:
        card = cardrow.draw_top(self.pile)  # type: ignore[arg-type]
        if card is not None and self.pile_hidden > 0:
            self.pile_hidden -= 1
        return None if card is None else str(card)

    def _discard_contract(self, cid: str) -> None:
        """Regular contracts go to the (public) bottom of the pile; starting contracts to the box."""
        if not CONTRACTS[cid]["start"]:
            cardrow.put_bottom(self.pile, [cid])  # type: ignore[arg-type, list-item]

    def _final_scores(self) -> list[JsonDict]:
        return final_scores(self)
