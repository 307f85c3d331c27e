"""The engine contract's promises for Marco Polo II with The Caravans and with every flagged rule option
set to its alternative (the generic suite covers the defaults and `caravans=True` through
`option_variants`): a small parametrised copy of the conformance checks over option sets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine_service.games import get_game, make, state_from_json
from engine_service.games.base import GameState, IllegalAction
from engine_service.games.rng import ChanceRng

GAME = "mp2-v1"
ALTERNATES: dict[str, Any] = {
    "caravans": True,
    "special_city_repeat": "by_space",
    "bonus_copy_scope": "with_special",
    "extra_post_bonus": False,
    "caravan_capacity": 3,
    "caravan_oasis_completion": False,
}
CONFIGS = [(n, opts) for n in (2, 3, 4) for opts in ({"caravans": True}, ALTERNATES)]


def _walk(state: GameState, rng: ChanceRng, steps: int) -> list[tuple[int, str]]:
    log = []
    for _ in range(steps):
        if state.is_over():
            break
        seat = state.current_seats()[0]
        action = rng.choice(state.legal_actions(seat))
        state.apply(seat, action.id)
        log.append((seat, action.id))
    return log


@pytest.mark.parametrize(("players", "options"), CONFIGS, ids=[f"{n}p-{len(o)}opts" for n, o in CONFIGS])
def test_contract_promises_with_options(players: int, options: dict[str, Any]) -> None:
    spec = get_game(GAME)
    state = make(GAME, players, 21, options)
    rng = ChanceRng(5)
    probe = ChanceRng(99)
    snapshots = 0
    log: list[tuple[int, str]] = []
    while not state.is_over():
        log += _walk(state, rng, 1 + rng.randbelow(60))
        snapshots += 1
        # JSON round trip: same hash, same legal actions, same future
        loaded = state_from_json(json.loads(json.dumps(state.to_json())))
        assert loaded.state_hash() == state.state_hash()
        if state.is_over():
            break
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        assert [a.to_json() for a in loaded.legal_actions(seat)] == [a.to_json() for a in legal]
        assert len({a.id for a in legal}) == len(legal)
        # every legal action applies; an unknown one raises and changes nothing
        for action in legal[:25]:
            trial = state.clone()
            trial.apply(seat, action.id)
        before = state.state_hash()
        with pytest.raises(IllegalAction):
            state.apply(seat, "no-such-action")
        assert state.state_hash() == before
        # hidden information: re-dealing what a seat cannot see changes none of its view
        for viewer in range(players):
            other = state.shuffle_hidden(viewer, probe)
            assert other.observation(viewer) == state.observation(viewer)
            assert other.spectator_view() == state.spectator_view()
            sampled = spec.sample_state(state.observation(viewer), probe)
            assert sampled.observation(viewer) == state.observation(viewer)
            if viewer == seat:
                assert [a.id for a in sampled.legal_actions(seat)] == [a.id for a in legal]
    assert state.end_reason == "completed" and snapshots >= 3
    result = state.result()
    assert min(result.ranks) == 1 and len(result.scores) == players
    # determinism: the seed plus the actions is the whole game
    replay = make(GAME, players, 21, options)
    for seat, action_id in log:
        replay.apply(seat, action_id)
    assert replay.state_hash() == state.state_hash()
