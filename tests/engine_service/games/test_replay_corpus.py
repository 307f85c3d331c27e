"""The replay corpus replays identically: every recorded match of every game and option variant re-simulates
through the referee's replay to the stored state hash after every step, and to the stored result.

The corpus (`corpus/*.json.gz`, written by `corpus/record_corpus.py`) is recorded house matches; the
legacy-id fixtures of Marco Polo II and Dragonda (records made before their action ids were renamed) are
replayed with it. A refactor of a game that changes any of these hashes changes the game: either it is a
bug, or a behaviour change that needs a new game version (and a re-recorded corpus entry).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_service.games import get_game, list_games
from engine_service.referee import MatchRecord, ReplayMismatch, verify
from tests.engine_service.games.corpus.record_corpus import CORPUS_DIR, ENTRIES, load

GAMES_DIR = Path(__file__).parent
LEGACY = sorted(GAMES_DIR.glob("*/data/legacy-*.json"))
CORPUS = sorted(CORPUS_DIR.glob("*.json.gz"))
RECORDS = CORPUS + LEGACY


def _variant_key(game_id: str, num_players: int, options: dict[str, object]) -> tuple[str, int, str]:
    resolved = get_game(game_id).resolve_options(options, num_players)
    return game_id, num_players, repr(sorted(resolved.items()))


def test_every_entry_is_recorded_and_every_file_is_an_entry() -> None:
    assert sorted(e.path for e in ENTRIES) == CORPUS
    assert len(LEGACY) >= 6  # the Marco Polo II and Dragonda legacy-id fixtures


def test_the_corpus_covers_every_game_variant_at_two_and_at_most_players() -> None:
    recorded = {_variant_key(e.game_id, e.num_players, e.options) for e in ENTRIES}
    for spec in list_games():
        for n in (spec.min_players, spec.max_players):
            for options in spec.option_variants(n):
                assert _variant_key(spec.game_id, n, options) in recorded, (spec.game_id, n, options)
    policies = {bots for e in ENTRIES for bots in e.bots}
    assert policies == {"random", "greedy"}


def test_each_file_is_its_entry_s_match_and_every_game_s_current_revision_is_recorded() -> None:
    for entry in ENTRIES:
        record = load(entry.path)
        assert record.revision == entry.revision, entry.name
        assert (record.game_id, record.num_players, record.seed) == (
            entry.game_id,
            entry.num_players,
            entry.seed,
        )
        assert record.options == get_game(entry.game_id).resolve_options(entry.options, entry.num_players)
    for spec in list_games():
        assert any(e.game_id == spec.game_id and e.revision == spec.revision for e in ENTRIES), spec.game_id


@pytest.mark.parametrize("path", RECORDS, ids=[p.name.split(".")[0] for p in RECORDS])
def test_a_recorded_match_replays_to_every_stored_hash_and_its_result(path: Path) -> None:
    record: MatchRecord = load(path)
    assert record.result is not None
    if path in CORPUS:
        assert record.hash_every == 1 and sorted(record.hashes) == list(range(record.steps + 1))
    state = verify(record)  # raises ReplayMismatch naming the first step whose hash differs
    assert state.is_over() and state.step == record.steps
    assert state.state_hash() == record.hashes[record.steps]
    recorded = record.result.get("game", record.result)
    assert state.result().to_json() == {k: recorded[k] for k in ("scores", "ranks", "tiebreaks", "reason")}


def test_a_changed_step_is_named_by_the_replay() -> None:
    record = load(CORPUS[0])
    record.hashes[5] = "0" * 32
    with pytest.raises(ReplayMismatch) as caught:
        verify(record)
    assert caught.value.step == 5
