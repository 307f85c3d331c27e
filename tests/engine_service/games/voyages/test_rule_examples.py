"""Every example of the rule text (`shared/rules/voyages.txt`) as an exact situation played through action ids.

Characters are set to Kubilai Khan where a test needs no ability: his only ability acts at setup (start in
Beijing), so after setup he plays by the plain rules.
"""

from __future__ import annotations

import pytest

from engine_service.games import IllegalAction
from engine_service.games.voyages import VoyagesState
from engine_service.games.voyages.tables import CONTRACTS, START_CONTRACTS

from .helpers import ids, my_turn, new_game, node, play

PLAIN = "kubilai"


def plain_game(players: int = 3, seed: int = 1, **options: object) -> VoyagesState:
    state = new_game(players, seed, **options)
    state.chars = [PLAIN] * players
    state.figures = [[node("venezia")] for _ in range(players)]
    state.posts = [[] for _ in range(players)]
    state.posts_left = [9] * players
    state.posts_placed = [0] * players
    state.beijing = [None] * 4
    return state


def test_silk_with_a_4_and_a_5_gives_3_silk() -> None:
    state = my_turn(plain_game(), 0, ["c1", "c4", "c5"], silk=0)
    play(state, 0, "place:silk")
    assert ids(state) == ["dice:c1+c4", "dice:c1+c5", "dice:c4+c5"]
    play(state, 0, "dice:c4+c5")
    assert ids(state) == ["column:1", "column:2", "column:3", "column:4"]
    play(state, 0, "column:4")
    assert state.res[0]["silk"] == 3
    assert state.dice[0] == ["c1"]
    assert state.spaces["silk"] == [[0, ["c4", "c5"]]]


def test_occupied_silk_costs_the_lowest_placed_die_4() -> None:
    """Blue has 2 dice on silk; Red places a 4 and a 5, pays 4 coins and takes up to 3 silk."""
    state = plain_game()
    state.spaces["silk"] = [[1, ["c1", "c2"]]]
    my_turn(state, 0, ["c4", "c5", "c6"], coins=10, silk=0)
    play(state, 0, "place:silk", "dice:c4+c5", "column:4")
    assert state.res[0]["coins"] == 6
    assert state.res[0]["silk"] == 3


def test_pepper_with_a_4_may_take_the_lower_column_2_pepper_and_a_coin() -> None:
    state = my_turn(plain_game(), 0, ["c4", "c6"], coins=5, pepper=0)
    play(state, 0, "place:pepper", "dice:c4")
    assert ids(state) == ["column:1", "column:2", "column:3", "column:4"]
    play(state, 0, "column:3")
    assert (state.res[0]["pepper"], state.res[0]["coins"]) == (2, 6)


def test_camels_with_a_6_gives_6_camels() -> None:
    state = my_turn(plain_game(), 0, ["c2", "c6"], camels=0)
    play(state, 0, "place:camels", "dice:c6", "column:6")
    assert state.res[0]["camels"] == 6


def test_khans_favor_3_then_4_and_never_lower() -> None:
    state = plain_game(4)
    my_turn(state, 2, ["c3", "c5"], camels=0, gold=0)
    play(state, 2, "place:khan", "dice:c3")
    play(state, 2, "good:gold")
    assert (state.res[2]["gold"], state.res[2]["camels"]) == (1, 2)
    # Red: a 4 may follow the 3; a 2 may not.
    my_turn(state, 3, ["c2", "c4"], camels=0)
    play(state, 3, "place:khan")
    assert ids(state) == ["dice:c4"] or state.khan[-1] == [3, "c4"]
    my_turn(state, 1, ["c2", "c2"])
    assert "place:khan" not in ids(state)


def test_khans_favor_colour_once_and_four_spaces_only() -> None:
    state = plain_game(4)
    state.khan = [[0, "c1"], [1, "c1"], [2, "c1"]]
    my_turn(state, 0, ["c5", "b5"])
    play(state, 0, "place:khan")
    assert ids(state) == ["good:pepper", "good:silk", "good:gold"], "only the black die may go (auto)"
    assert state.khan[-1] == [0, "b5"]
    play(state, 0, "good:silk")
    my_turn(state, 3, ["c6"])
    assert "place:khan" not in ids(state), "all four spaces are taken"


def test_neutral_dice_block_khan_spaces_in_3_and_2_player_games() -> None:
    assert new_game(3).khan == [[-1, "n1"]]
    two = new_game(2)
    assert two.khan == [[-1, "n1"], [-1, "n1"]]
    assert two.spaces["coins5"] == [[-1, ["n1"]]]


def test_contracts_die_3_reaches_spaces_1_to_3_and_the_row_slides_left() -> None:
    state = plain_game()
    state.board = [0, 1, 2, 3, 4, 5]
    start = state.active[0][0]
    my_turn(state, 0, ["c3", "c6"])
    play(state, 0, "place:contracts", "dice:c3")
    assert ids(state) == ["take:1", "take:2", "take:3"]
    play(state, 0, "take:2")
    assert ids(state) == ["done", "take:1", "take:3"]
    play(state, 0, "take:3")
    # Three contracts for two spaces: the older one goes to the bottom of the special pile (the only
    # possible discard, so it is made without asking).
    assert state.active[0] == [1, 2]
    assert state.board == [0, 3, 4, 5]
    assert state.special[-1] == start


def test_contract_spaces_5_and_6_give_coins_or_camels() -> None:
    state = plain_game()
    state.board = [0, 1, 2, 3, 4, 5]
    state.active[0] = []
    my_turn(state, 0, ["c6", "c1"], coins=0, camels=0)
    play(state, 0, "place:contracts", "dice:c6", "take:5", "take:6")
    assert ids(state) == ["bonus:coins", "bonus:camels"]
    play(state, 0, "bonus:coins")  # space 5: 1 coin
    play(state, 0, "bonus:camels")  # space 6: 2 camels
    assert (state.res[0]["coins"], state.res[0]["camels"]) == (1, 2)
    assert state.active[0] == [4, 5]


def test_contracts_die_1_takes_exactly_space_1() -> None:
    state = plain_game()
    state.board = [7, 8, 9]
    state.active[0] = []
    my_turn(state, 0, ["c1", "c2"])
    play(state, 0, "place:contracts", "dice:c1")
    assert state.active[0] == [7]
    assert state.board == [8, 9]


def test_empty_board_at_turn_start_draws_two_from_the_special_pile() -> None:
    state = plain_game()
    state.board = []
    top_two = state.special[:2]
    state.turn_seat = 2
    state._end_turn()
    assert state.turn_seat == 0
    assert state.board == top_two


def test_travel_2_and_4_moves_up_to_2_and_2_steps_cost_7_coins() -> None:
    state = plain_game()
    state.outposts[str(node("moscow"))] = 0  # 3 coins outpost bonus
    my_turn(state, 0, ["c2", "c4", "c6"], coins=10)
    play(state, 0, "place:travel", "dice:c2+c4")
    routes = ids(state)
    assert "route:moscow:7coins:0camels" in routes
    assert "route:alexandria:3coins:0camels" in routes
    assert not any(r.startswith("route:anxi") for r in routes), "Anxi is 3 steps away"
    play(state, 0, "route:moscow:7coins:0camels")
    assert state.figures[0] == [node("moscow")]
    assert node("moscow") in state.posts[0]
    assert state.res[0]["coins"] == 10 - 7 + 3  # the first post in Moscow takes its outpost bonus
    assert str(node("moscow")) not in state.outposts
    assert state.last_travel == 0


def test_travel_pays_route_extra_costs_and_may_end_on_an_oasis() -> None:
    state = plain_game()
    my_turn(state, 0, ["c1", "c1", "c6"], coins=3, camels=3)
    play(state, 0, "place:travel", "dice:c1+c1")
    assert ids(state) == [
        "route:oasis-a:3coins:0camels",
        "route:alexandria:3coins:0camels",
        "route:oasis-e:3coins:3camels",
    ]
    play(state, 0, "route:oasis-e:3coins:3camels")
    assert (state.res[0]["coins"], state.res[0]["camels"]) == (0, 0)
    assert state.posts[0] == []


def test_small_city_bonus_now_and_at_every_later_round_start() -> None:
    """Red ends in a small city (Adana: 1 camel and 3 coins), places a post and takes the bonus at once."""
    state = plain_game()
    my_turn(state, 0, ["c3", "c5", "c6"], coins=12, camels=2)
    play(state, 0, "place:travel", "dice:c3+c5", "route:adana:12coins:2camels")
    assert state.posts[0] == [node("adana")]
    assert (state.res[0]["coins"], state.res[0]["camels"]) == (3, 1)
    # Next round: the bonus again.
    for seat in range(3):
        state.dice[seat] = []
    state.pending = []
    coins = state.res[0]["coins"]
    state._end_round()
    state._run()
    while state.pending and state.pending[0]["t"] == "comp":
        state.apply(int(state.pending[0]["seat"]), ids(state)[0])
    assert state.round == 2
    assert state.res[0]["coins"] >= coins + 3


def test_occupied_space_fee_4_and_brown_city_cards_never_shared() -> None:
    state = plain_game()
    state.spaces["coins5"] = [[1, ["c2"]]]
    my_turn(state, 0, ["c4", "c6"], coins=4)
    play(state, 0, "place:coins5")  # the 6 would cost 6: the 4 is the only choice, taken at once
    assert state.res[0]["coins"] == 4 - 4 + 5
    # A city card used once this round is closed to everybody.
    state.posts[1] = [node("moscow")]
    state.card_used[0] = 2
    my_turn(state, 1, ["c6", "c5"])
    assert "place:card-moscow" not in ids(state)


def test_a_black_die_may_use_a_space_the_colour_already_used() -> None:
    state = plain_game()
    state.spaces["camels"] = [[0, ["c2"]]]
    my_turn(state, 0, ["b3", "c5"], coins=5, camels=0)
    play(state, 0, "place:camels")
    # Only the black die may go there (the colour is already on it): it is placed at once, paying 3.
    assert state.spaces["camels"][-1] == [0, ["b3"]]
    assert state.res[0]["coins"] == 2
    play(state, 0, "column:3")
    assert state.res[0]["camels"] == 3
    with pytest.raises(IllegalAction):
        state.apply(0, "place:camels")


def test_colour_once_per_space_across_the_round() -> None:
    state = plain_game()
    state.spaces["pepper"] = [[0, ["c3"]]]
    my_turn(state, 0, ["c5", "c6"])
    assert "place:pepper" not in ids(state)


def test_compensation_13_gives_2_coins_or_camels_in_any_mix() -> None:
    for seed in range(400):
        state = new_game(3, seed)
        comp = [e for e in state.pending if e["t"] == "comp" and e["n"] == 2]
        if comp and state.pending[0] is comp[0]:
            break
    else:  # pragma: no cover - the seeds above contain one
        pytest.fail("no seed with a total of 13 first in line")
    seat = int(comp[0]["seat"])
    assert sum(int(t[1:]) for t in state.dice[seat]) == 13
    assert ids(state) == ["comp:2coins+0camels", "comp:1coins+1camels", "comp:0coins+2camels"]
    before = dict(state.res[seat])
    play(state, seat, "comp:1coins+1camels")
    assert state.res[seat]["coins"] == before["coins"] + 1
    assert state.res[seat]["camels"] == before["camels"] + 1


def test_bonus_actions_money_bag_reroll_adjust_and_one_black_die_per_turn() -> None:
    state = plain_game()
    my_turn(state, 0, ["c6", "c1"], coins=0, camels=9)
    play(state, 0, "bonus")
    assert ids(state) == [
        "bag:c1",
        "bag:c6",
        "black",
        "reroll:c1",
        "reroll:c6",
        "adjust:c1:+1",
        "adjust:c6:-1",
    ], "no wrap from 6 to 1 or 1 to 6"
    play(state, 0, "adjust:c1:+1")
    assert state.dice[0] == ["c2", "c6"] and state.res[0]["camels"] == 7
    play(state, 0, "bonus", "reroll:c2")
    assert state.res[0]["camels"] == 6 and len(state.dice[0]) == 2
    play(state, 0, "bonus", "black")
    assert state.res[0]["camels"] == 3 and any(t.startswith("b") for t in state.dice[0])
    play(state, 0, "bonus")
    assert "black" not in ids(state), "one black die per turn through the bonus action"
    play(state, 0, ids(state)[0])
    assert state.res[0]["coins"] == 3 and len(state.dice[0]) == 2


def test_completing_a_contract_pays_its_cost_and_takes_every_reward() -> None:
    state = plain_game()
    state.active[0] = [4]  # 1 camel + 4 gold -> 7 VP + 3 camels
    my_turn(state, 0, ["c3"], camels=1, gold=4, vp=0)
    play(state, 0, "complete:4")
    assert state.res[0]["vp"] == 7 and state.res[0]["gold"] == 0 and state.res[0]["camels"] == 3
    assert state.done[0] == [4] and state.active[0] == []


def test_eighth_and_ninth_posts_score_5_and_10() -> None:
    state = plain_game()
    state.posts_left[0] = 2
    state.posts_placed[0] = 7
    my_turn(state, 0, ["c1", "c1", "c1", "c1", "c6"], coins=20, vp=0)
    play(state, 0, "place:travel", "dice:c1+c1", "route:alexandria:3coins:0camels")
    assert state.res[0]["vp"] == 5
    state.figures[0] = [node("venezia")]
    state.spaces["travel"] = []
    my_turn(state, 0, ["c1", "c2", "c6"], coins=20, vp=5)
    play(state, 0, "place:travel", "dice:c1+c2", "route:oasis-a:3coins:0camels")
    state.spaces["travel"] = []
    my_turn(state, 0, ["c1", "c1", "c6"], coins=20, vp=5)
    play(state, 0, "place:travel", "dice:c1+c1", "route:moscow:3coins:0camels")
    assert state.res[0]["vp"] == 15


def test_out_of_posts_moves_an_existing_post_without_milestones() -> None:
    state = plain_game()
    state.posts[0] = [node("alexandria"), node("ormuz")]
    state.posts_left[0] = 0
    state.posts_placed[0] = 9
    state.outposts[str(node("moscow"))] = 9  # 5 coins
    my_turn(state, 0, ["c2", "c2", "c6"], coins=7, vp=0)
    play(state, 0, "place:travel", "dice:c2+c2", "route:moscow:7coins:0camels")
    assert ids(state) == ["relocate:alexandria", "relocate:ormuz"]
    play(state, 0, "relocate:ormuz")
    assert sorted(state.posts[0]) == sorted([node("alexandria"), node("moscow")])
    assert state.res[0]["vp"] == 0 and state.res[0]["coins"] == 5  # the outpost bonus still comes


def test_beijing_posts_take_the_highest_empty_space_and_venezia_takes_none() -> None:
    state = plain_game()
    state.beijing = [1, None, None, None]
    state.figures[0] = [node("oasis-c")]
    my_turn(state, 0, ["c1", "c1", "c6"], coins=3)
    play(state, 0, "place:travel", "dice:c1+c1")  # Beijing is the only affordable step
    assert state.beijing == [1, 0, None, None]
    state.figures[2] = [node("oasis-a")]
    state.spaces["travel"] = []
    my_turn(state, 2, ["c1", "c1", "c6"], coins=3)
    play(state, 2, "place:travel", "dice:c1+c1", "route:venezia:3coins:0camels")
    assert state.posts[2] == []


def test_the_last_traveller_starts_the_next_round() -> None:
    state = plain_game()
    my_turn(state, 2, ["c1", "c1"], coins=3)
    play(state, 2, "place:travel", "route:alexandria:3coins:0camels")
    my_turn(state, 1, ["c1", "c1"], coins=6)
    play(state, 1, "place:travel", "route:alexandria:3coins:0camels")
    for seat in range(3):
        state.dice[seat] = []
    state.pending = []
    state._end_round()
    assert state.start_player == 1


def test_round_end_moves_board_contracts_to_the_special_pile_and_five_rounds_end_the_game() -> None:
    state = plain_game()
    board = list(state.board)
    for seat in range(3):
        state.dice[seat] = []
    state.pending = []
    state._end_round()
    assert state.special[-len(board) :] == board
    assert state.round == 2 and len(state.board) == 6 and len(state.round_piles) == 3
    for _ in range(3):
        for seat in range(3):
            state.dice[seat] = []
        state.pending = []
        state._end_round()
    assert state.round == 5 and state.round_piles == []
    for seat in range(3):
        state.dice[seat] = []
    state.pending = []
    state._end_round()
    assert state.is_over() and state.end_reason == "completed"


def test_starting_contracts_come_from_the_six_and_setup_per_player_count() -> None:
    for players in (2, 3, 4):
        state = new_game(players, seed=players)
        assert [r["coins"] for r in state.res] == [7 + s for s in range(players)] or state.pending
        assert all(state.res[s]["camels"] >= 2 for s in range(players))
        assert state.black_left == players + 1
        assert len(state.board) == 6 and [len(p) for p in state.round_piles] == [6, 6, 6, 6]
        assert state.special_hidden == 8 - (1 if "matteo" in state.chars else 0)
        assert len(state.cards) == 9 and len(set(state.cards)) == 9
        assert len(state.outposts) == 7
        starting = [a[0] for a in state.active]
        assert set(starting) <= set(START_CONTRACTS) and len(set(starting)) == players
        assert all(len(g) == 2 for g in state.goals)
        assert len({g for goals in state.goals for g in goals}) == 2 * players
        assert state.chars == ["raschid", "matteo", "berke", "mercator"][:players]
        assert all(CONTRACTS[c]["start"] is False for c in state.board)
