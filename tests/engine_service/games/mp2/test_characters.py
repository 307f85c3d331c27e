"""One test per character ability: the 7 base characters and the 4 of The Caravans."""

from __future__ import annotations

from engine_service.games.mp2.scoring import contract_counts, shield_count
from tests.engine_service.games.mp2.helpers import act, clear_turn, go, ids, routes, settle, start, zero


def test_mongke_ending_on_an_oasis_is_a_step_and_scores_it() -> None:
    state = start(2, ["mongke", "abha"])
    clear_turn(state, 0, ["c1"])
    state.figures[0] = ["XIA"]
    zero(state, 0, coins=10, camels=5)
    act(state, "place:travel1:c1")
    assert "route:OG:3coins+1camels" in ids(state) and "route:FUZ:4coins+2camels" in ids(state)
    act(state, "route:OG:3coins+1camels")
    assert state.figures[0] == ["OG"] and state.res[0]["vp"] == 3
    act(state, "oasis:0coins+1camels")
    assert state.res[0]["coins"] == 10 - 2 - 3 and state.res[0]["camels"] == 5 - 1 + 1


def test_de_wu_takes_a_seal_with_one_die_gains_jade_on_improving_and_a_shield() -> None:
    state = start(2, ["dewu", "abha"])
    clear_turn(state, 0, ["c4"])
    zero(state, 0, coins=10, gold=2)
    assert "place:seals:c4" in ids(state)
    act(state, "place:seals:c4")
    assert ids(state) == ["seal:farmer", "seal:spicer", "seal:tailor", "seal:jeweler"]
    act(state, "seal:jeweler")
    assert state.seals[0] == {"jeweler": 1} and state.res[0]["jade"] == 3
    act(state, "improve:jeweler")  # 6 coins + 2 gold; +1 jade (De Wu) and the "!" 1 gold + 1 coin
    assert state.seals[0] == {"jeweler": 2}
    assert state.res[0]["jade"] == 4 and state.res[0]["gold"] == 1 and state.res[0]["coins"] == 5
    assert shield_count(state, 0) == 1  # no posts: only De Wu's +1


def test_abha_gets_coins_each_round_jade_per_contract_and_a_point_per_jade() -> None:
    state = start(2, ["abha", "dewu"])
    assert state.res[0]["coins"] >= 8 + 2
    clear_turn(state, 0, ["c3"])
    state.active[0] = ["C34"]  # 1 camel + 2 jade -> 4 VP + 4 coins
    zero(state, 0, camels=1, jade=2)
    act(state, "complete:C34")
    assert state.res[0]["jade"] == 1 and state.res[0]["vp"] == 4 + 1
    act(state, "bag:c3:jade")
    assert state.res[0]["jade"] == 2 and state.res[0]["vp"] == 6


def test_mailin_has_two_figures_splits_a_travel_and_doubles_one_bonus() -> None:
    state = start(2, ["mailin", "abha"])
    assert state.figures[0] == ["BEI", "BEI"]
    clear_turn(state, 0, ["c3", "c3"])
    zero(state, 0, coins=20, camels=10)
    act(state, "place:travel2:c3+c3")
    go(state, "XIA", figure=0)
    assert ids(state)[0] == "move:stop" and routes(state, "KAR", figure=1)  # the other figure may go on
    go(state, "KAR", figure=1)
    settle(state)
    assert state.figures[0] == ["XIA", "KAR"] and set(state.posts[0]) == {"XIA", "KAR"}
    # round start: every bonus once, the chosen one twice
    state.posts[0] = ["KAS", "FUZ"]
    state.markers["KAS"], state.markers["FUZ"] = "CB1", "CB2"  # 5 coins, 3 camels
    zero(state, 0)
    state._push([{"t": "income", "seat": 0}])
    state._run()
    assert ids(state) == ["double:KAS", "double:FUZ"]
    act(state, "double:FUZ")
    assert state.res[0]["coins"] == 5 and state.res[0]["camels"] == 6


def test_filippo_takes_other_players_outposts_and_uses_them_later() -> None:
    state = start(2, ["abha", "filippo"])
    clear_turn(state, 0, ["c1"])
    state.outposts["KAR"] = "OP06"  # 6 coins
    zero(state, 0, coins=10, camels=2)
    act(state, "place:travel1:c1")
    go(state, "KAR")
    settle(state)
    assert (
        state.res[0]["coins"] == 10 - 2 + 6
        and state.kept_tiles[1] == ["OP06"]
        and "KAR" not in state.outposts
    )
    clear_turn(state, 1, ["c2"])
    zero(state, 1)
    assert "outpost:OP06" in ids(state)
    act(state, "outpost:OP06")
    assert state.res[1]["coins"] == 6 and state.kept_tiles[1] == []


def test_isabella_face_bonuses_and_pairs() -> None:
    state = start(2, ["isabella", "abha"])
    clear_turn(state, 0, ["c1", "c1", "c2", "c3", "c6"])
    zero(state, 0)
    state._push([{"t": "isabella", "seat": 0}])
    assert ids(state) == ["pairs:none", "pairs:1x1"]
    act(state, "pairs:1x1")  # the pair of 1s gives 1 jade; 2 -> 1 VP, 3 -> 1 camel, 6 -> 2 coins
    assert state.res[0] == {"coins": 2, "camels": 1, "pepper": 0, "silk": 0, "gold": 0, "jade": 1, "vp": 1}
    clear_turn(state, 0, ["c1"])
    zero(state, 0, camels=1)
    state.rng.state = 7
    act(state, "reroll:c1")  # a paid reroll pays its face bonus too
    value = int(state.dice[0][0][1:])
    expected = {
        1: ("coins", 2),
        6: ("coins", 2),
        2: ("vp", 1),
        5: ("vp", 1),
        3: ("camels", 1),
        4: ("camels", 1),
    }
    name, amount = expected[value]
    assert state.res[0][name] == amount


def test_gantulga_uses_only_the_lower_travel_and_pays_no_coin_or_camel_route_costs() -> None:
    state = start(2, ["gantulga", "abha"])
    clear_turn(state, 0, ["c6", "c6", "c6"])
    zero(state, 0, coins=2)
    state.outposts.pop("KIN", None)
    travel = [a for a in ids(state) if ":travel" in a]
    assert travel and all(a.startswith("place:travel1:") for a in travel)
    act(state, "place:travel1:c6")
    assert go(state, "KIN")["id"] == "route:KIN:free"  # 2 coins + 1 camel on the map: free for Gantulga
    assert state.res[0]["coins"] == 0 and state.res[0]["camels"] == 0
    assert state.next_first == 0 and state.travel_rank == 1


def test_vidal_takes_one_contract_sells_a_set_once_a_round_and_counts_four_contracts() -> None:
    state = start(3, ["vidal", "abha", "dewu"], caravans=True)
    clear_turn(state, 0, ["c2", "c3"])
    state.posts[0] = ["XIA"]
    state.active[0] = []
    zero(state, 0, pepper=2, silk=2, gold=2)
    act(state, "place:contracts:c2")
    assert [a for a in ids(state) if a.startswith("take:")] == ["take:XIA:1", "take:XIA:2"]
    act(state, "take:XIA:1")  # one contract ends the choice
    settle(state)
    assert len(state.active[0]) == 1 and state.res[0]["coins"] == 3
    act(state, "vidal:set")
    assert state.res[0]["vp"] == 5 and "vidal:set" not in ids(state)
    assert contract_counts(state)[0] == 4


def test_tebaldo_improves_without_coins_and_scores_an_extra_shield() -> None:
    state = start(2, ["tebaldo", "abha"], caravans=True)
    clear_turn(state, 0, ["c2"])
    state.seals[0] = {"tailor": 1}
    zero(state, 0, silk=2)
    assert "improve:tailor" in ids(state)  # 5 coins + 2 silk, coins waived
    act(state, "improve:tailor")
    assert state.seals[0] == {"tailor": 2} and state.res[0]["silk"] == 1 and state.res[0]["camels"] == 1
    assert shield_count(state, 0) == 1


def test_donata_figures_camels_on_occupied_spaces_and_khan_after_a_figure() -> None:
    state = start(4, ["abha", "dewu", "isabella", "donata"])
    assert len(state.spare_figs[3]) == 3 and len(set(state.spare_figs[3])) == 3
    clear_turn(state, 3, ["c2", "c4"])
    state.spare_figs[3] = [0, 1, 2]
    state.spaces["book1"] = [[0, ["c3"]]]
    zero(state, 3, coins=5)
    assert "place:book1:F1" not in ids(state)  # figures only on free spaces
    act(state, "place:book1:c2")  # occupied: fee 2, then +2 camels
    act(state, "offer:free1")
    assert state.res[3]["coins"] == 3 and state.res[3]["camels"] == 2 + 1
    clear_turn(state, 3, ["c4"])
    state.khan = []
    act(state, "place:khan:F1")  # a value-6 die, counting as yellow (seat 1) on Khan's Favor
    assert state.khan == [[1, "c6"]]
    clear_turn(state, 2, ["c5", "c6"])
    assert "place:khan:c5" not in ids(state) and "place:khan:c6" in ids(state)
    clear_turn(state, 1, ["c6"])
    assert "place:khan:c6" not in ids(state)  # yellow is already on Khan's Favor
    clear_turn(state, 3, [])
    assert [a for a in ids(state) if a.startswith("place:")] == []  # no die left: no figure either


def test_tartarino_runs_two_caravans_moves_both_and_scores_each_route() -> None:
    state = start(2, ["tartarino", "abha"], caravans=True)
    clear_turn(state, 0, ["c1", "c2"])
    state.figures[0] = ["BEI"]
    zero(state, 0, pepper=2)
    act(state, "claim:RT02:KHO")
    act(state, "load:pepper")
    assert any(a.startswith("claim:RT03:") for a in ids(state))  # a second tile while one is held
    act(state, "claim:RT03:KAB")
    assert len(state.caravans[0]) == 2
    act(state, "place:book1:c1")
    act(state, "offer:free1")
    assert state.pending[0]["left"] == [1, 1]
    act(state, "cstep:1:OB")
    act(state, "cstep:2:BAL")
    assert [c["at"] for c in state.caravans[0]] == ["OB", "BAL"]
    state.figures[0] = ["OB"]
    zero(state, 0)
    act(state, "caravan:1:complete")
    act(state, "sell:pepper")
    assert ids(state) == ["return:RT02", "return:RT03"]
    act(state, "return:RT03")  # any of his tiles goes back; the other caravan keeps RT02
    assert state.res[0]["vp"] == 3 + 2 and state.res[0]["jade"] == 1
    assert state.tiles["RT03"] == "down" and state.caravans[0] == [
        {"tile": "RT02", "at": "BAL", "goods": ["pepper"]}
    ]
