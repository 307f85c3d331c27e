"""Final scoring: contract majorities with ties, the shield track, goals, goods, coins and the tie-break."""

from __future__ import annotations

from engine_service.games.base import GameResult
from engine_service.games.mp2.scoring import contract_awards, final_scores, shield_count
from engine_service.games.mp2.tables import SHIELD_TRACK, shield_vp
from tests.engine_service.games.mp2.helpers import start, zero


def test_contract_majorities_with_ties() -> None:
    assert contract_awards([3, 3, 1, 0], 4) == [8, 8, 4, 0]  # all tied for most: 8; next count: 4
    assert contract_awards([2, 1, 1], 3) == [8, 4, 4]
    assert contract_awards([3, 1], 2) == [8, 0]  # no second place with 2 players
    assert contract_awards([2, 2], 2) == [8, 8]
    assert contract_awards([0, 0, 0], 3) == [0, 0, 0]  # nobody scores with no contract
    assert contract_awards([1, 0, 0], 3) == [8, 0, 0]


def test_shield_track_caps_at_43() -> None:
    assert SHIELD_TRACK[13] == 43 and shield_vp(13) == 43 and shield_vp(20) == 43
    assert [shield_vp(k) for k in range(6)] == [0, 1, 2, 4, 6, 9]


def test_final_scoring_parts() -> None:
    state = start(3, ["dewu", "abha", "vidal"], caravans=True)
    state.goals[0] = "G12"  # lion, eagle; tailor 6, jeweler 7
    state.posts[0] = ["CHE", "SAM", "KAB", "KAR"]  # lion, lion, eagle, horse: 3 distinct
    state.seals[0] = {"tailor": 2, "jeweler": 1}
    state.extra_shields[0] = 1
    zero(state, 0, coins=27, pepper=1, silk=2, gold=1, jade=1, camels=9)
    state.done = [["C01", "C02"], ["C03"], []]
    parts = final_scores(state)[0]
    # shields: 3 distinct + 2 goal shields met + De Wu + OP10/contract counter = 7 -> 15 VP
    assert shield_count(state, 0) == 7 and parts["shields"] == 15
    assert parts["goal_seals"] == 6  # only the improved tailor counts
    assert parts["goods"] == 2 and parts["coins"] == 2  # 5 goods (camels are not goods), 27 coins
    # Vidal counts as 4 contracts: he has the most, seat 0 (2) is second, seat 1 (1) nothing
    assert [p["contracts"] for p in final_scores(state)] == [4, 0, 8]
    assert parts["total"] == 15 + 6 + 2 + 2 + 4


def test_ties_go_to_most_camels_then_share_the_rank() -> None:
    result = GameResult.from_keys([30, 30, 28], [4, 2, 9])
    assert result.ranks == [1, 2, 3]
    result = GameResult.from_keys([30, 30, 28], [4, 4, 9])
    assert result.ranks == [1, 1, 3]
    state = start(2, ["dewu", "abha"])
    state.phase = "over"
    state.res[0]["vp"], state.res[1]["vp"] = 20, 20
    state.res[0]["camels"], state.res[1]["camels"] = 1, 3
    assert state.result().ranks == [2, 1]
