"""Marco Polo II's state and rules (`mp2-v1`), with The Caravans as an option. The package docstring is
the spec.

Pure: no Django, no gRPC, no clock, no global `random`; chance (setup shuffles, dice rolls) comes only from
the state's own `ChanceRng`. The state is plain JSON data: every attribute listed in `_FIELDS`.

Decision machinery (as in Voyages): `pending` is a stack of effects (index 0 = the next to resolve). An
automatic effect is resolved at once; a choice effect is offered to its seat as a finite list of actions
(and resolved without asking when exactly one action is possible). With nothing pending during play, the
seat whose turn it is gets the turn menu: bonus actions, one normal action (a dice placement), and `end`
once allowed. Effects are never mutated in their nested lists (they are replaced), so a shallow copy of
each effect is a copy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.games.base import Action, JsonDict
from engine_service.games.common import cardrow, dice
from engine_service.games.common.effects import PLAY, EffectBase
from engine_service.games.common.family import FamilyRules, FamilyState
from engine_service.games.common.family_effects import (
    GOOD_PAIRS,
    CountEffect,
    Draft,
    StartGame,
    goods_choices,
    reward_effect,
    simple,
)
from engine_service.games.common.resources import can_afford_with, gain, pay_with
from engine_service.games.fields import Copy, state_field
from engine_service.games.mp2.effects import (
    CARD_BONUS,
    COMP,
    EFFECTS,
    PILE_CONTRACT,
    CaravanGood,
    CaravanGoodEffect,
    CaravanHome,
    CaravanHomeEffect,
    CardEffect,
    CityContract,
    CityContractEffect,
    DicePick,
    DicePickEffect,
    DieBonus,
    DieBonusEffect,
    DonataPick,
    Exchange,
    FirstRound,
    Income,
    Isabella,
    KeepGoal,
    Load,
    MailinDouble,
    Offer,
    OfferEffect,
    OtherMarker,
    Pick,
    PickEffect,
    Repeat,
    ReturnTile,
    ReturnTileEffect,
    RewardContract,
    SealPick,
    SealPickEffect,
    marker_effect,
    move_effect,
)
from engine_service.games.mp2.scoring import final_scores
from engine_service.games.mp2.tables import (
    BASE_CHARACTERS,
    BEIJING,
    BOOKS,
    CARAVAN_CHARACTERS,
    CARD_CITIES,
    CITIES_OF_SHIELD,
    CITY_CARDS,
    COLOURS,
    CONTRACT_CITIES,
    CONTRACTS,
    FIGURE_VALUE,
    GOALS,
    GOODS,
    ISABELLA_FACE,
    MARKER_CITIES,
    MARKERS,
    MILESTONES,
    NEIGHBOURS,
    NODES,
    OASES,
    OFFER_TILES,
    OUTPOST_CITIES,
    OUTPOSTS,
    REGULAR_CONTRACTS,
    RESOURCES,
    ROUTE_SEAL,
    ROUTE_TILES,
    SEAL_NAMES,
    SEALS,
    SHIELD,
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


def _links_of(node: str, mongke: bool) -> list[tuple[tuple[str, ...], tuple[int, int, int], tuple[str, ...]]]:
    """Moves of one step from `node`: (path of nodes entered, summed route cost, sea seals needed). For
    Möngke a step runs through any oases to the next city, or ends on an oasis."""
    out: list[tuple[tuple[str, ...], tuple[int, int, int], tuple[str, ...]]] = []

    def walk(at: str, path: tuple[str, ...], cost: tuple[int, int, int], seals: tuple[str, ...]) -> None:
        for other, extra in NEIGHBOURS[at]:
            if other == node or other in path:
                continue
            seal = ROUTE_SEAL[(at, other)]
            new_cost = (cost[0] + extra[0], cost[1] + extra[1], cost[2] + extra[2])
            new_seals = (*seals, seal) if seal and seal not in seals else seals
            new_path = (*path, other)
            out.append((new_path, new_cost, new_seals))
            if mongke and other in OASES:
                walk(other, new_path, new_cost, new_seals)

    walk(node, (), (0, 0, 0), ())
    out.sort()
    return out


LINKS = {node: _links_of(node, False) for node in NODES}
MONGKE_LINKS = {node: _links_of(node, True) for node in NODES}


def _pareto_add(
    ways: list[tuple[tuple[int, int, int], tuple[str, ...]]],
    cost: tuple[int, int, int],
    path: tuple[str, ...],
) -> None:
    """Keep `ways` cost-Pareto-optimal (one path per cost)."""
    for old, _path in ways:
        if all(o <= n for o, n in zip(old, cost, strict=True)):
            return
    ways[:] = [w for w in ways if not all(n <= o for n, o in zip(cost, w[0], strict=True))]
    ways.append((cost, path))


class Mp2State(FamilyState):
    """One game of Marco Polo II. Everything mutable lives in plain JSON-able attributes."""

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

    def _turn_is_over(self, seat: int) -> bool:
        return not self.dice[seat] and len(self._turn_actions(seat)) == 1

    # --- the turn menu ----------------------------------------------------------------------------------
    def _turn_actions(self, seat: int) -> list[Action]:
        """The turn menu (first level): end, bonus actions, and the normal action's space. Which die (or
        dice) is a second decision (`die_bonus` / `dice_pick` effects), so the menu stays short."""
        held = self.dice[seat]
        res = self.res[seat]
        char = self.chars[seat]
        actions: list[Action] = []
        spaces: list[Action] = []
        if self.main_done or not held:
            actions.append(Action("end", "end"))
        else:
            for name in dict.fromkeys(str(a.details["space"]) for a in self._placements(seat, first=True)):
                spaces.append(Action(f"place:{name}", "place", {"space": name}))
        if held:
            # The safe fallback while the normal action is due (and the action itself when none is possible).
            forced = not self.main_done and not spaces
            actions.append(Action("bag", "bonus", {"bonus": "money_bag", "as_action": forced}))
        for cid in self.active[seat]:
            for payment in self._contract_payments(seat, cid):
                suffix = ":" + "+".join(f"{g}{k}" for g, k in sorted(payment.items()) if k) if payment else ""
                actions.append(
                    Action(
                        f"complete:{cid}{suffix}",
                        "bonus",
                        {"bonus": "complete", "contract": cid, "goods": payment},
                    )
                )
        for seal in SEAL_NAMES:
            if self.seals[seat].get(seal) == 1 and self.can_pay(seat, self._improve_cost(seat, seal)):
                actions.append(Action(f"improve:{seal}", "bonus", {"bonus": "improve", "seal": seal}))
        if char == "vidal" and not self.vidal_sold[seat] and all(res[g] >= 1 for g in GOODS):
            actions.append(Action("vidal:set", "bonus", {"bonus": "vidal_set", "vp": 5}))
        for tile in sorted(set(self.kept_tiles[seat])):
            actions.append(Action(f"outpost:{tile}", "bonus", {"bonus": "outpost", "tile": tile}))
        if self.options["caravans"]:
            actions.extend(self._caravan_menu(seat))
        if self.black_left > 0 and not self.black_bought and self.can_pay(seat, {"camels": BLACK_DIE_CAMELS}):
            actions.append(Action("black", "bonus", {"bonus": "black_die", "camels": BLACK_DIE_CAMELS}))
        if held and self.can_pay(seat, {"camels": 1}):
            actions.append(Action("reroll", "bonus", {"bonus": "reroll", "camels": 1}))
        if held and self.can_pay(seat, {"camels": 2}):
            actions.append(Action("adjust", "bonus", {"bonus": "adjust", "camels": 2}))
        return actions + spaces

    def _die_bonus_actions(self, seat: int, bonus: str, as_action: bool = False) -> list[Action]:
        """Second level of the money bag, a reroll or a change of value: which die (and what, or which way)."""
        actions = []
        for tok in sorted(set(self.dice[seat])):
            value = tok_value(tok)
            if bonus == "bag":
                for what, bundle in (
                    ("coins", {"coins": 3}),
                    ("camels", {"camels": 2}),
                    ("jade", {"jade": 1}),
                ):
                    actions.append(
                        Action(
                            f"bag:{tok}:{what}",
                            "bonus",
                            {"bonus": "money_bag", "die": tok, "gain": bundle, "as_action": as_action},
                        )
                    )
            elif bonus == "reroll":
                actions.append(Action(f"reroll:{tok}", "bonus", {"bonus": "reroll", "die": tok, "camels": 1}))
            else:
                for by in (1, -1):
                    if 1 <= value + by <= 6:
                        actions.append(
                            Action(
                                f"adjust:{tok}:{by:+d}",
                                "bonus",
                                {"bonus": "adjust", "die": tok, "by": by, "camels": 2},
                            )
                        )
        return actions

    def _improve_cost(self, seat: int, seal: str) -> dict[str, int]:
        cost = dict(SEALS[seal]["improve"])
        if self.chars[seat] == "tebaldo":
            cost.pop("coins", None)
        return cost

    def _contract_payments(self, seat: int, cid: str) -> list[dict[str, int]]:
        """The goods a contract can be paid with: [{}] for a fixed cost, one entry per way to pay its "any"
        or "2 different" goods; [] if it cannot be completed now. Vidal pays nothing."""
        cost = CONTRACTS[cid]["cost"]
        if self.chars[seat] == "vidal":
            return [{}]
        fixed = {k: v for k, v in cost.items() if k not in ("any", "diff2")}
        if not self.can_pay(seat, fixed):
            return []
        res = self.res[seat]
        left = {g: res[g] - fixed.get(g, 0) for g in GOODS}
        if cost.get("any"):
            k = int(cost["any"])
            out = []
            for p in range(min(k, left["pepper"]) + 1):
                for s in range(min(k - p, left["silk"]) + 1):
                    g = k - p - s
                    if g <= left["gold"]:
                        out.append({"pepper": p, "silk": s, "gold": g})
            return out
        if cost.get("diff2"):
            return [{a: 1, b: 1} for a, b in GOOD_PAIRS if left[a] >= 1 and left[b] >= 1]
        return [{}]

    def _turn_apply(self, seat: int, action: Action) -> None:
        aid = action.id
        details = action.details
        if aid == "end":
            self._end_turn()
        elif aid in ("bag", "reroll", "adjust"):
            as_action = aid == "bag" and bool(details["as_action"])
            bonus: DieBonusEffect = {"t": DieBonus.kind, "seat": seat, "bonus": aid, "as_action": as_action}
            self._push([bonus])
        elif aid.count(":") == 1 and aid.startswith("place:"):
            pick: DicePickEffect = {"t": DicePick.kind, "seat": seat, "space": str(details["space"])}
            self._push([pick])
        elif aid == "black":
            self._pay(seat, {"camels": BLACK_DIE_CAMELS})
            self.black_bought = True
            self._take_black_die(seat)
        elif aid.startswith("bag:"):
            self._money_bag(seat, str(details["die"]), details["gain"], bool(details["as_action"]))
        elif aid.startswith("complete:"):
            self._complete(seat, str(details["contract"]), dict(details["goods"]))
        elif aid.startswith("improve:"):
            self._improve(seat, str(details["seal"]))
        elif aid == "vidal:set":
            self._vidal_set(seat)
        elif aid.startswith("outpost:"):
            self._use_outpost(seat, str(details["tile"]))
        elif aid.startswith("claim:"):
            self._claim(seat, str(details["tile"]), str(details["city"]))
        elif aid.startswith("caravan:"):
            self._complete_caravan(seat, int(details["caravan"]))
        elif aid.startswith("reroll:"):
            self._reroll(seat, str(details["die"]))
        elif aid.startswith("adjust:"):
            tok = str(details["die"])
            self._pay(seat, {"camels": 2})
            self._replace_die(seat, tok, f"{dice.kind_of(tok)}{tok_value(tok) + int(details['by'])}")
        elif aid.startswith("place:"):
            self._place(seat, action)
        else:  # pragma: no cover - the menu only makes the ids above
            raise AssertionError(aid)

    def _money_bag(self, seat: int, tok: str, bundle: Mapping[str, int], as_action: bool) -> None:
        dice.remove_tokens(self.dice[seat], [tok])
        self._gain(seat, bundle)
        if as_action:
            self.main_done = True
        self._log({"event": "money_bag", "seat": seat, "die": tok, "gain": dict(bundle)})

    def _improve(self, seat: int, seal: str) -> None:
        self._pay(seat, self._improve_cost(seat, seal))
        self.seals[seat] = {**self.seals[seat], seal: 2}
        self._log({"event": "improve", "seat": seat, "seal": seal})
        if self.chars[seat] == "dewu":
            self._gain(seat, {"jade": 1})
        self._reward(seat, SEALS[seal]["bonus"])

    def _vidal_set(self, seat: int) -> None:
        res = self.res[seat]
        pay_with(res, {g: 1 for g in GOODS}, WILD, ())
        res["vp"] += 5
        self.vidal_sold[seat] = True
        self._log({"event": "vidal_set", "seat": seat})

    def _use_outpost(self, seat: int, tile: str) -> None:
        """Filippo uses an outpost tile he kept."""
        kept = list(self.kept_tiles[seat])
        kept.remove(tile)
        self.kept_tiles[seat] = kept
        self._log({"event": "outpost_used", "seat": seat, "tile": tile})
        self._reward(seat, OUTPOSTS[tile])

    def _reroll(self, seat: int, tok: str) -> None:
        self._pay(seat, {"camels": 1})
        new = dice.roll(self.rng, dice.kind_of(tok))
        self._replace_die(seat, tok, new)
        self._isabella_face(seat, tok_value(new))

    def _replace_die(self, seat: int, old: str, new: str) -> None:
        dice.remove_tokens(self.dice[seat], [old])
        self.dice[seat] = sorted([*self.dice[seat], new])
        self._log({"event": "die", "seat": seat, "from": old, "to": new})

    def _complete(self, seat: int, cid: str, goods: Mapping[str, int]) -> None:
        contract = CONTRACTS[cid]
        if self.chars[seat] != "vidal":
            fixed = {k: v for k, v in contract["cost"].items() if k not in ("any", "diff2")}
            self._pay(seat, fixed)
            pay_with(self.res[seat], goods, WILD, ())
            self.res[seat]["vp"] += int(contract["vp"])
        self.active[seat] = [c for c in self.active[seat] if c != cid]
        self.done[seat] = [*self.done[seat], cid]
        self._log({"event": "complete", "seat": seat, "contract": cid})
        if self.chars[seat] == "abha":
            self._gain(seat, {"jade": 1})
        self._reward(seat, contract["reward"])

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

    # --- rewards ----------------------------------------------------------------------------------------
    def _reward(self, seat: int, reward: Mapping[str, int]) -> None:
        """Gain a reward bundle; its choices (goods, moves, contracts, ...) become effects resolved next."""
        self._gain(seat, {k: v for k, v in reward.items() if k in RESOURCES})
        effects = goods_choices(seat, reward.get("good_choice", 0), reward.get("diff2", 0))
        effects += [simple(OtherMarker.kind, seat)] * reward.get("other_marker", 0)
        for _ in range(reward.get("black_die", 0)):
            self._take_black_die(seat)
        if reward.get("shield"):
            self.extra_shields[seat] += int(reward["shield"])
        effects += [simple(PILE_CONTRACT.kind, seat)] * reward.get("contract_pile", 0)
        effects += [simple(RewardContract.kind, seat)] * reward.get("contract_city", 0)
        if reward.get("move"):
            effects.append(move_effect(seat, "reward", int(reward["move"]), {}, optional=True))
        self._push(effects)

    # --- choice effects ---------------------------------------------------------------------------------
    # --- contracts --------------------------------------------------------------------------------------
    # --- movement ---------------------------------------------------------------------------------------
    def _step_cost(self, seat: int, cost: tuple[int, int, int], per: Mapping[str, int]) -> dict[str, int]:
        coins, camels, jade = cost
        if self.chars[seat] == "gantulga":
            coins = camels = 0
        return {
            "coins": coins + per.get("coins", 0),
            "camels": camels + per.get("camels", 0),
            "jade": jade + per.get("jade", 0),
        }

    def _steps(
        self, seat: int, per: Mapping[str, int], extra: Mapping[str, int]
    ) -> list[tuple[int, tuple[str, ...], dict[str, int]]]:
        """Affordable single steps for each figure: (figure, path entered, cost), with `extra` coins already
        owed (a placement fee) counted against the holdings."""
        links = MONGKE_LINKS if self.chars[seat] == "mongke" else LINKS
        seals = self.seals[seat]
        out = []
        for fig, start in enumerate(self.figures[seat]):
            for path, cost, needed in links[start]:
                if any(s not in seals for s in needed):
                    continue
                price = self._step_cost(seat, cost, per)
                total = {k: price.get(k, 0) + extra.get(k, 0) for k in ("coins", "camels", "jade")}
                if self.can_pay(seat, total):
                    out.append((fig, path, price))
        return out

    def _can_step(self, seat: int, extra: Mapping[str, int], per: Mapping[str, int]) -> bool:
        return bool(self._steps(seat, per, extra))

    def _routes(
        self, seat: int, fig: int, max_steps: int, per: Mapping[str, int]
    ) -> list[tuple[str, int, dict[str, int], tuple[str, ...]]]:
        """Affordable movements of one figure of 1..`max_steps` steps: (end, steps, total cost, nodes
        entered on one cheapest way). Per end only the cost-Pareto-optimal ones are kept (fewer steps on a
        tie); walks may go back and forth."""
        links = MONGKE_LINKS if self.chars[seat] == "mongke" else LINKS
        seals = self.seals[seat]
        frontier: dict[str, list[tuple[tuple[int, int, int], tuple[str, ...]]]] = {
            self.figures[seat][fig]: [((0, 0, 0), ())]
        }
        best: dict[str, list[tuple[tuple[int, int, int], int, tuple[str, ...]]]] = {}
        for steps in range(1, max_steps + 1):
            nxt: dict[str, list[tuple[tuple[int, int, int], tuple[str, ...]]]] = {}
            for node, ways in frontier.items():
                for path, cost, needed in links[node]:
                    if any(x not in seals for x in needed):
                        continue
                    price = self._step_cost(seat, cost, per)
                    for done, walked in ways:
                        total = (done[0] + price["coins"], done[1] + price["camels"], done[2] + price["jade"])
                        if not self.can_pay(seat, {"coins": total[0], "camels": total[1], "jade": total[2]}):
                            continue
                        _pareto_add(nxt.setdefault(path[-1], []), total, (*walked, *path))
            frontier = nxt
            for end, ways in frontier.items():
                for total, walked in ways:
                    found = best.setdefault(end, [])
                    if any(all(o <= t for o, t in zip(old, total, strict=True)) for old, _k, _w in found):
                        continue
                    found[:] = [f for f in found if not all(t <= o for t, o in zip(total, f[0], strict=True))]
                    found.append((total, steps, walked))
        out = []
        for end in sorted(best):
            for total, steps, walked in sorted(best[end]):
                out.append((end, steps, {"coins": total[0], "camels": total[1], "jade": total[2]}, walked))
        return out

    def _arrive_in(self, seat: int, node: str) -> list[EffectBase]:
        """Put the post on the map and return the bonus effects of that city."""
        self.posts[seat] = [*self.posts[seat], node]
        self.posts_this_turn = [*self.posts_this_turn, node]
        effects: list[EffectBase] = []
        if node in self.markers:
            effects.append(marker_effect(seat, self.markers[node]))
        tile = self.outposts.pop(node, None)
        if tile is not None:
            self._log({"event": "outpost", "seat": seat, "city": node, "tile": tile})
            effects.append(reward_effect(seat, OUTPOSTS[tile]))
            keepers = [s for s in range(self.num_players) if self.chars[s] == "filippo"]
            if keepers:
                self.kept_tiles[keepers[0]] = sorted([*self.kept_tiles[keepers[0]], tile])
        if node in self.contract_spaces and any(c is not None for c in self.contract_spaces[node]):
            effects.append(CityContractEffect(t=CityContract.kind, seat=seat, city=node))
        if node in SPECIAL_CITIES:
            effects.append(reward_effect(seat, SPECIAL_CITIES[node]["bonus"]))
        return effects

    # --- caravans ---------------------------------------------------------------------------------------
    def caravan_capacity(self, seat: int) -> int:
        return 2 if self.chars[seat] == "tartarino" else 1

    def _claims(self, seat: int) -> list[tuple[str, str]]:
        if len(self.caravans[seat]) >= self.caravan_capacity(seat):
            return []
        if not any(self.res[seat][g] > 0 for g in GOODS):
            return []
        out = set()
        figures = set(self.figures[seat])
        for node in figures:
            if node not in SHIELD or NODES[node]["kind"] == "oasis":
                continue
            shield = SHIELD[node]
            for tile, state in self.tiles.items():
                if state != "up" or shield not in ROUTE_TILES[tile]:
                    continue
                a, b = ROUTE_TILES[tile]
                other = b if a == shield else a
                for city in CITIES_OF_SHIELD[other]:
                    if city == BEIJING:
                        continue
                    if self.chars[seat] == "mailin" and city in figures:
                        continue
                    out.add((tile, city))
        return sorted(out)

    def _caravan_menu(self, seat: int) -> list[Action]:
        actions = [
            Action(f"claim:{tile}:{city}", "bonus", {"bonus": "claim_route", "tile": tile, "city": city})
            for tile, city in self._claims(seat)
        ]
        oasis_ok = self.options["caravan_oasis_completion"]
        for i, caravan in enumerate(self.caravans[seat]):
            at = caravan["at"]
            if at in self.figures[seat] and (oasis_ok or at not in OASES) and caravan["goods"]:
                actions.append(
                    Action(f"caravan:{i + 1}:complete", "bonus", {"bonus": "complete_route", "caravan": i})
                )
        return actions

    def _claim(self, seat: int, tile: str, city: str) -> None:
        self.tiles = {**self.tiles, tile: "held"}
        self.caravans[seat] = [*self.caravans[seat], {"tile": tile, "at": city, "goods": []}]
        self._log({"event": "caravan_claim", "seat": seat, "tile": tile, "city": city})
        self._push([simple(Load.kind, seat)])

    def _complete_caravan(self, seat: int, i: int) -> None:
        caravan = self.caravans[seat][i]
        self._log({"event": "caravan_complete", "seat": seat, "caravan": i + 1, "at": caravan["at"]})
        effects: list[EffectBase] = [
            CaravanGoodEffect(t=CaravanGood.kind, seat=seat, goods=list(caravan["goods"]))
        ]
        if self.chars[seat] == "tartarino":
            self._gain(seat, {"jade": 1})
            self.res[seat]["vp"] += 3
            tiles = sorted(c["tile"] for c in self.caravans[seat])
            if len(tiles) > 1:
                effects.append(ReturnTileEffect(t=ReturnTile.kind, seat=seat, caravan=i, tiles=tiles))
                self._push(effects)
                return
        effects.append(CaravanHomeEffect(t=CaravanHome.kind, seat=seat, caravan=i, tile=caravan["tile"]))
        self._push(effects)

    # --- end --------------------------------------------------------------------------------------------
    def upgrade_action_id(self, seat: int, action_id: str) -> str:
        """Ids renamed so that no id belongs to two kinds: a movement's `stop` is now `move:stop` (a caravan's
        stays `stop`), and a single contract taken as a bonus is `contract:take:<city>:<slot>` (the Contracts
        action's stays `take:<city>:<slot>`). Neither id is stored in the state, so old hashes still hold."""
        renamed = {"stop": "move:stop"}.get(action_id)
        if renamed is None and action_id.startswith("take:"):
            renamed = f"contract:{action_id}"
        if renamed is not None and any(a.id == renamed for a in self.legal_actions(seat)):
            return renamed
        return action_id

    # --- views ------------------------------------------------------------------------------------------
    def _public_facts(self) -> JsonDict:
        return {
            "pile_size": len(self.pile),
            "pile_known": list(self.pile[self.pile_hidden :]),
            "card_deck_size": len(self.card_deck),
            "offer_next": {k: (v[0] if v else None) for k, v in self.offer_piles.items()},
            "offer_pile_sizes": {k: len(v) for k, v in self.offer_piles.items()},
            "goal_kept": [bool(g) for g in self.goals],
            "goal_offer_counts": [len(o) for o in self.goal_offers],
            **self.unseen(),
        }

    def _own_goals(self, seat: int) -> JsonDict:
        return {"goal": self.goals[seat]}

    def _revealed(self) -> JsonDict:
        return {"all_goals": list(self.goals), "pile": list(self.pile), "card_deck": list(self.card_deck)}

    def unseen(self) -> JsonDict:
        """What no seat has seen, as sets (sorted): the pile's unseen top, the city-card deck and the offer
        tiles below the visible next tile (with each pile's boxed tile)."""
        return {
            "unseen_contracts": sorted(self.pile[: self.pile_hidden]),
            "unseen_cards": sorted(self.card_deck),
            "unseen_tiles": {
                k: sorted([*self.offer_piles[k][1:], self.offer_box[k]]) for k in sorted(self.offer_piles)
            },
        }

    # --- persistence ------------------------------------------------------------------------------------
    # Marco Polo II's own fields after the family's (`FamilyState`), declared once: how a clone copies each
    # (containers one level below where they change; placements, effects' nested lists, caravans' dicts
    # and events never change in place), which are private. `__init__` sets their start values.
    extra_shields: list[int] = state_field(Copy.SHALLOW)
    spare_figs: list[list[int]] = state_field(Copy.ITEMS)  # Donata's figures, by colour index
    seals: list[dict[str, int]] = state_field(Copy.ITEMS)  # seal -> 1 basic, 2 improved
    brown: dict[str, list[Any]] = state_field(Copy.SHALLOW)
    cards: dict[str, str] = state_field(Copy.SHALLOW)
    card_deck: list[str] = state_field(Copy.SHALLOW, private=True)
    card_box: list[str] = state_field(Copy.SHALLOW)
    outposts: dict[str, str] = state_field(Copy.SHALLOW)
    kept_tiles: list[list[str]] = state_field(Copy.ITEMS)
    markers: dict[str, str] = state_field(Copy.SHALLOW)
    marker_box: str = state_field()
    contract_spaces: dict[str, list[str | None]] = state_field(Copy.SHALLOW)
    pile: list[str] = state_field(Copy.SHALLOW, private=True)  # index 0 is the top
    pile_hidden: int = state_field()  # the unseen top part of the pile (discards go to the public bottom)
    offer_piles: dict[str, list[str]] = state_field(Copy.VALUES, private=True)
    offer_now: dict[str, str] = state_field(Copy.SHALLOW)
    offer_box: dict[str, str] = state_field(Copy.SHALLOW, private=True)
    first_player: int = state_field()
    next_first: int | None = state_field()
    travel_rank: int = state_field()
    vidal_sold: list[bool] = state_field(Copy.SHALLOW)
    tiles: dict[str, str] = state_field(Copy.SHALLOW)  # route tile -> up | down | held
    caravans: list[list[dict[str, Any]]] = state_field(Copy.ITEMS)
    SHARE_LEGAL_CACHE = False  # `shuffle_hidden` changes its copy by hand

    def shuffle_hidden(self, seat: int, rng: ChanceRng) -> Mp2State:
        """Re-deal what `seat` cannot see: other seats' goal cards (and offers), the pile's unseen top, the
        city-card deck, and the offer tiles below each visible next tile (with the boxed ones)."""
        other = self.clone()
        deal_hidden(other, seat, rng, own_goal=self.goals[seat], own_offer=list(self.goal_offers[seat]))
        return other


PRIVATE_FIELDS = Mp2State.PRIVATE_FIELDS  # derived from the declarations: what sampled states redraw


def deal_hidden(state: Mp2State, seat: int, rng: ChanceRng, *, own_goal: str, own_offer: list[str]) -> None:
    """Re-deal, in place, everything `seat` cannot see, keeping every count and public fact."""
    known = set(own_offer) | ({own_goal} if own_goal else set())
    pool = [g for g in sorted(GOALS) if g not in known]
    rng.shuffle(pool)
    for s in range(state.num_players):
        if s == seat:
            continue
        offer = sorted(pool[-len(state.goal_offers[s]) :]) if state.goal_offers[s] else []
        del pool[len(pool) - len(offer) :]
        state.goal_offers[s] = offer
        if state.goals[s]:
            state.goals[s] = rng.choice(offer)
    hidden = sorted(state.pile[: state.pile_hidden])
    rng.shuffle(hidden)
    state.pile = hidden + list(state.pile[state.pile_hidden :])
    deck = sorted(state.card_deck)
    rng.shuffle(deck)
    state.card_deck = deck
    for numeral in NUMERALS:
        pile = state.offer_piles[numeral]
        unseen = sorted([*pile[1:], state.offer_box[numeral]])
        rng.shuffle(unseen)
        state.offer_box[numeral] = unseen.pop()
        state.offer_piles[numeral] = pile[:1] + unseen
