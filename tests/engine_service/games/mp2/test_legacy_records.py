"""Records made before two Marco Polo II ids were renamed still replay and verify (every stored state hash,
after every step, and the result): a movement's `stop` is now `move:stop`, a contract taken as a bonus is
now `contract:take:<city>:<slot>`. The fixtures in `data/` are seeded house matches (random and greedy, 2-4
players, with and without The Caravans) recorded with the old ids."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from engine_service.games import make
from engine_service.referee import MatchRecord, verify
from engine_service.referee.replay import apply_recorded

FIXTURES = sorted((Path(__file__).parent / "data").glob("legacy-*.json"))


def test_the_fixtures_cover_both_options_and_every_player_count() -> None:
    records = [MatchRecord.load(path) for path in FIXTURES]
    assert {r.num_players for r in records} == {2, 3, 4}
    assert {bool(r.options["caravans"]) for r in records} == {False, True}
    assert all(r.hash_every == 1 for r in records)  # a hash after every step, renamed ones included


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_a_record_made_with_the_old_ids_verifies(path: Path) -> None:
    record = MatchRecord.load(path)
    state = verify(record)
    assert state.is_over() and state.step == record.steps


def test_the_old_ids_are_applied_by_their_new_ids() -> None:
    upgraded: Counter[tuple[str, str]] = Counter()
    kept: Counter[str] = Counter()
    for path in FIXTURES:
        record = MatchRecord.load(path)
        state = make(record.game_id, record.num_players, record.seed, record.options)
        for seat, action_id in record.actions:
            legal = {a.id: a.kind for a in state.legal_actions(seat)}
            if action_id in legal:
                if action_id == "stop" or action_id.startswith("take:"):
                    kept[legal[action_id]] += 1
            else:
                new = state.upgrade_action_id(seat, action_id)
                assert new in legal, (action_id, sorted(legal))
                upgraded[(action_id.split(":")[0], legal[new])] += 1
            apply_recorded(state, seat, action_id)
    assert set(upgraded) == {("stop", "move"), ("take", "contract")}
    assert set(kept) == {"caravan", "contracts"}  # a caravan's `stop` and the Contracts action's `take:`
