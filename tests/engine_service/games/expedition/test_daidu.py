"""Daidu ends the movement, and the rules revision that made it so.

The rule text (shared/rules/expedition.txt, "Final Scoring and End of Game"): "The game ends as soon as the
first player piece reaches the second leg's destination, Daidu." In the strategic 2-player variant the
player may otherwise move either piece in any order; once one of them enters Daidu, neither moves again
(the player still draws: the end comes at the end of that turn). Revision 1 of the rules let the other piece
go on moving; records of that time name no revision and replay under it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine_service.cli import policy_seed
from engine_service.games import InvalidOptions, get_game, state_from_json
from engine_service.games.expedition import ExpeditionState
from engine_service.games.expedition.rules import DAIDU, DAIDU_ENDS_MOVEMENT, RULES_REVISION
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, ReplayMismatch, replay, run_match, verify
from tests.engine_service.games.expedition.test_rules import ids, situation

FOUR_OILS = "move:p0:blue-oil+green-oil+purple-oil+red-oil"
HAND = ["blue-oil", "red-oil", "green-oil", "purple-oil", "blue-spice", "red-spice"]


def _race(revision: int | None = None) -> ExpeditionState:
    """Seat 0's piece 0 on 27 can enter Daidu with four oils; its piece 2 on 25 could then enter the freed
    27 (SAME2, worth 6) with two spices. Seat 1's pieces stand on 26 and 24."""
    state = situation(2, pieces=[27, 26, 25, 24], hands={0: HAND}, gold=[10, 10], strategic_two_player=True)
    if revision is not None:
        state.revision = revision
    return state


def test_entering_daidu_ends_the_movement_of_both_pieces_in_the_strategic_variant() -> None:
    state = _race()
    assert any(i.startswith("move:p2:") for i in ids(state, 0))  # before Daidu either piece may move
    state.apply(0, FOUR_OILS)
    assert state.pieces[0] == DAIDU
    assert ids(state, 0) == ["stop"], "the game ends as soon as a piece reaches Daidu: no further movement"
    state.apply(0, "stop")
    assert state.phase == "draw" and not state.is_over(), "the player still draws a card"
    state.apply(0, "draw:deck")
    assert state.is_over()
    # Daidu pays 7 and 25 pays 4 to seat 0; 26 pays 5 and 24 pays 3 to seat 1.
    assert state.result().scores == [10 + 7 + 4, 10 + 5 + 3]


def test_revision_1_still_lets_the_other_piece_move_for_old_records() -> None:
    state = _race(revision=1)
    state.apply(0, FOUR_OILS)
    state.apply(0, "move:p2:blue-spice+red-spice")  # 25 -> 27, the old behaviour
    assert state.pieces[2] == 27


def _random_game(seed: int, revision: int) -> tuple[ExpeditionState, list[str]]:
    """A strategic game of two random bots seeded as `caravan play` seeds them; the moves made after a piece
    entered Daidu."""
    state = get_game("expedition-v1").new_state(2, seed, {"strategic_two_player": True}, revision=revision)
    assert isinstance(state, ExpeditionState)
    bots = [make_policy("random", policy_seed(seed, seat)) for seat in range(2)]
    late: list[str] = []
    while not state.is_over():
        seat = state.current_seats()[0]
        action = bots[seat].choose(state.observation(seat), state.legal_actions(seat))
        if state.daidu_reached and action.startswith(("move", "ballast")):
            late.append(action)
        state.apply(seat, action)
    return state, late


def test_seed_109_of_the_issue_ends_at_daidu() -> None:
    """Two random bots, strategic variant, seed 109: under revision 1 seat 0 moved its other piece from 25
    to 27 after entering Daidu and won 22-21; under the fixed rule it loses 20-21."""
    old, late = _random_game(109, revision=1)
    assert late == ["move:p2:blue-spice+purple-spice"] and old.result().scores == [22, 21]
    new, late = _random_game(109, revision=DAIDU_ENDS_MOVEMENT)
    assert late == [] and new.result().scores == [20, 21]
    seats = [HouseSeat(make_policy("random", policy_seed(109, seat))) for seat in range(2)]
    record = run_match("expedition-v1", 2, 109, seats, {"strategic_two_player": True})
    assert record.result is not None and record.result["game"]["scores"] == [20, 21]
    assert verify(record).state_hash() == new.state_hash()


def test_a_new_record_names_its_revision_and_one_without_it_replays_under_the_first() -> None:
    assert get_game("expedition-v1").revision == RULES_REVISION >= DAIDU_ENDS_MOVEMENT
    seats = [HouseSeat(make_policy("random", seat)) for seat in range(2)]
    record = run_match("expedition-v1", 2, 5, seats, {"strategic_two_player": True}, hash_every=1)
    data = record.to_json()
    assert data["revision"] == RULES_REVISION
    assert MatchRecord.from_json(data).revision == RULES_REVISION
    legacy = {k: v for k, v in data.items() if k != "revision"}
    assert MatchRecord.from_json(legacy).revision == 1
    other = run_match("dragonda-v1", 2, 5, [HouseSeat(make_policy("random", s)) for s in range(2)])
    assert "revision" not in other.to_json(), "a game at its first revision writes records as before"


def test_a_state_keeps_its_revision_through_saving_and_cloning() -> None:
    state = _race(revision=1)
    assert "revision" not in state.to_json(), "revision-1 states hash as they did before revisions"
    assert state_from_json(state.to_json()).revision == 1
    assert state.clone().revision == 1
    current = _race()
    assert current.to_json()["revision"] == RULES_REVISION
    assert state_from_json(current.to_json()).revision == RULES_REVISION
    assert current.state_hash() != state.state_hash()


@pytest.mark.parametrize("revision", [0, RULES_REVISION + 1, "2"])
def test_an_unknown_revision_is_a_clear_error(revision: object) -> None:
    spec = get_game("expedition-v1")
    with pytest.raises(InvalidOptions, match="rules revisions 1-"):
        spec.new_state(2, 1, revision=revision)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptions, match="rules revisions 1-"):
        state_from_json({**_race().to_json(), "revision": revision})


LEGACY = Path(__file__).parent / "data" / "legacy-strategic-r1-seed109.json"


def test_a_record_of_revision_1_keeps_verifying_and_would_not_under_the_fix() -> None:
    """The issue's game as the referee recorded it before the fix (no `revision` in its JSON): it replays to
    every stored hash under revision 1; under the fixed rule its move after Daidu is illegal."""
    record = MatchRecord.load(LEGACY)
    assert record.revision == 1 and "revision" not in json.loads(LEGACY.read_text())
    state = verify(record)
    assert state.result().scores == [22, 21]
    record.revision = RULES_REVISION  # (its hashes differ from the first step on: a state names its revision)
    with pytest.raises(ReplayMismatch, match=r"move:p2:blue-spice\+purple-spice.* is illegal"):
        replay(record, check=False)
