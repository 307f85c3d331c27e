"""One test (or more) per character ability, including the interactions listed in the reference (§5.7)."""

from __future__ import annotations

from engine_service.games.voyages import VoyagesState
from engine_service.games.voyages.tables import CHARACTER_KEYS

from .helpers import ids, my_turn, new_game, node, play


def drafted(players: int, characters: list[str], seed: int = 1) -> VoyagesState:
    """A game whose seats hold `characters` (seat order), chosen through the draft decisions."""
    state = new_game(players, seed, characters="draft")
    spare = next(key for key in CHARACTER_KEYS if key not in characters)
    state.draft_pool = sorted([*characters, spare])
    for seat in reversed(range(players)):
        assert state.current_seats() == [seat]
        play(state, seat, f"pick:{characters[seat]}")
    assert state.chars == characters
    return state


def test_draft_reveals_players_plus_one_and_the_last_seat_picks_first() -> None:
    state = new_game(3, 5, characters="draft")
    assert len(state.draft_pool) == 4
    assert state.current_seats() == [2]
    assert ids(state) == [f"pick:{key}" for key in state.draft_pool]


def test_raschid_does_not_roll_chooses_values_and_gets_no_compensation() -> None:
    state = new_game(3, 2)  # first game: seat 0 is Raschid
    assert state.chars[0] == "raschid"
    assert state.dice[0] == ["c0"] * 5
    assert not any(e["t"] == "comp" and e["seat"] == 0 for e in state.pending)
    my_turn(state, 0, ["c0", "c0", "c0"], coins=10)
    play(state, 0, "place:pepper")  # unoccupied: the value only caps the column, so 6 is the choice
    assert state.spaces["pepper"][-1] == [0, ["c6"]]
    assert ids(state) == [f"column:{k}" for k in range(1, 7)]
    play(state, 0, "column:6")
    # On an occupied space every value is a fee/strength trade.
    state.spaces["camels"] = [[1, ["c2"]]]
    my_turn(state, 0, ["c0", "c0"], coins=10)
    play(state, 0, "place:camels")
    assert ids(state) == [f"dice:c0@{v}" for v in range(1, 7)]
    play(state, 0, "dice:c0@3")
    assert state.res[0]["coins"] == 7
    my_turn(state, 0, ["c0"], camels=5)
    play(state, 0, "bonus")
    assert ids(state) == ["bag:c0", "black"], "nothing to reroll or adjust on unrolled dice"


def test_raschid_sets_black_dice_too() -> None:
    state = new_game(3, 2)
    my_turn(state, 0, ["c0"], camels=3)
    play(state, 0, "bonus", "black")
    assert state.dice[0] == ["b0", "c0"]


def test_matteo_gets_the_white_die_and_the_top_special_contract_each_round() -> None:
    state = new_game(3, 2)  # seat 1 is Matteo
    assert state.chars[1] == "matteo"
    assert sum(1 for t in state.dice[1] if t.startswith("w")) == 1 and len(state.dice[1]) == 6
    assert len(state.active[1]) == 2 and state.special_hidden == 7


def test_matteo_white_die_reuses_a_space_his_colour_used_and_counts_for_compensation() -> None:
    state = new_game(3, 2)
    state.spaces["camels"] = [[1, ["c4"]]]
    my_turn(state, 1, ["c5", "w2"], coins=5, camels=0)
    play(state, 1, "place:camels")  # only the white die may go: placed at once, paying 2
    assert state.spaces["camels"][-1] == [1, ["w2"]] and state.res[1]["coins"] == 3


def test_matteo_full_hand_may_decline_or_discard_for_the_round_contract() -> None:
    state = new_game(3, 2)
    state.active[1] = [0, 1]
    state.pending = [{"t": "draw_contract", "seat": 1}]
    top = state.special[0]
    state._run()
    assert ids(state) == ["decline", "discard:0", "discard:1"]
    play(state, 1, "discard:1")
    assert state.active[1] == [0, top] and state.special[-1] == 1


def test_berke_pays_nothing_on_occupied_blue_spaces_but_not_on_city_cards() -> None:
    state = new_game(3, 2)  # seat 2 is Berke
    state.spaces["silk"] = [[0, ["c3", "c3"]]]
    my_turn(state, 2, ["c5", "c6", "c1"], coins=0, silk=0)
    play(state, 2, "place:silk", "dice:c5+c6", "column:5")
    assert state.res[2]["coins"] == 1 and state.res[2]["silk"] == 3  # column 5 pays a coin, no fee
    state.posts[2] = [node("moscow")]
    state.card_used[0] = 0
    my_turn(state, 2, ["c6"])
    assert "place:card-moscow" not in ids(state)


def test_mercator_gains_from_other_players_bazaar_khan_and_5_coins_by_player_count() -> None:
    four = new_game(4, 2)  # seat 3 is Mercator (4-player copy)
    my_turn(four, 0, ["c0", "c0"])
    pepper = four.res[3]["pepper"]
    play(four, 0, "place:pepper", "column:2")
    assert four.res[3]["pepper"] == pepper + 1
    camels = four.res[3]["camels"]
    my_turn(four, 1, ["c1", "c2"])
    play(four, 1, "place:khan", "dice:c1", "good:gold")
    assert four.res[3]["camels"] == camels, "the 4-player copy gains nothing from Khan's Favor"
    three = drafted(3, ["berke", "mercator", "johannes"])
    camels = three.res[1]["camels"]
    my_turn(three, 0, ["c2", "c3"])
    play(three, 0, "place:khan", "dice:c2", "good:gold")
    assert three.res[1]["camels"] == camels + 1
    two = drafted(2, ["berke", "mercator"])
    coins = two.res[1]["coins"]
    my_turn(two, 0, ["c2", "c3"], coins=0)
    play(two, 0, "place:coins5", "dice:c2")
    assert two.res[0]["coins"] == 5, "Berke pays no fee on the neutral-occupied 5 coins"
    assert two.res[1]["coins"] == coins + 2
    my_turn(two, 1, ["c1", "c4"], coins=10)
    own_pepper = two.res[1]["pepper"]
    play(two, 1, "place:pepper", "dice:c4", "column:4")
    assert two.res[1]["pepper"] == own_pepper + 3, "no gift from his own actions"


def test_kubilai_starts_in_beijing_on_the_10_space_with_one_post_placed() -> None:
    state = drafted(3, ["kubilai", "berke", "matteo"])
    assert state.figures[0] == [node("beijing")] and state.posts[0] == [node("beijing")]
    assert state.beijing == [0, None, None, None]
    assert state.posts_left[0] == 8 and state.posts_placed[0] == 1
    my_turn(state, 0, ["c1", "c1"], coins=3)
    play(state, 0, "place:travel")
    assert "route:xian:3coins:0camels" in ids(state)


def test_niccolo_splits_one_travel_between_two_figures_and_gets_a_camel_each_round() -> None:
    state = drafted(3, ["niccolo", "berke", "matteo"])
    assert state.figures[0] == [node("venezia"), node("venezia")]
    for seat in range(3):
        state.dice[seat] = []
    state.pending = []
    camels = state.res[0]["camels"]
    state._end_round()
    state._run()
    assert state.res[0]["camels"] >= camels + 1
    my_turn(state, 0, ["c3", "c4", "c6"], coins=12, camels=0)
    play(state, 0, "place:travel", "dice:c3+c4", "route:f1:alexandria:3coins:0camels")
    assert ids(state)[0] == "stay"
    assert "route:f2:moscow:9coins:0camels" in ids(state)  # 3 steps in all cost 12
    play(state, 0, "route:f2:moscow:9coins:0camels")
    assert state.figures[0] == [node("alexandria"), node("moscow")]
    assert {node("alexandria"), node("moscow")} <= set(state.posts[0])
    assert state.res[0]["coins"] >= 0


def test_wilhelm_posts_in_every_city_passed_and_scores_10_for_the_eleventh() -> None:
    state = drafted(3, ["wilhelm", "berke", "matteo"])
    assert state.posts_left[0] == 11
    state.outposts[str(node("alexandria"))] = 0
    my_turn(state, 0, ["c3", "c4", "c6"], coins=12, camels=2)
    play(state, 0, "place:travel", "dice:c3+c4")
    route = "route:adana:via=alexandria+adana:12coins:2camels"
    assert route in ids(state)
    play(state, 0, route)
    assert state.posts[0] == [node("alexandria"), node("adana")]
    assert state.res[0]["coins"] == 0 + 3 + 3  # outpost bonus (3 coins) and Adana (3 coins + 1 camel)
    state.posts_left[0] = 1
    state.posts_placed[0] = 10
    state.spaces["travel"] = []
    state.figures[0] = [node("oasis-a")]
    my_turn(state, 0, ["c1", "c1", "c6"], coins=3, vp=0)
    play(state, 0, "place:travel", "dice:c1+c1", "route:moscow:via=moscow:3coins:0camels")
    assert state.res[0]["vp"] == 10 and state.posts_left[0] == 0


def test_johannes_jumps_between_oases_as_one_step_and_gets_3_coins_each_round() -> None:
    state = drafted(3, ["johannes", "berke", "matteo"])
    my_turn(state, 0, ["c3", "c3", "c6"], coins=12, camels=0)
    play(state, 0, "place:travel", "dice:c3+c3")
    # Venezia -> Oasis A -> (jump) Oasis C -> Beijing: 3 steps, 12 coins, no route costs.
    assert "route:beijing:12coins:0camels" in ids(state)
    for seat in range(3):
        state.dice[seat] = []
    state.pending = []
    coins = state.res[0]["coins"]
    state._end_round()
    state._run()
    assert state.res[0]["coins"] >= coins + 3


def test_johannes_jump_route_cost_option_d5() -> None:
    for option, cost in (("free", 3), ("printed", 8)):
        state = drafted(3, ["johannes", "berke", "matteo"])
        state.options["johannes_jump_cost"] = option
        state.figures[0] = [node("oasis-b")]
        my_turn(state, 0, ["c1", "c1", "c6"], coins=20)
        play(state, 0, "place:travel", "dice:c1+c1")
        assert f"route:oasis-c:{cost}coins:0camels" in ids(state)
