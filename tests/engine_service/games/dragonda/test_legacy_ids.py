"""Records made before Dragonda's action ids followed one grammar still replay and verify: their old ids
(`done`, `accept`, `means:<m>` in the transport step, card names with spaces) are applied by their current
ids, and every recorded state hash still matches (the state holds no action id).

The fixtures in data/ were recorded by house random and greedy bots (2-4 players, round cap 50) with the
ids of that time; together they name every renamed id but `means:ship` in the transport step, which the
last test builds by hand."""

from __future__ import annotations

from importlib import resources

import pytest

from engine_service.games import make
from engine_service.games.dragonda.rules import DragondaState, legacy_id
from engine_service.referee.record import MatchRecord
from engine_service.referee.replay import apply_recorded, verify
from tests.engine_service.games.dragonda.helpers import fresh

FIXTURES = sorted(
    f.name
    for f in resources.files("tests.engine_service.games.dragonda").joinpath("data").iterdir()
    if f.name.startswith("legacy-ids-")
)
RENAMED = {"done", "accept", "means:horse", "means:caravan"}


def _record(name: str) -> MatchRecord:
    text = resources.files("tests.engine_service.games.dragonda").joinpath("data", name).read_text()
    return MatchRecord.loads(text)


@pytest.mark.parametrize("name", FIXTURES)
def test_a_record_with_the_old_ids_verifies(name: str) -> None:
    record = _record(name)
    old = {action for _, action in record.actions}
    assert old & RENAMED and any(" " in action for action in old), "the fixture names renamed ids"
    state = verify(record)
    assert state.is_over() and state.step == record.steps


def test_the_fixtures_name_every_renamed_kind() -> None:
    kinds: set[tuple[str, str]] = set()
    for name in FIXTURES:
        record = _record(name)
        state = make(record.game_id, record.num_players, record.seed, record.options)
        for seat, action_id in record.actions:
            current = state.upgrade_action_id(seat, action_id)
            action = next(a for a in state.legal_actions(seat) if a.id == current)
            if current != action_id:
                assert legacy_id(action) == action_id
                kinds.add((action.kind, current.split(":")[0]))
            apply_recorded(state, seat, action_id)
    assert kinds == {
        ("trade_done", "done"),
        ("cards_done", "done"),
        ("transport_done", "done"),
        ("event_cancel", "accept"),
        ("defence", "accept"),
        ("defence", "defend"),
        ("buy_means", "buy_means"),
        ("discard", "discard"),
        ("attack", "attack"),
    }


def test_a_ship_bought_in_the_transport_step_by_its_old_id() -> None:
    state = fresh(2)
    seat = state.active
    state.pos[seat] = "VEN"
    state.phase = "transport"
    state._legal_cache = None
    assert "means:ship" not in [a.id for a in state.legal_actions(seat)]
    assert state.upgrade_action_id(seat, "means:ship") == "buy_means:ship"
    apply_recorded(state, seat, "means:ship")
    assert state.means[seat] == "ship"


def test_current_and_unknown_ids_are_not_upgraded() -> None:
    state: DragondaState = fresh(2)
    seat = state.current_seats()[0]
    for action in state.legal_actions(seat):
        assert state.upgrade_action_id(seat, action.id) == action.id
    assert state.upgrade_action_id(seat, "no such id") == "no such id"
