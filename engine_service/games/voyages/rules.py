"""The Voyages of Marco Polo's state and rules (`voyages-v1`). The package docstring is the spec.

Pure: no Django, no gRPC, no clock, no global `random`; chance (setup shuffles, dice rolls) comes only from
the state's own `ChanceRng`. The state is plain JSON data: every attribute listed in `_FIELDS`.

Decision machinery (`common.effects`): `pending` is a stack of effects (index 0 = the next to resolve). An
automatic effect is resolved at once; a choice effect is offered to its seat as a finite list of actions
(and resolved without asking when exactly one action is possible). Each effect kind, its payload, actions
and resolution, is one handler in `effects.py`. With nothing pending during play, the seat whose turn it is
gets the turn menu: bonus actions, one main action (a dice placement), and `end` once allowed. Effects
never mutate their nested lists in place (they are replaced), so a shallow copy of each effect is a copy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.games.base import Action, JsonDict
from engine_service.games.common import cardrow
from engine_service.games.common.dice import (
    COLOUR,
    SpaceDef,
    colour_used,
    distinct_groups,
    kind_of,
    placement_fee,
    remove_tokens,
    roll,
    value_of,
)
from engine_service.games.common.effects import PLAY, EffectBase
from engine_service.games.common.family import FamilyRules, FamilyState
from engine_service.games.common.family_effects import (
    CountEffect,
    Draft,
    StartGame,
    goods_choices,
    posts_effect,
    reward_effect,
    simple,
)
from engine_service.games.common.resources import can_afford, gain, pay
from engine_service.games.fields import Copy, state_field
from engine_service.games.rng import ChanceRng
from engine_service.games.voyages.effects import (
    CITY_PICK,
    COMP,
    DRAW_CONTRACT,
    EFFECTS,
    Bonus,
    BuyMoves,
    BuyMovesEffect,
    CityBonus,
    CityBonusEffect,
    CityLoop,
    CityLoopEffect,
    Column,
    ColumnEffect,
    Dice,
    DiceEffect,
    Exchange,
    ExchangeEffect,
    KeepGoals,
    Pick,
    PickEffect,
    Repeat,
    RepeatEffect,
    Travel,
    TravelEffect,
    Xian,
    can_give,
    move_effect,
)
from engine_service.games.voyages.scoring import final_scores
from engine_service.games.voyages.tables import (
    BAZAAR,
    BEIJING,
    CARD_SLOTS,
    CHARACTER_KEYS,
    CITIES,
    CITY_BONUSES,
    CITY_CARDS,
    CONTRACTS,
    FIRST_GAME_CHARACTERS,
    GOALS,
    GOODS,
    LARGE_CITIES,
    NODE_BY_SLUG,
    NODE_TYPE,
    OASES,
    OUTPOST_BONUSES,
    REGULAR_CONTRACTS,
    ROUTES,
    SLUG,
    SMALL_CITIES,
    START_CONTRACTS,
    TRAVEL_COST,
    VENEZIA,
)

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


class VoyagesState(FamilyState):
    """One game of The Voyages of Marco Polo. Everything mutable lives in plain JSON-able attributes."""

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
            self._log({"event": "special_to_board", "contracts": drawn})

    def _round_ended(self) -> None:
        cardrow.put_bottom(self.special, self.board)
        self.board = []

    def _next_round(self) -> None:
        self.board = self.round_piles.pop(0)
        self._start_round()

    def _final_scores(self) -> list[JsonDict]:
        return final_scores(self)

    def _turn_is_over(self, seat: int) -> bool:
        if self.dice[seat]:
            return False
        if self.res[seat]["camels"] >= 3 and self.black_left > 0 and not self.black_bought:
            return False
        return not any(can_afford(self.res[seat], CONTRACTS[c]["cost"]) for c in self.active[seat])

    # --- the turn menu ----------------------------------------------------------------------------------
    def _turn_actions(self, seat: int) -> list[Action]:
        """The turn menu (first level): end, `bonus` (money bag, black die, reroll, adjust: chosen with their
        die on the second level), completing a contract, and the main action's space (its dice are the second
        level), so the menu stays short."""
        held = self.dice[seat]
        res = self.res[seat]
        actions: list[Action] = []
        if self.main_done or not held:
            actions.append(Action("end", "end"))
        spaces: list[Action] = []
        if not self.main_done and held:
            for name in dict.fromkeys(str(a.details["space"]) for a in self._placements(seat, first=True)):
                spaces.append(Action(f"place:{name}", "place", {"space": name}))
            if not actions and spaces and spaces[0].id == "place:coins5":
                # The safe fallback while the main action is due: take 5 coins.
                actions.append(spaces.pop(0))
        if self._bonus_menu(seat):
            actions.append(Action("bonus", "bonus", {}))
        for cid in self.active[seat]:
            if can_afford(res, CONTRACTS[cid]["cost"]):
                actions.append(Action(f"complete:{cid}", "bonus", {"bonus": "complete", "contract": cid}))
        return actions + spaces

    def _bonus_menu(self, seat: int) -> list[Action]:
        """Second level of `bonus`: the money bag, a black die, a reroll or an adjustment (with the die)."""
        res = self.res[seat]
        actions = self._die_bonus_actions(seat, "bag")
        if res["camels"] >= 3 and self.black_left > 0 and not self.black_bought:
            actions.append(Action("black", "bonus", {"bonus": "black_die", "camels": 3}))
        if res["camels"] >= 1:
            actions += self._die_bonus_actions(seat, "reroll")
        if res["camels"] >= 2:
            actions += self._die_bonus_actions(seat, "adjust")
        return actions

    def _die_bonus_actions(self, seat: int, bonus: str) -> list[Action]:
        """Second level of bag / reroll / adjust: which die (and for adjust, which way)."""
        actions = []
        for tok in sorted(set(self.dice[seat])):
            value = value_of(tok)
            if bonus == "bag":
                actions.append(Action(f"bag:{tok}", "bonus", {"bonus": "bag", "die": tok}))
            elif value == 0:
                continue  # Raschid's unrolled dice have no value to change
            elif bonus == "reroll":
                actions.append(Action(f"reroll:{tok}", "bonus", {"bonus": "reroll", "die": tok}))
            else:
                for by in (1, -1):
                    if 1 <= value + by <= 6:
                        actions.append(
                            Action(
                                f"adjust:{tok}:{by:+d}", "bonus", {"bonus": "adjust", "die": tok, "by": by}
                            )
                        )
        return actions

    def _turn_apply(self, seat: int, action: Action) -> None:
        aid = action.id
        if aid == "end":
            self._end_turn()
        elif aid == "bonus":
            self._push([simple(Bonus.kind, seat)])
        elif aid.startswith("complete:"):
            self._complete(seat, int(action.details["contract"]))
        elif aid.startswith("place:"):
            dice_pick: DiceEffect = {"t": Dice.kind, "seat": seat, "space": str(action.details["space"])}
            self._push([dice_pick])
        else:  # pragma: no cover - the menu only makes the ids above
            raise AssertionError(aid)

    def _apply_die_bonus(self, seat: int, action: Action) -> None:
        res = self.res[seat]
        tok = str(action.details["die"])
        bonus = action.details["bonus"]
        if bonus == "bag":
            remove_tokens(self.dice[seat], [tok])
            gain(res, {"coins": 3})
            self._log({"event": "bag", "seat": seat, "die": tok})
        elif bonus == "reroll":
            pay(res, {"camels": 1})
            self._replace_die(seat, tok, roll(self.rng, kind_of(tok)))
        else:
            pay(res, {"camels": 2})
            self._replace_die(seat, tok, f"{kind_of(tok)}{value_of(tok) + int(action.details['by'])}")

    def _replace_die(self, seat: int, old: str, new: str) -> None:
        remove_tokens(self.dice[seat], [old])
        self.dice[seat].append(new)
        self.dice[seat].sort()
        self._log({"event": "die", "seat": seat, "from": old, "to": new})

    def _take_black_die(self, seat: int) -> None:
        if self.black_left <= 0:
            self._log({"event": "black_die_none_left", "seat": seat})
            return
        self.black_left -= 1
        tok = "b0" if self.chars[seat] == "raschid" else roll(self.rng, "b")
        self.dice[seat].append(tok)
        self.dice[seat].sort()
        self._log({"event": "black_die", "seat": seat, "die": tok})

    def _complete(self, seat: int, cid: int) -> None:
        contract = CONTRACTS[cid]
        pay(self.res[seat], contract["cost"])
        self.active[seat] = [c for c in self.active[seat] if c != cid]
        self.done[seat] = [*self.done[seat], cid]
        self._log({"event": "complete", "seat": seat, "contract": cid})
        self._reward(seat, contract["reward"])

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

    # --- rewards ----------------------------------------------------------------------------------------
    def _reward(self, seat: int, reward: Mapping[str, int]) -> None:
        """Gain a reward bundle; its choices (goods, moves, contracts) become effects resolved next."""
        gain(self.res[seat], {k: v for k, v in reward.items() if k in RESOURCES})
        effects = goods_choices(seat, reward.get("good_choice", 0), reward.get("different_goods", 0))
        effects += [simple(Xian.kind, seat)] * reward.get("other_bonus", 0)
        for _ in range(reward.get("black_die", 0)):
            self._take_black_die(seat)
        effects += [simple(DRAW_CONTRACT.kind, seat)] * reward.get("contract", 0)
        effects += [move_effect(seat, 1, {}, skip=True)] * reward.get("move", 0)
        self._push(effects)

    def _city_bonus_effect(self, seat: int, city: int) -> CityBonusEffect:
        return CityBonusEffect(t=CityBonus.kind, seat=seat, letter=self.city_bonus[str(city)])

    def _copied_bonus(self, seat: int, city: int) -> CityBonusEffect:
        return self._city_bonus_effect(seat, city)

    def _bonus_cities(self, seat: int) -> list[int]:
        return self.small_cities_of(seat)

    def _discard_contract(self, cid: int) -> None:
        """Contracts given up go to the bottom of the special pile."""
        cardrow.put_bottom(self.special, [cid])

    # --- movement ---------------------------------------------------------------------------------------
    def _extra_links(self, seat: int) -> Any:
        if self.chars[seat] != "johannes":
            return None
        printed = self.options["johannes_jump_cost"] == "printed"

        def links(node: int) -> list[tuple[int, tuple[int, ...]]]:
            if node not in OASES:
                return []
            zero = (0, 0)
            return [
                (other, ROUTES.route_cost.get((node, other), zero) if printed else zero)
                for other in OASES
                if other != node
            ]

        return links

    def _route_options(
        self,
        seat: int,
        max_steps: int,
        coins: int,
        camels: int,
        *,
        table: bool = False,
        per_step: Mapping[str, int] | None = None,
        figures: Sequence[int] | None = None,
        base_steps: int = 0,
    ) -> list[dict[str, Any]]:
        """Affordable distinct movements of one figure: end, cities passed (Wilhelm), total coins/camels.

        With `table`, the Travel table cost for `base_steps + steps` minus that of `base_steps` is added
        (Niccolo's second figure continues the same Travel)."""
        per = per_step or {}
        wilhelm = self.chars[seat] == "wilhelm"
        tracked = frozenset(CITIES - set(self.posts[seat])) if wilhelm else frozenset()
        links = self._extra_links(seat)
        options: list[dict[str, Any]] = []
        figs = range(len(self.figures[seat])) if figures is None else figures
        for fig in figs:
            start = self.figures[seat][fig]
            best: dict[tuple[int, tuple[int, ...]], list[tuple[int, int, int]]] = {}
            for out in ROUTES.outcomes(
                start, max_steps, extra_links=links, tracked=tracked, budget=(camels, coins)
            ):
                k = out.steps
                cost_coins = out.cost[1] + per.get("coins", 0) * k
                if table:
                    cost_coins += TRAVEL_COST[base_steps + k] - TRAVEL_COST[base_steps]
                cost_camels = out.cost[0] + per.get("camels", 0) * k
                if cost_coins > coins or cost_camels > camels:
                    continue
                entries = best.setdefault((out.end, out.passed), [])
                if any(c <= cost_coins and m <= cost_camels for c, m, _ in entries):
                    continue
                entries[:] = [e for e in entries if not (cost_coins <= e[0] and cost_camels <= e[1])]
                entries.append((cost_coins, cost_camels, k))
            for (end, passed), entries in best.items():
                for cost_coins, cost_camels, k in entries:
                    options.append(
                        {
                            "fig": fig,
                            "end": end,
                            "passed": list(passed),
                            "coins": cost_coins,
                            "camels": cost_camels,
                            "steps": k,
                        }
                    )
        options.sort(key=lambda o: (o["coins"], o["camels"], o["fig"], o["end"], o["passed"], o["steps"]))
        return options

    def _route_action(self, seat: int, option: dict[str, Any], prefix: str = "route") -> Action:
        parts = [prefix]
        if len(self.figures[seat]) > 1:
            parts.append(f"f{int(option['fig']) + 1}")
        parts.append(SLUG[int(option["end"])])
        if self.chars[seat] == "wilhelm" and option["passed"]:
            parts.append("via=" + "+".join(SLUG[n] for n in option["passed"]))
        parts.append(f"{option['coins']}coins")
        parts.append(f"{option['camels']}camels")
        return Action(":".join(parts), "move", dict(option))

    def _move(self, seat: int, moves: Sequence[Mapping[str, Any]], *, table: bool) -> None:
        """Pay every cost first, then move the figures, then place posts where they end (Wilhelm: in
        every city passed) and only then take the bonuses."""
        coins = sum(int(m["coins"]) for m in moves)
        camels = sum(int(m["camels"]) for m in moves)
        pay(self.res[seat], {"coins": coins, "camels": camels})
        nodes: list[int] = []
        for m in moves:
            self.figures[seat][int(m["fig"])] = int(m["end"])
            self.figures[seat] = list(self.figures[seat])
            if self.chars[seat] == "wilhelm":
                nodes += [int(n) for n in m["passed"] if n not in nodes]
            elif int(m["end"]) in CITIES and int(m["end"]) not in nodes:
                nodes.append(int(m["end"]))
        self._log(
            {
                "event": "move",
                "seat": seat,
                "to": [int(m["end"]) for m in moves],
                "coins": coins,
                "camels": camels,
                "travel": table,
            }
        )
        nodes = [n for n in nodes if n not in self.posts[seat]]
        if nodes:
            self._push([posts_effect(seat, nodes)])

    def _arrive_in(self, seat: int, node: int) -> list[EffectBase]:
        """Put the post on the map and return the bonus effects of that city."""
        self.posts[seat] = [*self.posts[seat], node]
        self.posts_this_turn = [*self.posts_this_turn, node]
        kind = NODE_TYPE[node]
        if node == BEIJING:
            slot = self.beijing.index(None) if None in self.beijing else None
            if slot is not None:
                self.beijing[slot] = seat
            return []
        if kind == "large":
            bonus = self.outposts.pop(str(node), None)
            if bonus is None:
                return []
            self._log({"event": "outpost_bonus", "seat": seat, "city": node, "bonus": bonus})
            return [reward_effect(seat, OUTPOST_BONUSES[bonus])]
        if kind == "small":
            return [self._city_bonus_effect(seat, node)]
        return []

    def _post_removed(self, seat: int, node: int) -> None:
        if node == BEIJING:
            self.beijing = [None if s == seat else s for s in self.beijing]

    def node_name(self, node: int) -> str:
        return SLUG[node]

    # --- views ------------------------------------------------------------------------------------------
    def _public_facts(self) -> JsonDict:
        hidden = self.special_hidden
        return {
            "round_pile_sizes": [len(p) for p in self.round_piles],
            "special_known": list(self.special[hidden:]),
            "goal_counts": [len(g) for g in self.goals],
            "goal_offer_counts": [len(g) for g in self.goal_offers],
            "unseen_contracts": self.unseen_contracts(),
        }

    def _own_goals(self, seat: int) -> JsonDict:
        return {"goals": list(self.goals[seat])}

    def _revealed(self) -> JsonDict:
        return {
            "all_goals": [list(g) for g in self.goals],
            "round_piles": [list(p) for p in self.round_piles],
            "special": list(self.special),
        }

    # --- persistence ------------------------------------------------------------------------------------
    # Voyages' own fields after the family's (`FamilyState`), declared once: how a clone copies each (nested
    # lists one level below where they change; placements, effects' nested lists and events never change in
    # place), which are private. `__init__` sets their start values.
    goals: list[list[int]] = state_field(Copy.ITEMS, private=True)  # two goal cards each (a family field)
    cards: list[int] = state_field(Copy.SHALLOW)
    card_used: list[int | None] = state_field(Copy.SHALLOW)
    outposts: dict[str, int] = state_field(Copy.SHALLOW)
    city_bonus: dict[str, str] = state_field(Copy.SHALLOW)
    board: list[int] = state_field(Copy.SHALLOW)
    round_piles: list[list[int]] = state_field(Copy.ITEMS, private=True)
    special: list[int] = state_field(Copy.SHALLOW, private=True)
    special_hidden: int = state_field()
    beijing: list[int | None] = state_field(Copy.SHALLOW)
    start_player: int = state_field()
    last_travel: int | None = state_field()
    TRANSIENT = ("_resolved",)  # the heuristic's per-state cache
    SHARE_LEGAL_CACHE = False  # `shuffle_hidden` and the bench's players change copies by hand

    def shuffle_hidden(self, seat: int, rng: ChanceRng) -> VoyagesState:
        """Re-deal what `seat` cannot see: other seats' goal cards (and offers), the round piles and the
        unseen top of the special pile."""
        other = self.clone()
        known_goals = set(self.goals[seat]) | set(self.goal_offers[seat])
        pool = [g for g in sorted(GOALS) if g not in known_goals]
        rng.shuffle(pool)
        for s in range(self.num_players):
            if s == seat:
                continue
            offer_size, kept_size = len(self.goal_offers[s]), len(self.goals[s])
            drawn = pool[: max(offer_size, kept_size)]
            pool = pool[max(offer_size, kept_size) :]
            other.goal_offers[s] = sorted(drawn[:offer_size])
            other.goals[s] = sorted(drawn[:kept_size])
        unknown = list(self.special[: self.special_hidden]) + [c for p in self.round_piles for c in p]
        rng.shuffle(unknown)
        other.special = unknown[: self.special_hidden] + list(self.special[self.special_hidden :])
        rest = unknown[self.special_hidden :]
        piles = []
        for p in self.round_piles:
            piles.append(rest[: len(p)])
            rest = rest[len(p) :]
        other.round_piles = piles
        return other

    # --- facts used by views, scoring and the heuristic -------------------------------------------------
    def unseen_contracts(self) -> list[int]:
        """Regular contracts no seat has seen (in the round piles or the unseen top of the special pile)."""
        return sorted(list(self.special[: self.special_hidden]) + [c for p in self.round_piles for c in p])


PRIVATE_FIELDS = VoyagesState.PRIVATE_FIELDS  # derived from the declarations: what sampled states redraw


def node_id(slug: str) -> int:
    return NODE_BY_SLUG[slug]
