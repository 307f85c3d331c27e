"""Frames from kept states are the frames from the start: in every game, at steps asked in any order, for a
growing (live) record, for two records of one seed with other actions; and a record whose hash does not
match is still caught past a kept state."""

from __future__ import annotations

import random

import pytest

from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, ReplayMismatch, replay, run_match
from engine_service.referee.frames import frames
from engine_service.referee.snapshots import SNAPSHOT_EVERY, replay_from_snapshots, snapshots_clear

GAMES = [
    ("expedition-v1", 3, {}),
    ("voyages-v1", 3, {}),
    ("mp2-v1", 2, {"caravans": True}),
    ("dragonda-v1", 3, {}),
]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    snapshots_clear()


def _record(game_id: str, players: int, options: dict, seed: int, policy: str = "random") -> MatchRecord:
    seats = [HouseSeat(make_policy(policy, seed=seed + i)) for i in range(players)]
    return run_match(game_id, players, seed, seats, options=options)


@pytest.mark.parametrize(("game_id", "players", "options"), GAMES, ids=[g[0] for g in GAMES])
def test_a_state_from_kept_states_is_the_state_from_the_start(game_id, players, options) -> None:
    record = _record(game_id, players, options, seed=5)
    assert record.steps > 2 * SNAPSHOT_EVERY
    steps = [*random.Random(3).sample(range(record.steps + 1), 12), record.steps, 0, SNAPSHOT_EVERY]
    for step in steps:
        assert replay_from_snapshots(record, upto=step).state_hash() == replay(record, upto=step).state_hash()
    warm = frames(record, start=record.steps - 5, count=5, seat=1)
    snapshots_clear()
    assert warm == frames(record, start=record.steps - 5, count=5, seat=1)


def test_a_growing_record_and_another_game_of_the_same_seed_each_get_their_own_states() -> None:
    full = _record("expedition-v1", 3, {}, seed=9)
    other = _record("expedition-v1", 3, {}, seed=9, policy="greedy")
    assert other.actions != full.actions
    live = MatchRecord.from_json(full.to_json())
    live.actions, live.hashes = live.actions[: SNAPSHOT_EVERY * 2 + 3], {}
    assert (
        replay_from_snapshots(live, upto=live.steps).state_hash()
        == replay(full, upto=live.steps).state_hash()
    )
    end = full.steps
    assert replay_from_snapshots(full, upto=end).state_hash() == replay(full, upto=end).state_hash()
    other.match_id = full.match_id
    for step in (SNAPSHOT_EVERY + 1, other.steps):
        assert replay_from_snapshots(other, upto=step).state_hash() == replay(other, upto=step).state_hash()
    assert replay_from_snapshots(full, upto=end).state_hash() == replay(full, upto=end).state_hash()


def test_a_wrong_hash_past_a_kept_state_is_still_a_mismatch() -> None:
    record = _record("voyages-v1", 3, {}, seed=4)
    replay_from_snapshots(record, upto=SNAPSHOT_EVERY)
    wrong = SNAPSHOT_EVERY + record.hash_every
    record.hashes[wrong] = "0" * 32
    with pytest.raises(ReplayMismatch) as raised:
        frames(record, start=SNAPSHOT_EVERY + 1, count=2 * record.hash_every)
    assert raised.value.step == wrong
