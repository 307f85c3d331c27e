"""Marco Polo: Dragonda (`dragonda-v1`): the spec of the game as implemented.

Sources: the rule text `shared/rules/dragonda.txt` (Clem Toys, 1982); map, trade table, cards and the 23
resolved ambiguities `shared/game-data/dragonda.md`. The printed map, trade sheet and card texts are not
public, so most data is AUTHORED: `data/map.json` (52 places, 66 land dots, 42 sea nodes, 6 junctions, zones),
`data/trade.json` (buy/sell per place and good), `data/events.json` (E01-E40) and `data/adventures.json`
(A01-A20 attacks, D01-D16 defences) mark every FOUND item (the zone key, 12 place names, the four printed
trade cells, E01's text, DESERT and OASIS) and name the rest AUTHORED. A correction is a data change.

Players 2-4, each with 230 zecchini, a token in Venice, 0 XP. Play order: 2d6 per seat in seat order,
descending totals, tied seats re-roll among themselves. Then the 76 cards (40 Events + 36 Adventures, one
mixed deck) are shuffled, and in play order each player makes opening purchases in Venice: one means
(`means:foot|horse|caravan|ship`, no upkeep now), then goods at Venice prices and up to 2 Papal Letters, cargo
within the chosen means' capacity (`buy:<good>:<q>`, `buy:PL`, `done:trade`).

Means (the rule text's prose values): foot 0z/upkeep 0/3 goods/4 spaces (land), Horse 6/3/5/9 (land), Caravan
16/8/12/6 (land), Ship 100/30/16/10 (sea, bought only in a port). Horse and Caravan can be bought on any land
space. One means at a time; changing gives no refund.

A turn (decisions in brackets, every list finite with stable ids; the first action is always the safe one):
0. A stop pending from an attack blocks this turn's move (then cleared).
1. Draw the top card. An Event resolves only if the token's zone (the zone of its space, ports in their land
   zone) is on the card; it then goes under the deck. A "PL/CT => X" option is offered before rolling
   [`decline` | `use:PL`]; a "cancels r-s" option after a roll in r-s [`accept:roll` | `cancel:PL`]. 2d6 bands;
   E01's printed overlap is read 2-6 / 7-10 / 11-12. E40 (ALL) hits every player in its zones, drawer first,
   one roll each; for others its stop aims at their next turn. An Adventure card joins the hand.
2. [`done:cards` | `discard:<CARD>` | `attack:<CARD>:s<seat>`] (a card by its name, spaces as underscores:
   `GOOD_FORTUNE`): at most one attack per turn, from hand, at a legal target (its condition holds and some
   effect would apply); discards go under the deck; more than 3 cards in hand must be cut (no `done:cards`
   then). The attacked seat answers at once, off turn [`accept:attack` | `defend:<CARD>`]; a matching
   defence (or GOOD FORTUNE) cancels the whole attack. An attacked seat with an empty hand (a public count)
   is not asked.
3. Move unless blocked, 0 to M spaces along edges (M = the means' movement, halved rounded down once after
   a FALSE GUIDE): land means on land edges, a Ship on sea edges and ports; any direction, revisits allowed.
   One decision [`stop` | `move:<space>` | `move:<space>:via:<places>`]: every space entered counts as
   visited, and only the end and the newly entered required cities and bonus places matter to the rules,
   so each (end, places entered) pair is one action, walked along the first shortest such path (`path` in
   its details). The first player to enter NAG, and the first to enter MAN or PAL, gains 5 XP. On a sea-only
   port (ADE, NAG, MAN, PAL) without a Ship and under 100z: [`passage:<port>`] to the nearest land-linked
   port (ADE->ALX, NAG->QUI, MAN->ZAI, PAL->MAL).
4. Trade on a named place: [`sell:<good>:<q>` | `buy:<good>:<q>` | `buy:PL` in VEN | `buy:CT` in PEC |
   `done:trade`], quantities from 1, 2, 3, 5, 10 and the maximum. Sell = buy - 2 everywhere.
5. Transport: [`keep` (pay upkeep) | `give_up` (on foot: `done:transport`) | `buy_means:<m>`] (a means
   bought now pays no upkeep); a Ship at sea pays upkeep without a decision. Then cargo above capacity goes
   back unpaid [`drop:<good>`].
6. Win check: on VEN with >= 51 XP and PEC, SAM, DAM, ORM, YUN all visited wins at once.

Action ids: a verb and its arguments joined by colons, no spaces, each kind with ids of its own; the
grammar of every kind, with examples, is `data/reference.json`. Records made before the ids followed it
(`done` for every step's end, `accept` for both acceptances, `means:<m>` in the transport step, card names
with spaces) replay: `DragondaState.upgrade_action_id` maps each to its current id.

Losing a means (Events LOSE H/C / LOSE SHIP, DESERT) keeps at most 3 goods [`drop:<good>`, the owner's
choice]; a Ship wrecked at sea washes ashore on the nearest port. A demand that cannot be paid in full is
not paid and costs 1 XP (XP never below 0); an unpayable upkeep on land forces giving the means up. Passes:
5z, at most 2 of each per player, supply 8 + 8, a used pass returns to the supply. Stay still: a stop aimed
at a seat's next turn is void if one is already pending or its last turn was blocked; an own Event's stop
blocks this turn unless the last turn was blocked; blocked turns still draw, trade and pay upkeep.

Choices beyond the sources:
- Trading: within one trade step a good is either bought or sold, not both (a same-city round trip always
  loses 2 per piece), and purchases stop at the largest capacity that could carry them at the end of the turn
  (16 in a port, 12 elsewhere, the chosen means' capacity in the opening): this keeps every trade finite.
- Re-buying the means already held is not offered (its price always exceeds its upkeep).
- A goods return where every piece is of one good, and a forced give-up, need no decision.
- FALSE GUIDE waits for the target's next move that is not blocked; E40 hits every player in its zones even
  when the drawer is elsewhere.
- Cards go under the deck as they are resolved or played; the deck never runs out and is never reshuffled.

End: a victory ends the game (result reason "completed"). Otherwise after round `round_cap` (default 150;
a round is one turn per player) the game ends with reason "turn_cap". Score = victory conditions met out of 6 (51 XP and each
required city) plus 1 for the winner; ties by XP, then fewest steps to VEN on the land+sea graph, then
zecchini; seats equal on all share the rank.

Hidden information: each seat's Adventure hand (others see its size) and the deck order. Money, XP, cargo,
passes, means and positions are public (the transport sheet is on the table). The log never names a card
drawn or discarded face down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine_service.games.base import GameResult, GameSpec, GameState, JsonDict, OptionSpec, Progress
from engine_service.games.dragonda import describe
from engine_service.games.dragonda.board import BOARD, GOODS, PASSES
from engine_service.games.dragonda.heuristic import heuristic
from engine_service.games.dragonda.pending import DEFENCE
from engine_service.games.dragonda.rules import DEFAULT_ROUND_CAP, DragondaState, deal_hidden
from engine_service.games.rng import ChanceRng

ROUND_CAPS = (50, 100, DEFAULT_ROUND_CAP, 200)


class DragondaSpec(GameSpec):
    game_id = "dragonda-v1"
    name = "Marco Polo: Dragonda"
    min_players = 2
    max_players = 4
    options = (
        OptionSpec(
            "round_cap",
            DEFAULT_ROUND_CAP,
            "Rounds after which the game ends on the tie-break (conditions met, XP, steps to Venice, zecchini).",
            ROUND_CAPS,
        ),
    )
    summary = (
        "A 2-4 player trading race from Venice to Beijing and back: 51 experience, five cities, "
        "transport means, a trade table, zone events and attack/defence cards."
    )
    state_class = DragondaState
    turn_cap_note = f"{DEFAULT_ROUND_CAP} rounds by default (option round_cap); then the tie-break ranks"
    # Greedy-policy rollouts of the 2 best moves, 32 simulations (bench/results/dragonda-series-3p-seed*.json).
    search_settings = {"method": "rollout", "iterations": 32, "candidates": 2}

    def _new_state(self, num_players: int, rng: ChanceRng, options: JsonDict) -> GameState:
        state = DragondaState(num_players=num_players, options=options, rng=rng)
        state.setup()
        return state

    def sample_state(self, observation: Mapping[str, Any], rng: ChanceRng) -> GameState:
        n = int(observation["num_players"])
        seat = int(observation["seat"])
        state = DragondaState(
            num_players=n, options={"round_cap": int(observation["round_cap"])}, rng=ChanceRng(rng.next_u64())
        )
        state.step = int(observation["step"])
        players = observation["players"]
        state.order = [int(s) for s in observation["order"]]
        state.start_rolls = [list(r) for r in observation["start_rolls"]]
        state.money = [int(p["money"]) for p in players]
        state.xp = [int(p["xp"]) for p in players]
        state.pos = [str(p["pos"]) for p in players]
        state.means = [str(p["means"]) for p in players]
        state.cargo = [{g: int(p["cargo"][g]) for g in GOODS} for p in players]
        state.passes = [{k: int(p["passes"][k]) for k in PASSES} for p in players]
        state.visited = [list(p["visited"]) for p in players]
        state.still_pending = [bool(p["still_pending"]) for p in players]
        state.blocked_last = [bool(p["blocked_last"]) for p in players]
        state.false_guide = [bool(p["false_guide"]) for p in players]
        state.supply = {k: int(v) for k, v in observation["supply"].items()}
        state.bonus = {k: (None if v is None else int(v)) for k, v in observation["bonus"].items()}
        state.phase = str(observation["phase"])
        state.turn_index = (
            state.order.index(int(observation["active"])) if observation["active"] is not None else 0
        )
        state.round = int(observation["round"])
        turn = dict(observation["turn"])
        turn["traded"] = dict(turn["traded"])
        state.turn = turn
        state.stack = [dict(f) for f in observation["stack"]]
        state.winner = observation["winner"]
        state.end_reason = observation["end_reason"]
        state.log = [dict(e) for e in observation["log"]]
        own = sorted(observation["hand"])
        state.hands = [[] for _ in range(n)]
        state.hands[seat] = list(own)
        others = [s for s in range(n) if s != seat]
        for s in others:
            state.hands[s] = [""] * int(players[s]["hand_count"])  # sizes only; dealt below
        pool = [c for c in BOARD.all_cards if c not in own]
        deal_hidden(state, others, pool, rng)
        if len(state.deck) != int(observation["deck_count"]):
            raise ValueError("observation is inconsistent: hands and deck do not add up to 76 cards")
        return state

    def heuristic(self, state: GameState, seat: int) -> float:
        assert isinstance(state, DragondaState)
        return heuristic(state, seat)

    # Replay words and pictures: engine_service/games/dragonda/describe.py.
    def board(self) -> JsonDict | None:
        return describe.board()

    def events_of(self, view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        return list(describe.events_of(view))

    def describe_event(self, event: Mapping[str, Any]) -> str:
        return describe.describe_event(event)

    def describe_action(self, state: GameState, seat: int, action_id: str) -> str:
        assert isinstance(state, DragondaState)
        return describe.describe_action(state, seat, action_id)

    def describe_result(self, state: GameState, result: GameResult) -> list[str]:
        assert isinstance(state, DragondaState)
        return describe.describe_result(state, result)

    def progress(self, state: GameState) -> Progress:
        assert isinstance(state, DragondaState)
        return describe.progress(state)

    def render_view(self, view: Mapping[str, Any]) -> str:
        active = view["active"]
        lines = [
            f"{self.name} - step {view['step']}, round {view['round']}/{view['round_cap']}, phase {view['phase']}, "
            f"turn of seat {active if active is not None else '-'}, deciding {view['deciding']}"
        ]
        order = ", ".join(f"seat {s}" for s in view["order"])
        lines.append(
            f"play order: {order}; deck {view['deck_count']} cards; "
            f"pass supply PL {view['supply']['PL']} CT {view['supply']['CT']}"
        )
        for p in view["players"]:
            cargo = " ".join(f"{g}{n}" for g, n in p["cargo"].items() if n) or "-"
            passes = " ".join(f"{k}{n}" for k, n in p["passes"].items() if n) or "-"
            flags = [name for name in ("still_pending", "blocked_last", "false_guide") if p[name]]
            place = BOARD.places.get(p["pos"], {}).get("name", p["pos"])
            lines.append(
                f"  seat {p['seat']}: {p['xp']:2d} XP {p['money']:4d}z at {place} (zone {p['zone']}) "
                f"{p['means']:7s} cargo {cargo}; passes {passes}; cards {p['hand_count']}; "
                f"visited {','.join(p['visited']) or '-'}{'; ' + ', '.join(flags) if flags else ''}"
            )
        if view.get("hand") is not None:
            names = ", ".join(BOARD.card_name[c] for c in view["hand"]) or "-"
            lines.append(f"hand (seat {view['seat']}): {names}")
        if view.get("hands") is not None:
            for seat, hand in enumerate(view["hands"]):
                lines.append(f"hand of seat {seat}: {', '.join(BOARD.card_name[c] for c in hand) or '-'}")
        turn = view["turn"]
        if turn.get("event"):
            event = BOARD.events[turn["event"]]
            lines.append(
                f"event {event['id']} {event['title']} (zones {','.join(event['zones'])}), "
                f"roll {turn['roll'] or '-'}"
            )
        for frame in view["stack"]:
            if frame["kind"] == DEFENCE:
                lines.append(
                    f"seat {frame['seat']} must answer {BOARD.card_name[frame['card']]} "
                    f"from seat {frame['attacker']}"
                )
            else:
                lines.append(f"seat {frame['seat']} returns {frame['count']} goods ({frame['reason']})")
        if view["bonus"]:
            lines.append(
                "first arrivals: "
                + ", ".join(f"{k} seat {v}" for k, v in view["bonus"].items() if v is not None)
            )
        if view["log"]:
            lines.append(f"last: {view['log'][-1]}")
        if view["winner"] is not None or view["end_reason"]:
            lines.append(f"over: {view['end_reason']}, winner {view['winner']}")
        return "\n".join(lines)


SPEC = DragondaSpec()
DragondaState.spec = SPEC

__all__ = ["SPEC", "DragondaSpec", "DragondaState"]
