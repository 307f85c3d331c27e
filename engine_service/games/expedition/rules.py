"""Marco Polo Expedition's state and rules (`expedition-v1`). The package docstring is the spec.

Pure: no Django, no gRPC, no clock, no global `random`; chance (shuffles) comes from the state's own RNG.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Any

from engine_service.games.base import Action, GameResult, GameState, JsonDict
from engine_service.games.expedition.cards import CARD_TYPES, payments, track
from engine_service.games.fields import Copy, state_field
from engine_service.games.rng import ChanceRng

HAND_SIZE = 5
DISPLAY_SIZE = 5
START_GOLD = 3
TURN_CAP = 400
EVENTS_KEPT = 16
# Rules revisions (the package docstring says what each changed); new games are played under the last.
DAIDU_ENDS_MOVEMENT = 2  # from this revision on, a piece entering Daidu ends the mover's movement
RULES_REVISION = 2


def _track_constants() -> tuple[list[dict[str, Any]], int, int]:
    data = track()
    return data["spaces"], int(data["kantshou"]), int(data["daidu"])


SPACES, KANTSHOU, DAIDU = _track_constants()
LEG1_SCORING = [s["index"] for s in SPACES if s["leg"] == 1 and s["score"] > 0]
LEG2_SCORING = [s["index"] for s in SPACES if s["leg"] == 2 and s["score"] > 0]


@lru_cache(maxsize=4096)
def _move_actions(
    hand: tuple[tuple[str, int], ...], requirement: str, piece: int, target: int
) -> tuple[Action, ...]:
    return tuple(
        Action(
            f"move:p{piece}:{'+'.join(payment)}",
            "move",
            {"piece": piece, "to": target, "requirement": requirement, "pay": list(payment)},
        )
        for payment in payments(Counter(dict(hand)), requirement)
    )


class ExpeditionState(GameState):
    """One game of Marco Polo Expedition. Its state is the fields declared below (plain JSON values), in
    saving order; `GameState` derives the start values, saving, loading and `clone` from them."""

    hands: list[list[int]] = state_field(Copy.ITEMS, seat_value=list, private=True)  # card ids per seat
    deck: list[int] = state_field(Copy.SHALLOW, factory=list, private=True)  # the top card is last
    display: list[int] = state_field(Copy.SHALLOW, factory=list)
    discard: list[int] = state_field(Copy.SHALLOW, factory=list)
    pieces: list[int] = state_field(Copy.SHALLOW, factory=list)  # track position per piece
    owners: list[int] = state_field(Copy.SHALLOW, factory=list)  # seat per piece
    gold: list[int] = state_field(Copy.SHALLOW, seat_value=lambda: START_GOLD)
    board_chests: list[int] = state_field(Copy.SHALLOW, factory=lambda: [space["chest"] for space in SPACES])
    known: list[list[str]] = state_field(Copy.ITEMS, seat_value=list)  # types publicly known to be in hands
    kantshou_scored: bool = state_field(default=False)
    kantshou_pending: bool = state_field(default=False)
    daidu_reached: bool = state_field(default=False)
    turn_seat: int = state_field(default=0)
    turns: int = state_field(default=0)
    phase: str = state_field(default="move")  # move | draw | over
    end_reason: str | None = state_field(default=None)
    moved: bool = state_field(default=False)
    ballast_used: bool = state_field(default=False)
    locked_piece: int | None = state_field(default=None)
    stopped: list[int] = state_field(Copy.SHALLOW, factory=list)
    movement_over: bool = state_field(default=False)
    events: list[JsonDict] = state_field(Copy.SHALLOW, factory=list)  # entries never change

    # --- setup ------------------------------------------------------------------------------------------
    def setup(self) -> None:
        deck = list(range(len(CARD_TYPES)))
        self.rng.shuffle(deck)
        self.deck = deck
        for seat in range(self.num_players):
            self.hands[seat] = [self.deck.pop() for _ in range(HAND_SIZE)]
        self.display = [self.deck.pop() for _ in range(DISPLAY_SIZE)]
        if self.num_players == 2:
            # Two colours each, placed alternately from Hormus, start player first.
            self.owners = [0, 1, 0, 1]
        else:
            self.owners = list(range(self.num_players))
        self.pieces = list(range(len(self.owners)))

    # --- helpers ----------------------------------------------------------------------------------------
    @property
    def strategic(self) -> bool:
        return self.num_players == 2 and bool(self.options.get("strategic_two_player"))

    def hand_counter(self, seat: int) -> Counter[str]:
        return Counter(CARD_TYPES[c] for c in self.hands[seat])

    def pieces_of(self, seat: int) -> list[int]:
        return [p for p, owner in enumerate(self.owners) if owner == seat]

    def occupied(self, space: int) -> bool:
        if space == KANTSHOU and self.kantshou_scored:
            return False  # after the intermediate scoring Kantshou holds any number of pieces
        return space in self.pieces

    def next_free(self, position: int) -> int | None:
        for space in range(position + 1, DAIDU + 1):
            if not self.occupied(space):
                return space
        return None

    def _leading(self, seat: int) -> int:
        return max(self.pieces[p] for p in self.pieces_of(seat))

    def _movable_pieces(self, seat: int) -> list[int]:
        if self.movement_over:
            return []
        candidates = self.pieces_of(seat)
        if self.locked_piece is not None and not self.strategic:
            candidates = [self.locked_piece]
        return [p for p in candidates if p not in self.stopped and self.next_free(self.pieces[p]) is not None]

    def _ballast_allowed(self, seat: int, piece: int, target: int) -> bool:
        if self.ballast_used or self.gold[seat] < 1:
            return False
        return any(self.pieces[q] > target for q, owner in enumerate(self.owners) if owner != seat)

    def _log(self, event: JsonDict) -> None:
        event = {"turn": self.turns, **event}
        self.events.append(event)
        del self.events[:-EVENTS_KEPT]

    def _refill_deck(self) -> None:
        if not self.deck and self.discard:
            self.deck = self.discard
            self.discard = []
            self.rng.shuffle(self.deck)
            self._log({"event": "reshuffle", "cards": len(self.deck)})

    def _draw_top(self) -> int | None:
        self._refill_deck()
        if not self.deck:
            return None
        card = self.deck.pop()
        self._refill_deck()
        return card

    def _refill_display(self) -> None:
        while len(self.display) < DISPLAY_SIZE:
            card = self._draw_top()
            if card is None:
                return
            self.display.append(card)

    def _can_draw(self) -> bool:
        return bool(self.deck or self.discard or self.display)

    # --- decisions --------------------------------------------------------------------------------------
    def current_seats(self) -> list[int]:
        return [] if self.phase == "over" else [self.turn_seat]

    def _legal_actions(self, seat: int) -> list[Action]:
        if self.phase == "draw":
            return self._draw_actions()
        actions = [Action("stop" if self.moved else "pass", "end_movement", {"moved": self.moved})]
        hand = self.hand_counter(seat)
        for piece in self._movable_pieces(seat):
            target = self.next_free(self.pieces[piece])
            assert target is not None
            requirement = SPACES[target]["requirement"]
            if self._ballast_allowed(seat, piece, target):
                actions.append(Action(f"ballast:p{piece}", "ballast", {"piece": piece, "to": target}))
            actions.extend(_move_actions(tuple(sorted(hand.items())), requirement, piece, target))
        return actions

    def _draw_actions(self) -> list[Action]:
        actions = []
        if self.deck or self.discard:
            actions.append(Action("draw:deck", "draw", {"source": "deck"}))
        for card_type in sorted({CARD_TYPES[c] for c in self.display}):
            actions.append(Action(f"take:{card_type}", "draw", {"source": "display", "card": card_type}))
        return actions

    def _apply(self, seat: int, action: Action) -> None:
        if action.kind == "end_movement":
            self._log({"event": "stop" if self.moved else "pass", "seat": seat})
            self._begin_draw()
        elif action.kind == "ballast":
            piece = int(action.details["piece"])
            self.gold[seat] -= 1
            self.ballast_used = True
            self._log({"event": "ballast", "seat": seat, "piece": piece, "to": action.details["to"]})
            self._enter(seat, piece, int(action.details["to"]))
        elif action.kind == "move":
            piece = int(action.details["piece"])
            self._pay(seat, list(action.details["pay"]))
            self._log(
                {
                    "event": "move",
                    "seat": seat,
                    "piece": piece,
                    "to": action.details["to"],
                    "paid": list(action.details["pay"]),
                }
            )
            self._enter(seat, piece, int(action.details["to"]))
        elif action.kind == "draw":
            self._draw(seat, action)
        else:  # pragma: no cover - legal_actions only makes the kinds above
            raise AssertionError(action.kind)

    def _pay(self, seat: int, paid_types: list[str]) -> None:
        hand = self.hands[seat]
        for card_type in paid_types:
            card = min(c for c in hand if CARD_TYPES[c] == card_type)
            hand.remove(card)
            self.discard.append(card)
            if card_type in self.known[seat]:
                self.known[seat].remove(card_type)

    def _enter(self, seat: int, piece: int, target: int) -> None:
        self.moved = True
        if not self.strategic:
            self.locked_piece = piece
        if self.board_chests[target]:
            self.gold[seat] += self.board_chests[target]
            self._log({"event": "chest", "seat": seat, "space": target, "value": self.board_chests[target]})
            self.board_chests[target] = 0
        if target in LEG1_SCORING and self.kantshou_scored:
            # Too late for the intermediate scoring: the piece joins the others on Kantshou and stops.
            self.pieces[piece] = KANTSHOU
            self.stopped.append(piece)
            return
        self.pieces[piece] = target
        if target == KANTSHOU:
            self.kantshou_pending = True
            self.movement_over = True
        elif target == DAIDU:
            self.daidu_reached = True
            self.stopped.append(piece)
            if self.revision >= DAIDU_ENDS_MOVEMENT:
                self.movement_over = True  # "the game ends as soon as the first piece reaches Daidu"

    def _begin_draw(self) -> None:
        if self._can_draw():
            self.phase = "draw"
        else:
            self._end_turn()

    def _draw(self, seat: int, action: Action) -> None:
        if action.details["source"] == "deck":
            card = self._draw_top()
            assert card is not None
            self.hands[seat].append(card)
            self._log({"event": "draw", "seat": seat, "source": "deck"})
        else:
            card_type = str(action.details["card"])
            card = next(c for c in self.display if CARD_TYPES[c] == card_type)
            self.display.remove(card)
            self.hands[seat].append(card)
            self.known[seat].append(card_type)
            self._log({"event": "draw", "seat": seat, "source": "display", "card": card_type})
            self._refill_display()
        self._end_turn()

    def _end_turn(self) -> None:
        if self.kantshou_pending:
            self._score(LEG1_SCORING, "intermediate")
            for piece, position in enumerate(self.pieces):
                if position in LEG1_SCORING:
                    self.pieces[piece] = KANTSHOU
            self.kantshou_pending = False
            self.kantshou_scored = True
        self.turns += 1
        if self.daidu_reached:
            self._finish("completed")
            return
        if self.turns >= TURN_CAP:
            self._finish("turn_cap")
            return
        self.turn_seat = (self.turn_seat + 1) % self.num_players
        self.phase = "move"
        self.moved = False
        self.ballast_used = False
        self.locked_piece = None
        self.stopped = []
        self.movement_over = False

    def _score(self, spaces: list[int], label: str) -> None:
        paid: list[JsonDict] = []
        for piece, position in enumerate(self.pieces):
            if position in spaces:
                seat = self.owners[piece]
                value = int(SPACES[position]["score"])
                self.gold[seat] += value
                paid.append({"seat": seat, "piece": piece, "space": position, "gold": value})
        self._log({"event": f"{label}_scoring", "paid": paid})

    def _finish(self, reason: str) -> None:
        self._score(LEG2_SCORING, "final")
        self.phase = "over"
        self.end_reason = reason

    # --- end --------------------------------------------------------------------------------------------
    def is_over(self) -> bool:
        return self.phase == "over"

    def result(self) -> GameResult:
        if not self.is_over():
            raise ValueError("the game is not over")
        tiebreaks = [self._leading(seat) for seat in range(self.num_players)]
        return GameResult.from_keys(self.gold, tiebreaks, self.end_reason or "completed")

    # --- views ------------------------------------------------------------------------------------------
    def _public(self) -> JsonDict:
        return {
            "game_id": self.spec.game_id,
            "step": self.step,
            "num_players": self.num_players,
            "turn": self.turns,
            "turn_cap": TURN_CAP,
            "current_seat": self.turn_seat if self.phase != "over" else None,
            "phase": self.phase,
            "strategic_two_player": self.strategic,
            "pieces": [
                {"piece": p, "seat": self.owners[p], "space": pos} for p, pos in enumerate(self.pieces)
            ],
            "players": [
                {
                    "seat": seat,
                    "gold": self.gold[seat],
                    "hand_count": len(self.hands[seat]),
                    "known_cards": sorted(self.known[seat]),
                }
                for seat in range(self.num_players)
            ],
            "display": sorted(CARD_TYPES[c] for c in self.display),
            "draw_pile": len(self.deck),
            "discard": sorted(CARD_TYPES[c] for c in self.discard),
            "board_chests": {str(i): v for i, v in enumerate(self.board_chests) if v},
            "kantshou_scored": self.kantshou_scored,
            "this_turn": {
                "moved": self.moved,
                "ballast_used": self.ballast_used,
                "locked_piece": self.locked_piece,
                "stopped_pieces": sorted(self.stopped),
                "movement_over": self.movement_over,
            },
            "events": list(self.events),
            "end_reason": self.end_reason,
        }

    def observation(self, seat: int) -> JsonDict:
        view = self._public()
        view["seat"] = seat
        view["hand"] = sorted(CARD_TYPES[c] for c in self.hands[seat])
        return view

    def spectator_view(self, *, reveal: bool = False) -> JsonDict:
        view = self._public()
        view["seat"] = None
        if reveal:
            view["hands"] = [sorted(CARD_TYPES[c] for c in hand) for hand in self.hands]
        return view

    # --- hidden information -----------------------------------------------------------------------------
    def shuffle_hidden(self, seat: int, rng: ChanceRng) -> ExpeditionState:
        copy = self.clone()
        assert isinstance(copy, ExpeditionState)
        others = [s for s in range(self.num_players) if s != seat]
        pool = copy.deck + [c for s in others for c in copy.hands[s]]
        rng.shuffle(pool)
        for s in others:
            count = len(copy.hands[s])
            copy.hands[s], pool = pool[:count], pool[count:]
        copy.deck = pool
        copy._legal_cache = None  # the re-dealt hands change what may be paid
        return copy
