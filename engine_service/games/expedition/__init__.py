"""Marco Polo Expedition (`expedition-v1`): the spec of the game as implemented.

Sources: the rule text `shared/rules/expedition.txt`; board data and clarifications
`shared/game-data/expedition.md`. The printed track is not public: `data/track.json` holds a
RECONSTRUCTED layout (29 spaces, requirements and chest places) consistent with every FOUND fact and with
the rulebook's ballast example; a corrected layout is a change to that file only.

Components: 55 cards (5 colours x 4 goods x 2, plus 3 caravan leaders per colour); gold counted as a number
(chests are fungible: ballast costs 1 gold and needs at least 1); every player starts with 3 gold.

Players: 2-5. With 2 players each player has two pieces (placed alternately from Hormus, start player
first) and moves one of them per turn; option `strategic_two_player` lets a player move both in any order
(still one ballast per turn). With 3-5 players, one piece each. Seat 0 is the start player, on Hormus; the
others stand on the next free spaces in seat order.

A turn is a sequence of decisions (each a finite list with stable ids):
- movement: `move:p<piece>:<types>` enters the piece's next free space (occupied spaces are skipped) paying
  the named cards (one action per distinct multiset of card types that meets the space's requirement);
  `ballast:p<piece>` gives up 1 gold to enter the next free space without cards, once per turn, only when a
  piece of another player stands further along; `pass` (nothing moved) or `stop` ends the movement.
- draw: `draw:deck` (the top card; an empty draw pile is replaced by the shuffled discards) or
  `take:<type>` from the open display (refilled from the draw pile). With no card anywhere, no draw.
Requirement types: ANY1, SAME2/3/4, FOURGOODS, LEAD2, COLOR3, COLOR5 (see `cards.REQUIREMENTS`).

Kantshou: the first piece to enter it ends the mover's movement for the turn; the intermediate scoring
happens at the end of that turn (after the draw): pieces on the six leg-1 scoring spaces earn their values,
then stand on Kantshou, which from then on holds any number of pieces. A piece that later enters a leg-1
scoring space is put on Kantshou at once, scores nothing for leg 1 and stops (its other piece, in the
strategic variant, may still move). A board chest goes to the first piece to enter its space.

End: the first piece to enter Daidu ends the mover's movement (the rule text: "the game ends as soon as
the first player piece reaches ... Daidu"; in the strategic variant the other piece moves no further); at
the end of that turn (after the draw) the leg-2 scoring spaces pay their values. Most
gold wins; ties go to the player whose leading piece is furthest along (Daidu first); seats equal on both
share the rank. Turn cap: after 400 turns (all players' turns counted) the game ends as if Daidu had been
reached: the leg-2 scoring spaces pay, result reason "turn_cap".

Rules revisions (`GameSpec.revision`; a match record names the one it was played under, 1 when it names
none, and replays under it): 1, the first; 2 (current), entering Daidu ends the movement. Under revision 1
a strategic 2-player game let the player go on moving the other piece after one entered Daidu. The two
differ only in the strategic variant, but every state of revision 2 carries its revision (and so hashes
differently from revision 1).

Hidden information: hands (a seat sees its own; others' hand sizes and the cards publicly taken from the
display and not yet possibly played are public as `known_cards`), and the draw pile's order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from engine_service.games.base import GameResult, GameSpec, GameState, JsonDict, OptionSpec, Progress
from engine_service.games.expedition import describe
from engine_service.games.expedition.cards import CARD_TYPES, COLORS, GOODS, LEADER, can_pay, kind_of
from engine_service.games.expedition.rules import (
    DAIDU,
    KANTSHOU,
    LEG1_SCORING,
    LEG2_SCORING,
    RULES_REVISION,
    SPACES,
    TURN_CAP,
    ExpeditionState,
)
from engine_service.games.rng import ChanceRng

# Heuristic weights (gold per unit), tuned with seeded series against the random bot.
PROGRESS_VALUE = 1.2  # per track space
SCORING_WEIGHT = 0.4  # times the value of the scoring space a piece stands on
PAYABLE_VALUE = 0.4  # the hand can pay for the piece's next free space
CARD_VALUE = 0.5  # the first card in hand; each further card is worth CARD_DECAY times the one before
CARD_DECAY = 0.9
DIVERSITY_VALUE = 0.1  # per good held, and per leader up to two


class ExpeditionSpec(GameSpec):
    game_id = "expedition-v1"
    name = "Marco Polo Expedition"
    min_players = 2
    max_players = 5
    options = (
        OptionSpec(
            "strategic_two_player",
            False,
            "2 players only: move both pieces in any order within a turn (one ballast per turn).",
            (False, True),
        ),
    )
    state_class = ExpeditionState
    revision = RULES_REVISION
    summary = "A caravan race along a 29-space track paid with goods and leader cards; 2-5 players."
    turn_cap_note = f"{TURN_CAP} turns; then the leg-2 scoring spaces pay as at Daidu"

    def option_variants(self, num_players: int) -> list[JsonDict]:
        return [{}, {"strategic_two_player": True}] if num_players == 2 else [{}]

    def _new_state(self, num_players: int, rng: ChanceRng, options: JsonDict) -> GameState:
        state = ExpeditionState(num_players=num_players, options=options, rng=rng)
        state.setup()
        return state

    def sample_state(self, observation: Mapping[str, Any], rng: ChanceRng) -> GameState:
        n = int(observation["num_players"])
        seat = int(observation["seat"])
        options = {"strategic_two_player": bool(observation["strategic_two_player"])}
        state = ExpeditionState(num_players=n, options=options, rng=ChanceRng(rng.next_u64()))
        state.step = int(observation["step"])
        ids_by_type: dict[str, list[int]] = {}
        for card, card_type in enumerate(CARD_TYPES):
            ids_by_type.setdefault(card_type, []).append(card)

        def take(types: list[str]) -> list[int]:
            return [ids_by_type[t].pop() for t in types]

        players = observation["players"]
        state.hands[seat] = take(list(observation["hand"]))
        state.display = take(list(observation["display"]))
        state.discard = take(list(observation["discard"]))
        for other in range(n):
            if other != seat:
                state.hands[other] = take(list(players[other]["known_cards"]))
        unknown = sorted(c for ids in ids_by_type.values() for c in ids)
        rng.shuffle(unknown)
        for other in range(n):
            if other != seat:
                missing = int(players[other]["hand_count"]) - len(state.hands[other])
                state.hands[other] += unknown[:missing]
                unknown = unknown[missing:]
        state.deck = unknown
        if len(state.deck) != int(observation["draw_pile"]):
            raise ValueError("observation is inconsistent: card counts do not add up to 55")
        state.pieces = [int(p["space"]) for p in observation["pieces"]]
        state.owners = [int(p["seat"]) for p in observation["pieces"]]
        state.gold = [int(p["gold"]) for p in players]
        state.known = [list(p["known_cards"]) for p in players]
        state.board_chests = [int(observation["board_chests"].get(str(i), 0)) for i in range(len(SPACES))]
        state.kantshou_scored = bool(observation["kantshou_scored"])
        state.kantshou_pending = not state.kantshou_scored and KANTSHOU in state.pieces
        state.daidu_reached = DAIDU in state.pieces
        state.turn_seat = int(observation["current_seat"]) if observation["current_seat"] is not None else 0
        state.turns = int(observation["turn"])
        state.phase = str(observation["phase"])
        state.end_reason = observation.get("end_reason")
        this_turn = observation["this_turn"]
        state.moved = bool(this_turn["moved"])
        state.ballast_used = bool(this_turn["ballast_used"])
        state.locked_piece = this_turn["locked_piece"]
        state.stopped = list(this_turn["stopped_pieces"])
        state.movement_over = bool(this_turn["movement_over"])
        state.events = [dict(e) for e in observation["events"]]
        return state

    def heuristic(self, state: GameState, seat: int) -> float:
        """Gold, plus track progress and the scoring space a piece stands on, plus a hand valued by what it
        can pay for next and with every further card worth a little less (so a big hand is spent)."""
        assert isinstance(state, ExpeditionState)
        value = float(state.gold[seat])
        if state.is_over():
            return value
        hand = state.hand_counter(seat)
        for piece in state.pieces_of(seat):
            position = state.pieces[piece]
            value += PROGRESS_VALUE * position
            if position in LEG2_SCORING or (position in LEG1_SCORING and not state.kantshou_scored):
                value += SCORING_WEIGHT * SPACES[position]["score"]
            target = state.next_free(position)
            if target is not None and can_pay(hand, SPACES[target]["requirement"]):
                value += PAYABLE_VALUE
        count = len(state.hands[seat])
        value += CARD_VALUE * (1 - CARD_DECAY**count) / (1 - CARD_DECAY)
        kinds = Counter(kind_of(card_type) for card_type in hand.elements())
        value += DIVERSITY_VALUE * sum(1 for g in GOODS if kinds[g]) + DIVERSITY_VALUE * min(kinds[LEADER], 2)
        return value

    def board(self) -> JsonDict:
        return describe.board()

    def describe_event(self, event: Mapping[str, Any]) -> str:
        return describe.describe_event(event)

    def describe_action(self, state: GameState, seat: int, action_id: str) -> str:
        return describe.describe_action(state, seat, action_id)

    def describe_result(self, state: GameState, result: GameResult) -> list[str]:
        return describe.describe_result(state, result)

    def progress(self, state: GameState) -> Progress:
        return describe.progress(state)

    def render_view(self, view: Mapping[str, Any]) -> str:
        lines = [
            f"{self.name} - step {view['step']}, turn {view['turn']}, phase {view['phase']}, "
            f"to play: {view['current_seat'] if view['current_seat'] is not None else '-'}"
        ]
        on_space: dict[int, list[str]] = {}
        for p in view["pieces"]:
            on_space.setdefault(p["space"], []).append(f"P{p['piece']}(seat {p['seat']})")
        for space in SPACES:
            idx = space["index"]
            mark = " ".join(on_space.get(idx, []))
            chest = view["board_chests"].get(str(idx))
            label = space["name"] or ""
            score = f" scores {space['score']}" if space["score"] else ""
            lines.append(
                f"  {idx:2d} {label:9s} {space['requirement']:9s}{score:10s}"
                f"{' chest ' + str(chest) if chest else '':9s} {mark}"
            )
        lines.append("players:")
        for p in view["players"]:
            known = f", known {', '.join(p['known_cards'])}" if p["known_cards"] else ""
            lines.append(f"  seat {p['seat']}: {p['gold']} gold, {p['hand_count']} cards{known}")
        if view.get("hand") is not None:
            lines.append(f"hand (seat {view['seat']}): {', '.join(view['hand'])}")
        if view.get("hands") is not None:
            for seat, hand in enumerate(view["hands"]):
                lines.append(f"hand of seat {seat}: {', '.join(hand)}")
        lines.append(
            f"display: {', '.join(view['display'])}; draw pile {view['draw_pile']}, "
            f"discard {len(view['discard'])}"
        )
        if view["events"]:
            last = view["events"][-1]
            lines.append(f"last event: {last}")
        return "\n".join(lines)


SPEC = ExpeditionSpec()
ExpeditionState.spec = SPEC

__all__ = ["COLORS", "SPEC", "ExpeditionSpec", "ExpeditionState"]
