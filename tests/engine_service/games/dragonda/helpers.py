"""Test helpers for Dragonda: build exact situations through the state's attributes, then apply action ids.

Test code only; it reaches into the state the way a rules test must (placing cards, rigging the dice).
"""

from __future__ import annotations

from engine_service.games.dragonda import SPEC
from engine_service.games.dragonda.rules import DragondaState
from engine_service.games.rng import ChanceRng


def fresh(players: int = 4, seed: int = 1) -> DragondaState:
    """A game past its opening purchases (everyone on foot in Venice with 230z), at round 1."""
    state = SPEC.new_state(players, seed)
    assert isinstance(state, DragondaState)
    while state.phase in ("setup_means", "setup_shop"):
        seat = state.current_seats()[0]
        state.apply(seat, "means:foot" if state.phase == "setup_means" else "done:trade")
    # The first turn has begun (a card drawn, maybe resolved): undo its effects for a clean table.
    for seat in range(players):
        while state.hands[seat]:
            state.deck.insert(0, state.hands[seat].pop())
    state.money = [230] * players
    state.xp = [0] * players
    state.pos = ["VEN"] * players
    state.means = ["foot"] * players
    state.still_pending = [False] * players
    state.blocked_last = [False] * players
    state.false_guide = [False] * players
    return state


def _take(state: DragondaState, card: str) -> None:
    if card in state.deck:
        state.deck.remove(card)
        return
    for hand in state.hands:
        if card in hand:
            hand.remove(card)
            return
    raise AssertionError(f"card {card} is nowhere")


def give(state: DragondaState, seat: int, *cards: str) -> None:
    """Put `cards` into `seat`'s hand (taken from wherever they are)."""
    for card in cards:
        _take(state, card)
        state.hands[seat].append(card)
    state.hands[seat].sort()


def rig_dice(state: DragondaState, *totals: int) -> None:
    """Give the state an RNG whose next 2d6 rolls total `totals`, in order."""
    for seed in range(200_000):
        probe = ChanceRng(seed)
        if all(probe.randint(1, 6) + probe.randint(1, 6) == t for t in totals):
            state.rng = ChanceRng(seed)
            return
    raise AssertionError(f"no seed rolls {totals}")


def at_turn(state: DragondaState, seat: int, card: str) -> DragondaState:
    """Make `seat` the active player at the start of its turn with `card` on top of the deck, and run the
    turn's automatic steps up to its first decision."""
    _take(state, card)
    state.deck.append(card)
    state.turn_index = state.order.index(seat)
    state.stack = []
    state.phase = "start"
    state._legal_cache = None
    state._run()
    return state


def finish_turn(state: DragondaState) -> None:
    """Play the first (safe) action until the active player's turn is over."""
    seat = state.active
    while not state.is_over() and state.active == seat:
        state.apply(state.current_seats()[0], state.legal_actions(state.current_seats()[0])[0].id)


def ids(state: DragondaState, seat: int | None = None) -> list[str]:
    seat = state.current_seats()[0] if seat is None else seat
    return [a.id for a in state.legal_actions(seat)]


# Cards whose zones leave a token in Venice (zone I) untouched, and one Adventure card of each kind.
QUIET_EVENT = "E07"  # The Mamluk Sultan: zone 2 only
