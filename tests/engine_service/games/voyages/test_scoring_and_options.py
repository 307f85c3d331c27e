"""Final scoring with its tie rules, the D12/D13 options, and random play over every option combination."""

from __future__ import annotations

import json

from engine_service.games.base import canonical_json
from engine_service.games.rng import ChanceRng
from engine_service.games.voyages import SPEC, VoyagesState
from engine_service.games.voyages.scoring import final_scores

from .helpers import ids, my_turn, new_game, node, play


def scored_game() -> VoyagesState:
    state = new_game(3, 4)
    for seat in range(3):
        state.res[seat] = {"coins": 0, "camels": 0, "pepper": 0, "silk": 0, "gold": 0, "vp": 0}
        state.posts[seat] = []
        state.done[seat] = []
        state.goals[seat] = []
    state.beijing = [None] * 4
    return state


def test_final_scoring_goals_coins_beijing_goods_and_most_contracts() -> None:
    state = scored_game()
    # Seat 0: goal 15 (Sumatra + Anxi, 8 VP) complete, goal 0 (Moscow + Xian) half: 3 distinct goal cities.
    state.goals[0] = [0, 15]
    state.posts[0] = [node("sumatra"), node("anxi"), node("moscow"), node("beijing")]
    state.beijing = [1, 0, None, None]
    state.res[0].update(coins=29, pepper=3, silk=2, gold=0)
    state.done = [[1, 2], [3], [4, 5]]
    parts = final_scores(state)[0]
    assert parts["goal_cards"] == 8
    assert parts["goal_cities"] == 6
    assert parts["coins"] == 2
    assert parts["beijing"] == 7
    assert parts["goods"] == 2  # 5 goods, only because of the Beijing post
    assert parts["most_contracts"] == 7  # tied with seat 2: both score
    assert parts["total"] == 8 + 6 + 2 + 7 + 2 + 7
    assert final_scores(state)[2]["most_contracts"] == 7 and final_scores(state)[1]["most_contracts"] == 0


def test_goods_score_nothing_without_a_beijing_post_and_camels_are_not_goods() -> None:
    state = scored_game()
    state.res[1].update(pepper=4, silk=4, camels=9)
    assert final_scores(state)[1]["goods"] == 0
    state.posts[1] = [node("beijing")]
    state.beijing = [1, None, None, None]
    assert final_scores(state)[1]["goods"] == 4


def test_ties_go_to_most_camels_then_are_shared() -> None:
    state = scored_game()
    state.done = [[1], [2], [3]]  # everybody tied for most contracts: 7 each
    state.res[0].update(vp=10, camels=3)
    state.res[1].update(vp=10, camels=5)
    state.res[2].update(vp=10, camels=5)
    state._finish("completed")
    result = state.result()
    assert result.scores == [17, 17, 17]
    assert result.ranks == [3, 1, 1]
    assert result.tiebreaks == [3, 5, 5]


def test_city_card_timing_option_d12() -> None:
    for timing, offered in (("next_turn", False), ("immediate", True)):
        state = new_game(3, 1, city_card_timing=timing)
        state.chars = ["kubilai"] * 3
        state.posts[0] = [node("moscow")]
        my_turn(state, 0, ["c4", "c5"], coins=10, camels=10, pepper=5, silk=5, gold=5)
        state.posts_this_turn = [node("moscow")]
        assert ("place:card-moscow" in ids(state)) is offered


def test_exchange_direction_option_d13() -> None:
    for direction, expected in (
        ("same", ["stop", "ex:vp-to-coins"]),
        ("each", ["stop", "ex:vp-to-coins", "ex:coins-to-vp"]),
    ):
        state = new_game(3, 1, exchange_direction=direction)
        state.chars = ["kubilai"] * 3
        state.cards[0] = 19
        state.posts[0] = [node("moscow")]
        my_turn(state, 0, ["c3", "c5"], coins=9, vp=4)
        play(state, 0, "place:card-moscow", "dice:c3")
        assert ids(state) == ["ex:vp-to-coins", "ex:coins-to-vp"]
        play(state, 0, "ex:vp-to-coins")
        assert ids(state) == expected
        assert (state.res[0]["vp"], state.res[0]["coins"]) == (3, 12)


def test_card_16_keeps_one_exchange_whatever_the_option() -> None:
    state = new_game(3, 1, exchange_direction="each")
    state.chars = ["kubilai"] * 3
    state.cards[0] = 16
    state.posts[0] = [node("moscow")]
    my_turn(state, 0, ["c2", "c5"], coins=5, camels=5)
    play(state, 0, "place:card-moscow", "dice:c2", "ex:camel-to-coins")
    assert ids(state) == ["stop", "ex:camel-to-coins"]


def test_city_card_repeats_scale_with_the_die() -> None:
    state = new_game(3, 1)
    state.chars = ["kubilai"] * 3
    state.cards[0] = 5  # 2 silk -> 3 VP, up to die times
    state.posts[0] = [node("moscow")]
    my_turn(state, 0, ["c3", "c5"], silk=5, vp=0)
    play(state, 0, "place:card-moscow", "dice:c3")
    assert ids(state) == ["times:1", "times:2"]  # 5 silk pay twice
    play(state, 0, "times:2")
    assert (state.res[0]["silk"], state.res[0]["vp"]) == (1, 6)


def test_random_play_over_every_option_keeps_the_contract() -> None:
    """Random games with draft/random characters, expert options and every D5/D12/D13 value: JSON round
    trip, clone fidelity, no hidden-information leak and sampled states consistent with observations."""
    for g in range(9):
        players = 2 + g % 3
        options = {
            "characters": ("draft", "random", "first_game")[g % 3],
            "goal_draft": g % 2 == 0,
            "random_city_bonuses": g % 4 < 2,
            "johannes_jump_cost": ("free", "printed")[g % 2],
            "city_card_timing": ("next_turn", "immediate")[(g // 2) % 2],
            "exchange_direction": ("same", "each")[(g // 3) % 2],
        }
        state = SPEC.new_state(players, 40 + g, options)
        rng = ChanceRng(g)
        while not state.is_over():
            seat = state.current_seats()[0]
            if state.step % 23 == 0:
                loaded = SPEC.state_from_json(json.loads(json.dumps(state.to_json())))
                assert loaded.state_hash() == state.state_hash()
                assert state.clone().state_hash() == state.state_hash()
                for s in range(players):
                    view = state.observation(s)
                    hidden = state.shuffle_hidden(s, ChanceRng(s))
                    assert canonical_json(hidden.observation(s)) == canonical_json(view)
                    sampled = SPEC.sample_state(view, ChanceRng(s + 7))
                    assert canonical_json(sampled.observation(s)) == canonical_json(view)
            state.apply(seat, rng.choice(state.legal_actions(seat)).id)
        assert state.end_reason == "completed"
        assert len(state.result().ranks) == players


def test_the_heuristic_judges_a_seat_only_from_what_it_may_know() -> None:
    for g in range(4):
        players = 2 + g % 3
        state = SPEC.new_state(players, 70 + g, {"characters": "random", "goal_draft": g % 2 == 0})
        rng = ChanceRng(g)
        while not state.is_over():
            seat = state.current_seats()[0]
            if state.step % 17 == 0:
                for s in range(players):
                    value = SPEC.heuristic(state.clone(), s)
                    for k in range(2):
                        hidden = state.shuffle_hidden(s, ChanceRng(100 * k + s))
                        assert abs(SPEC.heuristic(hidden, s) - value) < 1e-9
            state.apply(seat, rng.choice(state.legal_actions(seat)).id)
        assert SPEC.heuristic(state, 0) == state.res[0]["vp"] + 0.01 * state.res[0]["camels"]
