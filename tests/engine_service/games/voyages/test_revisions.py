"""The Voyages rules revisions: under revision 2 the `special_to_board` event keeps its own copy of the
contracts laid out, so a clone, a state restored from JSON and the original agree however the board changes
later; revision 1 (its event held the board's list itself) still plays as its records were made.

The seeded game: 4 players, seed 3, uniformly random actions drawn with ChanceRng(3): the board runs out at
step 112 (contracts 10 and 20 laid out from the special pile) and contract 10 is taken at step 123."""

from __future__ import annotations

import json

from engine_service.games import GameState, get_game, state_from_json
from engine_service.games.rng import ChanceRng

SPEC = get_game("voyages-v1")
LAID_AT, TAKEN_AT = 112, 123


def play_to(state: GameState, rng: ChanceRng, step: int) -> list[tuple[int, str]]:
    """Random actions until `step`; the (seat, action id) pairs played."""
    played = []
    while state.step < step:
        seat = state.current_seats()[0]
        action_id = rng.choice(state.legal_actions(seat)).id
        state.apply(seat, action_id)
        played.append((seat, action_id))
    return played


def laid_event(state: GameState) -> dict[str, object]:
    return next(e for e in reversed(state.events) if e["event"] == "special_to_board")  # type: ignore[attr-defined]


def test_revision_2_logs_its_own_copy_and_its_copies_agree_after_the_board_changes() -> None:
    state = SPEC.new_state(4, 3, {})
    assert state.revision == 2
    rng = ChanceRng(3)
    play_to(state, rng, LAID_AT)
    assert laid_event(state)["contracts"] == [10, 20]
    clone = state.clone()
    restored = state_from_json(json.loads(json.dumps(state.to_json())))
    played = play_to(state, rng, TAKEN_AT)
    assert 10 not in state.board  # type: ignore[attr-defined]
    assert laid_event(state)["contracts"] == [10, 20]
    for copy in (clone, restored):
        for seat, action_id in played:
            copy.apply(seat, action_id)
        assert copy.state_hash() == state.state_hash()


def test_revision_1_plays_as_its_records_were_made() -> None:
    """Its event followed the board: it lost contract 10 when 10 was taken (old records hash that way)."""
    state = SPEC.new_state(4, 3, {}, revision=1)
    rng = ChanceRng(3)
    play_to(state, rng, TAKEN_AT)
    assert laid_event(state)["contracts"] == [20] and laid_event(state)["contracts"] is state.board  # type: ignore[attr-defined]
    current = SPEC.new_state(4, 3, {})
    play_to(current, ChanceRng(3), TAKEN_AT)
    assert [a.id for a in current.legal_actions(current.current_seats()[0])] == [
        a.id for a in state.legal_actions(state.current_seats()[0])
    ]  # the same game, told differently
