"""The Voyages of Marco Polo (`voyages-v1`): the complete base game, 2-4 players, as implemented.

Sources: the rule text `shared/rules/voyages.txt`; data and every rule resolution from
`shared/game-data/voyages.md` (the reference), whose recommended resolutions (D1-D26) are followed. Data
files (`data/*.json`) keep the reference's ids: map nodes and routes, bazaar table, travel costs, 44
contracts, 31 city cards, 18 goals, 10 outpost bonuses, 6 small-city bonuses, 8 characters.

Options (defaults first):
- `characters`: `first_game` (seat 1 Raschid, 2 Matteo, 3 Berke, 4 Mercator), `draft` (players + 1 revealed
  at random, the last seat picks first, then reverse seat order), `random` (dealt at random).
- `random_city_bonuses` (expert): False; True places the 6 small-city bonuses at random.
- `goal_draft` (expert 4-keep-2): False; True deals 4 goal cards and each seat keeps 2 (in seat order).
- `johannes_jump_cost` (D5): `free` (an oasis-to-oasis jump never pays a route's extra cost) or `printed`
  (a jump along a printed route, only Oasis B-C, pays its 5 coins).
- `city_card_timing` (D12): `next_turn` (a city card can be used from the turn after its post was placed)
  or `immediate` (as soon as the post stands).
- `exchange_direction` (D13): `same` (cards 19 and 27 keep the first repetition's direction; card 16
  always does) or `each` (every repetition chooses its direction).

Setup: seat 0 is the start player (7 coins, then 8, 9, 10); 2 camels each; one random starting contract
each (the unused ones are boxed); neutral dice (3 players: a 1 on Khan's Favor space 1; 2 players: 1s on
Khan spaces 1-2 and a die on 5 coins, all staying the whole game); players + 1 black dice; Mercator's copy
follows the player count. Rounds: new start player (the last seat to place on Travel), everyone rolls
(Raschid does not), then in turn order: compensation (15 - total, any coin/camel mix; not Raschid),
small-city bonuses, character income (Matteo: white die rolled with the others + top special contract;
Niccolo 1 camel; Johannes 3 coins). Five rounds, then final scoring; ties go to most camels, then shared.

Decisions (each a finite list with stable ids; the first is always the safe fallback):
- turn menu: `end` (once the main action is done or no dice remain; otherwise `place:coins5` comes first
  when possible), `bonus`, `complete:<contract id>`, and the main action's space `place:<space>` (coins5,
  camels, pepper, silk, gold, khan, contracts, travel, card-<slot>). A menu with only `end` left ends the
  turn by itself.
- second level: after `place:<space>`, the dice `dice:<tokens>[@v]` (tokens such as c4 = own colour showing
  4, b3 black, w6 white, c0 Raschid's unrolled die whose value v is chosen in the id; the fee, if any, is
  in the details); after `bonus`, `bag:<die>` (3 coins), `black` (3 camels, once per turn), `reroll:<die>`
  (1 camel), `adjust:<die>:+1|-1` (2 camels).
- follow-up choices: `column:<k>` (bazaar), `good:<g>`, `goods:<g1>+<g2>`, `take:<space>` / `done`
  (contracts, spaces 1..die, up to two), `discard:<id>`, `decline`, `bonus:coins|camels` (contract spaces
  5-6), `route:[f<n>:]<city>[:via=...]:<c>coins:<k>camels` (travel, moves; Niccolo's second figure may then
  continue with the remaining steps or `stay`), `skip` (decline a move), `relocate:<city>`,
  `times:<n>` / `ex:<exchange>` / `stop` / `city:<city>[+<city>]` / `pay:<g1>+<g2>` / `go` (city cards),
  `xian:<city>`, `comp:<c>coins+<k>camels`, `pick:<character>`, `keep:<goal>+<goal>`.
  A choice with exactly one possibility is taken without asking.
- Sizes over 1,000 random games (2-4 players, every option): largest legal list 36 (a route choice for
  Niccolo's figures), median 3, 99th percentile 14.

Choices beyond the reference (documented deviations):
- Travel and moves are chosen as a whole route outcome (end city, cities passed for Wilhelm, total coins
  and camels), keeping per end only the cost-Pareto-optimal ways; step-by-step paths that cost more for
  the same result are not offered.
- Raschid's unrolled dice show 0 until used. Where no fee is due and the value only caps the strength
  (a lower strength stays choosable in the follow-up) only @6 is offered; on "5 coins" only @1; on an
  occupied space (fee = value) every value; on Khan's Favor every value allowed by the previous die.
- VP are a 0-based running total and may go negative through card 19 (D10).
- Card 30 moves are bought one at a time (2 different goods each), then walked as one movement; card 13's
  moves are priced into the route (2 camels per step). Counted and die-table cards always take the most.
- Step cap: after 6000 decisions the game ends with final scoring, reason "step_cap" (random play ends
  far below it).

Rules revisions (`GameSpec.revision`; a match record names the one it was played under, 1 when it names
none, and replays under it): 1, the first; 2 (current), the `special_to_board` event holds its own copy of
the contracts laid out. Under revision 1 it held the board's list itself, so the logged event lost each
contract taken from the board afterwards, and a clone's event followed the original's board (a search
bot's copies, a state restored from JSON and the one it came from could then hash differently). Play is the
same under both; every state of revision 2 carries its revision (and so hashes differently from revision 1).

Hidden information: goal cards (a seat sees only its own, and its own 4-card offer), the order and content
of the round piles, and the unseen top of the special pile (cards returned to its bottom are public).

Code map: the state `VoyagesState` (a `common.family.FamilyState`) is one inheritance chain, each link calling
only those below it: `setup_state.py` (constants, setup, rounds) <- `movement.py` (rewards, movement, arrivals) <-
`placement.py` (dice placement) <- `turn.py` (the turn menu) <- `rules.py` (`VoyagesState`: saved fields,
views, hidden re-deal; the import point); `effects.py` one handler per effect kind (its payload
`TypedDict`, the actions it offers, how it resolves), registered in `EFFECTS` (the kinds both family games
share are in `common.family_effects`); `tables.py` the data; `scoring.py` final scoring; `heuristic.py` the
bots' evaluation; `describe.py` the words and the drawn board; this module the spec and the text frame.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine_service.games.base import GameResult, GameSpec, GameState, JsonDict, OptionSpec, Progress
from engine_service.games.common.resources import describe as bundle_text
from engine_service.games.rng import ChanceRng
from engine_service.games.voyages import describe as words
from engine_service.games.voyages.heuristic import evaluate
from engine_service.games.voyages.rules import PRIVATE_FIELDS, RULES_REVISION, STEP_CAP, VoyagesState
from engine_service.games.voyages.tables import CHARACTERS, CONTRACTS, GOALS, NODE_NAME, SLUG


class VoyagesSpec(GameSpec):
    game_id = "voyages-v1"
    state_class = VoyagesState
    revision = RULES_REVISION
    name = "The Voyages of Marco Polo"
    min_players = 2
    max_players = 4
    options = (
        OptionSpec(
            "characters",
            "first_game",
            "first_game: the fixed characters of the first game; draft: players + 1 revealed, picked in "
            "reverse seat order; random: dealt at random.",
            ("first_game", "draft", "random"),
        ),
        OptionSpec(
            "random_city_bonuses", False, "Expert: small-city bonuses placed at random.", (False, True)
        ),
        OptionSpec("goal_draft", False, "Expert: deal 4 goal cards, each seat keeps 2.", (False, True)),
        OptionSpec(
            "johannes_jump_cost",
            "free",
            "D5: Johannes' oasis jumps never pay route costs (free) or pay a printed route's cost (printed).",
            ("free", "printed"),
        ),
        OptionSpec(
            "city_card_timing",
            "next_turn",
            "D12: a city card is usable from the turn after its post was placed (next_turn) or at once.",
            ("next_turn", "immediate"),
        ),
        OptionSpec(
            "exchange_direction",
            "same",
            "D13: exchange cards 19 and 27 keep one direction for all repetitions (same) or not (each).",
            ("same", "each"),
        ),
    )
    summary = "Dice placement, contracts and travel along the Silk Road; 2-4 players, 8 characters."
    turn_cap_note = f"{STEP_CAP} decisions; then final scoring, reason step_cap"

    def _new_state(self, num_players: int, rng: ChanceRng, options: JsonDict) -> GameState:
        state = VoyagesState(num_players=num_players, options=options, rng=rng)
        state.setup()
        return state

    def sample_state(self, observation: Mapping[str, Any], rng: ChanceRng) -> GameState:
        n = int(observation["num_players"])
        seat = int(observation["seat"])
        options = self.resolve_options(observation["options"], n)
        state = VoyagesState(num_players=n, options=options, rng=ChanceRng(rng.next_u64()))
        state.step = int(observation["step"])
        payload = {name: observation[name] for name in VoyagesState._FIELDS if name not in PRIVATE_FIELDS}
        own_goals = [int(g) for g in observation["goals"]]
        own_offer = [int(g) for g in observation["goal_offer"]]
        pool = [g for g in sorted(GOALS) if g not in set(own_goals) | set(own_offer)]
        rng.shuffle(pool)
        goals: list[list[int]] = []
        offers: list[list[int]] = []
        for s in range(n):
            if s == seat:
                goals.append(own_goals)
                offers.append(own_offer)
                continue
            offer_size = int(observation["goal_offer_counts"][s])
            kept_size = int(observation["goal_counts"][s])
            size = max(offer_size, kept_size)
            drawn, pool = pool[:size], pool[size:]
            offers.append(sorted(drawn[:offer_size]))
            goals.append(sorted(drawn[:kept_size]))
        unseen = [int(c) for c in observation["unseen_contracts"]]
        rng.shuffle(unseen)
        hidden = int(observation["special_hidden"])
        payload["goals"] = goals
        payload["goal_offers"] = offers
        payload["special"] = unseen[:hidden] + [int(c) for c in observation["special_known"]]
        rest = unseen[hidden:]
        piles = []
        for size in observation["round_pile_sizes"]:
            piles.append(rest[: int(size)])
            rest = rest[int(size) :]
        if rest:
            raise ValueError("observation is inconsistent: unseen contracts do not fill the hidden piles")
        payload["round_piles"] = piles
        state.load_payload(payload)
        return state

    def heuristic(self, state: GameState, seat: int) -> float:
        """Points plus holdings converted to points (see `heuristic.py`); only the seat's own goals used."""
        assert isinstance(state, VoyagesState)
        return evaluate(state, seat)

    def render_view(self, view: Mapping[str, Any]) -> str:
        return render(view)

    # Replay words and the drawn board: `describe.py`.
    def board(self) -> JsonDict | None:
        return words.board()

    def describe_event(self, event: Mapping[str, Any]) -> str:
        return words.describe_event(event)

    def describe_action(self, state: GameState, seat: int, action_id: str) -> str:
        return words.describe_action(state, seat, action_id)

    def describe_result(self, state: GameState, result: GameResult) -> list[str]:
        return words.describe_result(state, result)

    def progress(self, state: GameState) -> Progress:
        return words.progress(state)


def _contracts(ids: list[int]) -> str:
    parts = []
    for cid in ids:
        c = CONTRACTS[cid]
        reward = {k: v for k, v in c["reward"].items()}
        parts.append(f"#{cid}[{bundle_text(c['cost'])} -> {bundle_text(reward)}]")
    return " ".join(parts) if parts else "-"


def render(view: Mapping[str, Any]) -> str:
    """A readable text frame of an observation or spectator view."""
    lines = [
        f"The Voyages of Marco Polo - step {view['step']}, round {view['round']}/5, phase {view['phase']}, "
        f"start player {view['start_player']}, to decide: {view['current_seat']}"
    ]
    if view["pending"]:
        lines.append(f"pending: {view['pending'][0]['t']} (seat {view['pending'][0]['seat']})")
    for seat in range(int(view["num_players"])):
        res = view["res"][seat]
        char = CHARACTERS[view["chars"][seat]]["name"] if view["chars"][seat] else "-"
        lines.append(
            f"seat {seat} {char}: {res['vp']} VP, {res['coins']} coins, {res['camels']} camels, "
            f"{res['pepper']} pepper, {res['silk']} silk, {res['gold']} gold; dice {' '.join(view['dice'][seat]) or '-'}"
        )
        lines.append(
            f"    at {', '.join(NODE_NAME[f] for f in view['figures'][seat])}; posts "
            f"{', '.join(SLUG[p] for p in view['posts'][seat]) or '-'} ({view['posts_left'][seat]} left); "
            f"contracts {_contracts(view['active'][seat])}; completed {len(view['done'][seat])}"
        )
    lines.append(f"board contracts: {_contracts(view['board'])}")
    occupied = {k: v for k, v in view["spaces"].items() if v}
    lines.append(f"spaces: {occupied or '-'}; khan {view['khan']}; black dice left {view['black_left']}")
    lines.append(
        f"city cards: {view['cards']} used {view['card_used']}; outposts {view['outposts']}; "
        f"city bonuses {view['city_bonus']}"
    )
    lines.append(
        f"piles {view['round_pile_sizes']}; special pile {view['special_hidden']} unseen + {view['special_known']}"
    )
    if view.get("seat") is not None:
        lines.append(f"your goals: {view['goals']} {[GOALS[g]['vp'] for g in view['goals']]}")
    if view.get("final"):
        lines.append(f"final scoring: {view['final']}")
    if view["events"]:
        lines.append(f"last event: {view['events'][-1]}")
    return "\n".join(lines)


SPEC = VoyagesSpec()
VoyagesState.spec = SPEC

__all__ = ["SPEC", "VoyagesSpec", "VoyagesState"]
