"""The Voyages of Marco Polo's constants and the base of its state: the fields' start values, the setup, the
small helpers (Mercator, small cities, the contract piles, the black dice, the city bonuses) and the rounds.

Pure: no Django, no gRPC, no clock, no global `random`; chance comes only from the state's own `ChanceRng`.
`VoyagesSetup` is the bottom of `VoyagesState`'s chain (`VoyagesSetup` <- `VoyagesMovement` <-
`VoyagesPlacement` <- `VoyagesTurn` <- `VoyagesState`); it must not call up the chain (no turn menu,
placement or movement here), and it declares no saved field (those are declared once, on `VoyagesState`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine_service.games.base import JsonDict
from engine_service.games.common import cardrow
from engine_service.games.common.dice import (
    COLOUR,
    SpaceDef,
    roll,
    value_of,
)
from engine_service.games.common.effects import PLAY, EffectBase
from engine_service.games.common.family import FamilyRules, FamilyState
from engine_service.games.common.family_effects import (
    CountEffect,
    Draft,
    StartGame,
    reward_effect,
    simple,
)
from engine_service.games.rng import ChanceRng
from engine_service.games.voyages.effects import (
    COMP,
    DRAW_CONTRACT,
    EFFECTS,
    CityBonus,
    CityBonusEffect,
    KeepGoals,
)
from engine_service.games.voyages.scoring import final_scores
from engine_service.games.voyages.tables import (
    BEIJING,
    CARD_SLOTS,
    CHARACTER_KEYS,
    CITY_BONUSES,
    CITY_CARDS,
    FIRST_GAME_CHARACTERS,
    GOALS,
    LARGE_CITIES,
    OUTPOST_BONUSES,
    REGULAR_CONTRACTS,
    SMALL_CITIES,
    START_CONTRACTS,
    VENEZIA,
)

# Rules revisions (the package docstring says what each changed); new games are played under the last.
SPECIAL_EVENT_COPIED = 2  # from this revision on, `special_to_board` logs a copy of the contracts laid out
RULES_REVISION = 2
ROUNDS = 5
STEP_CAP = 6000
START_CAMELS = 2
START_COINS = 7
COLOUR_DICE = 5
POSTS = 9
WILHELM_POSTS = 11
PILE_SIZE = 6
KHAN_SLOTS = 4
RESOURCES = ("coins", "camels", "pepper", "silk", "gold", "vp")
MILESTONES = {8: 5, 9: 10, 11: 10}  # posts placed -> points

SPACES: dict[str, SpaceDef] = {
    "coins5": SpaceDef("coins5", 1),
    "camels": SpaceDef("camels", 1),
    "pepper": SpaceDef("pepper", 1),
    "silk": SpaceDef("silk", 2),
    "gold": SpaceDef("gold", 3),
    "contracts": SpaceDef("contracts", 1),
    "travel": SpaceDef("travel", 2),
}
KHAN = SpaceDef("khan", 1, shared=True, fee=False)
CARD_SPACE = SpaceDef("card", 1, shared=False)
SLOT_INDEX = {slot: i for i, (slot, _city) in enumerate(CARD_SLOTS)}
MAIN_ORDER = ("coins5", "camels", "pepper", "silk", "gold", "khan", "contracts", "travel")


class VoyagesSetup(FamilyState):
    """The Voyages of Marco Polo's fields, setup, helpers and rounds (see the module docstring)."""

    FAMILY = FamilyRules(EFFECTS, STEP_CAP, RESOURCES, POSTS, SPACES, MILESTONES)

    def __init__(self, *, num_players: int, options: Mapping[str, Any], rng: ChanceRng) -> None:
        super().__init__(num_players=num_players, options=options, rng=rng)
        self.figures: list[list[int]] = [[VENEZIA] for _ in range(num_players)]
        self.posts: list[list[int]] = [[] for _ in range(num_players)]
        self.goals: list[list[int]] = [[] for _ in range(num_players)]
        self.active: list[list[int]] = [[] for _ in range(num_players)]
        self.goal_offers: list[list[int]] = [[] for _ in range(num_players)]
        self.done: list[list[int]] = [[] for _ in range(num_players)]
        self.cards: list[int] = []
        self.card_used: list[int | None] = [None] * len(CARD_SLOTS)
        self.outposts: dict[str, int] = {}
        self.city_bonus: dict[str, str] = {}
        self.board: list[int] = []
        self.round_piles: list[list[int]] = []
        self.special: list[int] = []
        self.special_hidden = 0
        self.beijing: list[int | None] = [None] * 4
        self.start_player = 0
        self.last_travel: int | None = None
        self.posts_this_turn: list[int] = []

    # --- setup ------------------------------------------------------------------------------------------
    def setup(self) -> None:
        n = self.num_players
        rng = self.rng
        letters = sorted(CITY_BONUSES)
        homes = [CITY_BONUSES[letter]["home"] for letter in letters]
        if self.options["random_city_bonuses"]:
            rng.shuffle(letters)
        self.city_bonus = {str(home): letter for home, letter in zip(homes, letters, strict=True)}
        outposts = sorted(OUTPOST_BONUSES)
        rng.shuffle(outposts)
        self.outposts = {str(city): outposts[i] for i, city in enumerate(LARGE_CITIES)}
        cards = sorted(CITY_CARDS)
        rng.shuffle(cards)
        self.cards = cards[: len(CARD_SLOTS)]
        regular = list(REGULAR_CONTRACTS)
        rng.shuffle(regular)
        piles = [regular[i * PILE_SIZE : (i + 1) * PILE_SIZE] for i in range(ROUNDS)]
        self.special = regular[ROUNDS * PILE_SIZE :]
        self.special_hidden = len(self.special)
        self.board = piles[0]
        self.round_piles = piles[1:]
        starting = list(START_CONTRACTS)
        rng.shuffle(starting)
        for seat in range(n):
            self.active[seat] = [starting[seat]]
            self.res[seat]["coins"] = START_COINS + seat
            self.res[seat]["camels"] = START_CAMELS
        goals = sorted(GOALS)
        rng.shuffle(goals)
        per_seat = 4 if self.options["goal_draft"] else 2
        for seat in range(n):
            dealt = goals[seat * per_seat : (seat + 1) * per_seat]
            if self.options["goal_draft"]:
                self.goal_offers[seat] = sorted(dealt)
            else:
                self.goals[seat] = sorted(dealt)
        # Neutral dice (never leave): 3 players one 1 on Khan's Favor; 2 players two 1s and one on 5 coins.
        self.khan = [[-1, "n1"] for _ in range(4 - n)]
        if n == 2:
            self.spaces["coins5"] = [[-1, ["n1"]]]
        mode = self.options["characters"]
        effects: list[EffectBase] = []
        if mode == "first_game":
            self.chars = list(FIRST_GAME_CHARACTERS[:n])
        elif mode == "random":
            keys = list(CHARACTER_KEYS)
            rng.shuffle(keys)
            self.chars = keys[:n]
        else:
            keys = list(CHARACTER_KEYS)
            rng.shuffle(keys)
            self.draft_pool = sorted(keys[: n + 1])
            effects += [simple(Draft.kind, seat) for seat in reversed(range(n))]
        if self.options["goal_draft"]:
            effects += [simple(KeepGoals.kind, seat) for seat in range(n)]
        effects.append(simple(StartGame.kind, 0))
        self._push(effects)
        self._run()

    def _start_game(self) -> None:
        for seat, char in enumerate(self.chars):
            if char == "kubilai":
                self.figures[seat] = [BEIJING]
                self.posts[seat] = [BEIJING]
                self.posts_left[seat] = POSTS - 1
                self.posts_placed[seat] = 1
                self.beijing[0] = seat
            elif char == "niccolo":
                self.figures[seat] = [VENEZIA, VENEZIA]
            elif char == "wilhelm":
                self.posts_left[seat] = WILHELM_POSTS
        self._log({"event": "setup", "characters": list(self.chars)})
        self._start_round()

    # --- small helpers ----------------------------------------------------------------------------------
    def mercator_seats(self, actor: int) -> list[int]:
        return [s for s in range(self.num_players) if s != actor and self.chars[s] == "mercator"]

    def small_cities_of(self, seat: int) -> list[int]:
        return [node for node in SMALL_CITIES if node in self.posts[seat]]

    def _draw_contract(self) -> int | None:
        card = cardrow.draw_top(self.special)
        if card is not None and self.special_hidden > 0:
            self.special_hidden -= 1
        return card

    # --- rounds and turns -------------------------------------------------------------------------------
    def _start_round(self) -> None:
        self.round += 1
        if self.round > 1 and self.last_travel is not None:
            self.start_player = self.last_travel
        self.last_travel = None
        self.spaces = {name: [p for p in placed if p[0] == -1] for name, placed in self.spaces.items()}
        self.khan = [p for p in self.khan if p[0] == -1]
        self.card_used = [None] * len(CARD_SLOTS)
        self.black_left = self.num_players + 1
        for seat in range(self.num_players):
            if self.chars[seat] == "raschid":
                self.dice[seat] = ["c0"] * COLOUR_DICE
            else:
                self.dice[seat] = [roll(self.rng, COLOUR) for _ in range(COLOUR_DICE)]
            if self.chars[seat] == "matteo":
                self.dice[seat].append(roll(self.rng, "w"))
            self.dice[seat].sort()
        self._log({"event": "round", "start_player": self.start_player, "dice": [list(d) for d in self.dice]})
        effects: list[EffectBase] = []
        for seat in self._order_from(self.start_player):
            if self.chars[seat] != "raschid":
                total = sum(value_of(t) for t in self.dice[seat])
                if total < 15:
                    effects.append(CountEffect(t=COMP.kind, seat=seat, n=15 - total))
            for node in self.small_cities_of(seat):
                effects.append(self._city_bonus_effect(seat, node))
            char = self.chars[seat]
            if char == "matteo":
                effects.append(simple(DRAW_CONTRACT.kind, seat))
            elif char == "niccolo":
                effects.append(reward_effect(seat, {"camels": 1}))
            elif char == "johannes":
                effects.append(reward_effect(seat, {"coins": 3}))
        self.phase = PLAY
        self.turn_seat = self.start_player
        self._begin_turn()
        self._push(effects)

    def _begin_turn(self) -> None:
        super()._begin_turn()
        if not self.board:
            drawn = [c for c in (self._draw_contract(), self._draw_contract()) if c is not None]
            self.board = drawn
            # Revision 1 logged the board list itself, so the event changed as contracts left the board
            # (and a clone's event with the original's board); its records replay that way.
            logged = drawn if self.revision < SPECIAL_EVENT_COPIED else list(drawn)
            self._log({"event": "special_to_board", "contracts": logged})

    def _round_ended(self) -> None:
        cardrow.put_bottom(self.special, self.board)
        self.board = []

    def _next_round(self) -> None:
        self.board = self.round_piles.pop(0)
        self._start_round()

    def _final_scores(self) -> list[JsonDict]:
        return final_scores(self)

    def _take_black_die(self, seat: int) -> None:
        if self.black_left <= 0:
            self._log({"event": "black_die_none_left", "seat": seat})
            return
        self.black_left -= 1
        tok = "b0" if self.chars[seat] == "raschid" else roll(self.rng, "b")
        self.dice[seat].append(tok)
        self.dice[seat].sort()
        self._log({"event": "black_die", "seat": seat, "die": tok})

    def _city_bonus_effect(self, seat: int, city: int) -> CityBonusEffect:
        return CityBonusEffect(t=CityBonus.kind, seat=seat, letter=self.city_bonus[str(city)])
