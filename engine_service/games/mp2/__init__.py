"""Marco Polo II: In the Service of the Khan (`mp2-v1`), 2-4 players, with The Caravans as an option.

Sources: the rule summary `shared/rules/mp2-service-of-the-khan-summary.txt`, the expansion's rule text
`shared/rules/mp2-caravans-expansion.txt`, and the specification `shared/game-data/mp2-and-caravans.md`
(the reference), whose recommended resolutions Q1-Q21 are followed. Data files (`data/*.json`) keep the
reference's ids: map nodes (BEI, KAR, ..., oases OA-OI) and routes R01-R48, 49 contracts (S1-S7, C01-C42),
25 city cards CC01-CC25, 14 goals G01-G14, 18 offer tiles (I-1 ... III-6) and the books' free offers,
guild seals, special cities, 10 outposts OP01-OP10, 7 city bonus markers CB1-CB7, the shield track,
11 characters and 10 route tiles RT01-RT10.

AUTHORED data (the physical board and card lists are not public): the map topology and route costs (R46
is FOUND), 21 of 33 node names, the placement of features on the map (except Kashgar and the special
cities), contract contents, city cards CC09-CC25 and the split/rate/cost of CC02/CC03/CC05/CC08, goal
cards, offer tiles and free offers, seal improvement costs and "!" bonuses, special-city values, outposts
OP02-OP10, markers CB1-CB6, the shield track's steps (the cap of 43 at 13 is FOUND) and route tiles
RT02-RT10. Each record says FOUND or AUTHORED in its file; a correction is a data change.

Options (defaults first):
- `caravans`: False; True adds The Caravans (route tiles, caravans, the 4 new characters).
- `special_city_repeat` (Q4): `by_die` (an improved seal's "!" once for a die of 1-3, twice for 4-6) or
  `by_space` (once on a city's first space, twice on its second).
- `bonus_copy_scope` (Q6): `markers` (CB7, CC03 and Mailin's doubling use only the 6 board markers) or
  `with_special` (special-city "!" bonuses too).
- `extra_post_bonus` (Q7): True (the upper Travel's extra post gets its city's bonuses too) or False.
- `caravan_capacity` (Q17): 2 goods per caravan (1 or 3 allowed).
- `caravan_oasis_completion` (Q21): True (a route may be completed on an oasis) or False.

Setup: the start player is random; 8 coins and 3 camels each; one random starting contract each (the
unused ones are boxed); 3 goal cards each, one kept (in turn order, after the character draft); players + 1
characters revealed (the 7 base characters, plus the 4 Caravans characters with the option), the last
player picks first, then counter-clockwise. Black dice 4/5/6 and neutral dice per player count (2 players:
1s on Khan spaces 1-2 and on one space of each special city, a 5 on the lower Book III space; 3 players: a
1 on Khan space 1). Mailin gets 3 coins and a second figure; Donata chooses her 3 figures after everyone.

Round start (every round, round 1 included): offer tiles and action-area city cards renewed (from round 2),
route tiles flipped up, everyone rolls 5 dice, then in turn order: "!" bonuses (Abha's 2 coins, bonus
markers, special cities, improved seals; Mailin doubles one marker), compensation (15 - total as any
coin/camel mix), Isabella's face and pair bonuses. Turn order runs from the first player; a player without
dice is skipped; the round ends when every die is used; after round 5 comes final scoring (tie: most camels,
then shared).

Decisions (each a finite list with stable ids; the first is always the safe fallback):
- turn menu (first level): `end` (once the normal action is done or no dice remain), `bag` (the money bag),
  `complete:<contract>[:<goods>]`, `improve:<seal>`, `vidal:set`, `outpost:<tile>` (Filippo),
  `claim:<tile>:<city>` and `caravan:<n>:complete` (Caravans), `black` (3 camels, once per turn), `reroll`
  (1 camel), `adjust` (2 camels), and the normal action's space `place:<space>` (book1, book2, book3a,
  book3b, khan, seals, travel1/2/3, contracts, BAL-1 ... BAG-2, card-<slot>).
- second level: `place:<space>:<dice>` (dice are tokens: c4 own colour showing 4, b3 black, F2 Donata's
  figure of colour 2, a value-6 die), `bag:<die>:coins|camels|jade`, `reroll:<die>`, `adjust:<die>:+1|-1`.
- follow-up choices: `offer:free1|free2|jade1|jade2`, `seal:<seal>`, `route:[f<n>:]<end>:<cost>` /
  `move:stop` / `skip` (a movement; Mailin may then move her other figure with the steps left, or stop),
  `extra:<city>|none` (upper Travel), `relocate:<city>`, `oasis:<c>coins+<k>camels` (Möngke),
  `take:<city>:<slot>` / `done` (the Contracts action), `contract:take:<city>:<slot>` / `decline` /
  `discard:<contract>` (one contract as a bonus, or room made for one), `good:<g>`,
  `goods:<g1>+<g2>`, `marker:<id>` (CB7), `double:<city>` (Mailin), `times:<n>`, `ex:<exchange>:<n>`,
  `city:<city>[+<city>]` (city cards), `comp:<c>coins+<k>camels`, `pairs:...` (Isabella), `pick:<char>`,
  `keep:<goal>`, `figures:<c1>+<c2>+<c3>` (Donata), `load:<goods>`, `cstep:[<n>:]<node>` / `stop`,
  `double|upgrade|sell:<good>`, `return:<tile>` (Caravans).
  A choice with exactly one possibility is taken without asking. Ids have no spaces and no id belongs to
  two kinds: where two kinds would share an id, the rarer kind's id starts with its kind's name
  (`move:stop`, `contract:take:XIA:1`). Records made before that rename (a movement's `stop`, a bonus
  contract's `take:<city>:<slot>`) replay by the new ids (`Mp2State.upgrade_action_id`).

Choices beyond the reference (documented deviations):
- Jade stands in automatically for coins and camels a player lacks (never for goods); a player never
  spends jade on a cost its own coins and camels cover.
- A movement is chosen as a whole: its end and its total route cost, keeping per end only the
  cost-Pareto-optimal ways (fewer steps on a tie); walks may go back and forth. The upper Travel's extra
  post is offered in the cities entered on the chosen way, and Möngke's oases are those it enters. For
  Möngke a step runs from a location through any oases to the next city (or ends on an oasis).
- With dice left but no normal action possible, a money-bag use counts as the turn's normal action.
- Khan's Favor sub-spaces are separate spaces, so Donata's +2 camels never comes from them; her figures
  count as their colour on the space they activate (Q16).
- Beijing's Dragon serves only to claim route tiles: a caravan is never placed in Beijing.
- A caravan moves one location per step (Möngke's oasis rule is his figure's, not his caravan's).
- Isabella converts pairs in one decision at round start; every die then pays its face bonus.
- The upper Travel's extra post and a reward's move may be declined (`extra:none`, `skip`).
- A caravan's moves are offered right after the book action that allows them (still bonus actions).
- A contract drawn from the pile as a reward is public, even when it is sent back to the pile's bottom.
- Mailin claims and completes routes with either figure.
- Step cap: after 12000 decisions the game ends with final scoring, reason "step_cap" (random play ends
  far below it).

Hidden information: goal cards (a seat sees only its own three and the one it kept), the order of the
contract pile's unseen top (discards return to its public bottom), the city-card deck, and each offer-tile
pile below its visible next tile together with its boxed tile.

Code map: the state `Mp2State` (a `common.family.FamilyState`) is one inheritance chain, each link calling
only those below it: `setup_state.py` (constants, setup, rounds) <- `movement.py` (rewards, movement,
arrivals, caravans) <- `placement.py` (dice placement) <- `turn.py` (the turn menu) <- `rules.py` (`Mp2State`:
saved fields, views, hidden re-deal; the import point); `effects.py` one handler per effect kind (its payload
`TypedDict`, the actions it offers, how it resolves), registered in `EFFECTS` (the kinds both family games
share are in `common.family_effects`); `tables.py` the data; `scoring.py` final scoring; `heuristic.py` the
bots' evaluation; `describe.py` the action words, final screen and progress (with `words.py`, the names and
event words, and `drawn_board.py`, the drawn board); this module the spec and the text frame.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine_service.games.base import GameResult, GameSpec, GameState, JsonDict, OptionSpec, Progress
from engine_service.games.mp2 import describe
from engine_service.games.mp2.heuristic import evaluate
from engine_service.games.mp2.render import render
from engine_service.games.mp2.rules import PRIVATE_FIELDS, STEP_CAP, Mp2State, deal_hidden
from engine_service.games.rng import ChanceRng


class Mp2Spec(GameSpec):
    game_id = "mp2-v1"
    state_class = Mp2State
    name = "Marco Polo II: In the Service of the Khan"
    min_players = 2
    max_players = 4
    options = (
        OptionSpec(
            "caravans", False, "The Caravans expansion: route tiles, caravans, 4 characters.", (False, True)
        ),
        OptionSpec(
            "special_city_repeat",
            "by_die",
            "Q4: an improved seal's bonus at its special city once for a die of 1-3 and twice for 4-6 "
            "(by_die), or once on the first space and twice on the second (by_space).",
            ("by_die", "by_space"),
        ),
        OptionSpec(
            "bonus_copy_scope",
            "markers",
            "Q6: CB7, CC03 and Mailin's doubling copy only the board's bonus markers (markers) or also the "
            "special cities' bonuses (with_special).",
            ("markers", "with_special"),
        ),
        OptionSpec(
            "extra_post_bonus",
            True,
            "Q7: the upper Travel's extra post takes its city's bonuses (True) or none (False).",
            (True, False),
        ),
        OptionSpec("caravan_capacity", 2, "Q17: goods a caravan carries (at least 1).", (2, 1, 3)),
        OptionSpec(
            "caravan_oasis_completion",
            True,
            "Q21: a route may be completed on an oasis (True) or only in a city (False).",
            (True, False),
        ),
    )
    summary = (
        "Dice placement, contracts and travel across Asia for the Khan; 2-4 players; The Caravans option."
    )
    turn_cap_note = f"{STEP_CAP} decisions; then final scoring, reason step_cap"
    # Greedy-policy rollouts of the 6 best moves, 16 simulations (bench/results/mp2-series-3p*.json).
    search_settings = {"method": "rollout", "iterations": 16}

    def option_variants(self, num_players: int) -> list[JsonDict]:
        return [{}, {"caravans": True}]

    def _new_state(self, num_players: int, rng: ChanceRng, options: JsonDict) -> GameState:
        state = Mp2State(num_players=num_players, options=options, rng=rng)
        state.setup()
        return state

    def sample_state(self, observation: Mapping[str, Any], rng: ChanceRng) -> GameState:
        n = int(observation["num_players"])
        seat = int(observation["seat"])
        options = self.resolve_options(observation["options"], n)
        state = Mp2State(num_players=n, options=options, rng=ChanceRng(rng.next_u64()))
        state.step = int(observation["step"])
        payload = {name: observation[name] for name in Mp2State._FIELDS if name not in PRIVATE_FIELDS}
        payload["goals"] = [
            str(observation["goal"]) if s == seat else ("?" if observation["goal_kept"][s] else "")
            for s in range(n)
        ]
        payload["goal_offers"] = [
            list(observation["goal_offer"]) if s == seat else ["?"] * int(observation["goal_offer_counts"][s])
            for s in range(n)
        ]
        payload["pile"] = list(observation["unseen_contracts"]) + list(observation["pile_known"])
        payload["card_deck"] = list(observation["unseen_cards"])
        piles: dict[str, list[str]] = {}
        box: dict[str, str] = {}
        for numeral, unseen in observation["unseen_tiles"].items():
            nxt = observation["offer_next"][numeral]
            rest = list(unseen)
            box[numeral] = rest.pop()
            piles[numeral] = ([nxt] if nxt else []) + rest
            if len(piles[numeral]) != int(observation["offer_pile_sizes"][numeral]):
                raise ValueError("observation is inconsistent: offer tiles do not fill the piles")
        payload["offer_piles"] = piles
        payload["offer_box"] = box
        if len(payload["pile"]) != int(observation["pile_size"]):
            raise ValueError("observation is inconsistent: contracts do not fill the pile")
        state.load_payload(payload)
        deal_hidden(
            state, seat, rng, own_goal=str(observation["goal"]), own_offer=list(observation["goal_offer"])
        )
        return state

    def heuristic(self, state: GameState, seat: int) -> float:
        """Points plus holdings converted to points (see `heuristic.py`); only the seat's own goal used."""
        assert isinstance(state, Mp2State)
        return float(evaluate(state, seat))

    def render_view(self, view: Mapping[str, Any]) -> str:
        return render(view)

    def board(self) -> JsonDict | None:
        return describe.board()

    def describe_event(self, event: Mapping[str, Any]) -> str:
        return describe.describe_event(event)

    def describe_action(self, state: GameState, seat: int, action_id: str) -> str:
        assert isinstance(state, Mp2State)
        return describe.describe_action(state, seat, action_id)

    def describe_result(self, state: GameState, result: GameResult) -> list[str]:
        assert isinstance(state, Mp2State)
        return describe.describe_result(state, result)

    def progress(self, state: GameState) -> Progress:
        assert isinstance(state, Mp2State)
        return describe.progress(state)


SPEC = Mp2Spec()
Mp2State.spec = SPEC

__all__ = ["SPEC", "Mp2Spec", "Mp2State"]
