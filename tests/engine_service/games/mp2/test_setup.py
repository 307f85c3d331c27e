"""Setup per player count: dice, neutral dice, characters, goals, board slots, piles."""

from __future__ import annotations

import pytest

from engine_service.games.base import InvalidOptions
from engine_service.games.mp2 import SPEC
from engine_service.games.mp2.tables import BASE_CHARACTERS, CARAVAN_CHARACTERS, CONTRACT_CITIES


@pytest.mark.parametrize("players", [2, 3, 4])
def test_setup_per_player_count(players: int) -> None:
    state = SPEC.new_state(players, 7, {})
    assert len(state.draft_pool) == players + 1 and set(state.draft_pool) <= set(BASE_CHARACTERS)
    # the last player picks first, then counter-clockwise
    order = [int(e["seat"]) for e in state.pending if e["t"] == "draft"]
    last = (state.first_player - 1) % players
    assert order == [(last - i) % players for i in range(players)]
    assert all(len(o) == 3 for o in state.goal_offers)
    assert all(r["coins"] == 8 and r["camels"] == 3 for r in state.res)
    assert all(len(a) == 1 and a[0].startswith("S") for a in state.active)
    assert sum(len(s) for s in state.contract_spaces.values()) == 10
    assert set(state.contract_spaces) == set(CONTRACT_CITIES)
    assert len(state.pile) == 32 and state.pile_hidden == 32
    assert len(state.cards) == 8 and len(state.card_deck) == 17
    assert len(state.outposts) == 10 and len(state.markers) == 6 and state.marker_box
    for numeral in ("I", "II", "III"):
        assert len(state.offer_piles[numeral]) == 4 and state.offer_box[numeral] and state.offer_now[numeral]
    khan = {2: [[-1, "n1"], [-1, "n1"]], 3: [[-1, "n1"]], 4: []}
    assert state.khan == khan[players]
    if players == 2:
        assert state.spaces["book3b"] == [[-1, ["n5"]]]
        assert {k for k in state.brown} == {"BAL-1", "HOR-1", "BAG-1"}
    else:
        assert state.brown == {} and state.spaces["book3b"] == []
    # finish the setup: round 1 starts with 5 rolled dice each and the black dice supply
    while state.phase != "play" or state.pending:
        state.apply(state.current_seats()[0], state.legal_actions(state.current_seats()[0])[0].id)
    assert state.round == 1 and state.black_left == {2: 4, 3: 5, 4: 6}[players]
    assert all(len(d) == 5 for d in state.dice)
    assert all(g for g in state.goals)


def test_caravans_option_adds_the_four_characters_and_the_tiles() -> None:
    seen = set()
    for seed in range(40):
        state = SPEC.new_state(4, seed, {"caravans": True})
        seen |= set(state.draft_pool)
        assert state.tiles and all(v == "up" for v in state.tiles.values())
    assert seen == set(BASE_CHARACTERS) | set(CARAVAN_CHARACTERS)
    assert SPEC.new_state(4, 1, {}).tiles == {}


def test_bad_options_are_refused() -> None:
    with pytest.raises(InvalidOptions):
        SPEC.new_state(3, 1, {"caravans": "yes"})
    with pytest.raises(InvalidOptions):
        SPEC.new_state(5, 1, {})
    with pytest.raises(InvalidOptions):
        SPEC.new_state(3, 1, {"caravan_capacity": 4})
