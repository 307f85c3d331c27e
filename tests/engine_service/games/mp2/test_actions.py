"""Action spaces and bonus actions: placement rules, books, Khan's Favor, seals, travel, contracts,
special cities, city cards, jade as a wildcard, first player, round start."""

from __future__ import annotations

import pytest

from engine_service.games.base import IllegalAction
from tests.engine_service.games.mp2.helpers import act, clear_turn, go, ids, routes, settle, start, zero


def test_fallback_first_and_bag_counts_as_the_action_when_nothing_can_be_placed() -> None:
    state = start(3, ["abha", "dewu", "isabella"])
    clear_turn(state, 0, ["c2", "c5"])
    assert ids(state)[0] == "bag:c2:coins"  # no `end` before the normal action
    with pytest.raises(IllegalAction):
        act(state, "end")
    # every space blocked: only the money bag, which then counts as the turn's action
    for name in state.spaces:
        state.spaces[name] = [[0, ["c1", "c1", "c1"]]]
    state.khan = [[1, "c6"]] * 4
    for city in ("BAL", "HOR", "BAG"):
        state.brown[f"{city}-1"] = state.brown[f"{city}-2"] = [1, "c1"]
    state.cards = {}
    clear_turn(state, 0, ["c2", "c5"])
    assert not [a for a in ids(state) if a.startswith("place:")]
    act(state, "bag:c2:camels")
    assert state.main_done and ids(state)[0] == "end"


def test_blue_space_fee_colour_once_and_jade_pays_the_fee() -> None:
    state = start(3, ["abha", "dewu", "isabella"])
    clear_turn(state, 0, ["c4", "c5"])
    zero(state, 0, coins=0, jade=5)
    state.spaces["book2"] = [[1, ["c6"]]]
    assert "place:book2:c4" in ids(state)
    act(state, "place:book2:c4")  # occupied: 4 coins, paid with jade
    assert state.res[0]["jade"] == 1
    act(state, "offer:free1")
    clear_turn(state, 0, ["c5", "b5"])
    zero(state, 0, coins=5)
    assert "place:book2:c5" not in ids(state) and "place:book2:b5" in ids(state)  # colour once, black free


def test_books_offers_and_minimum_dice() -> None:
    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c2", "c4"])
    zero(state, 0, jade=1)
    assert "place:book2:c2" not in ids(state) and "place:book2:c4" in ids(state)
    assert "place:book3a:c4" not in ids(state)
    act(state, "place:book1:c2")
    assert ids(state) == ["offer:free1", "offer:free2", "offer:jade1"]
    tile = state.offer_now["I"]
    act(state, "offer:jade1")
    from engine_service.games.mp2.tables import OFFER_TILES

    gained = OFFER_TILES[tile]["jade1"]
    assert all(state.res[0][k] >= v for k, v in gained.items() if k != "jade") and state.res[0]["jade"] == 0


def test_khan_favor_is_non_decreasing_and_colour_once() -> None:
    state = start(3, ["abha", "dewu", "isabella"])  # 3 players: a neutral 1 on the first space
    clear_turn(state, 0, ["c3", "c5"])
    zero(state, 0)
    act(state, "place:khan:c3")
    assert state.res[0]["coins"] == 4 and state.res[0]["camels"] == 2
    clear_turn(state, 1, ["c2", "c3", "b1"])
    assert [a for a in ids(state) if a.startswith("place:khan")] == ["place:khan:c3"]
    clear_turn(state, 0, ["c5", "b4"])
    assert [a for a in ids(state) if a.startswith("place:khan")] == ["place:khan:b4"]  # own colour used


def test_guild_seals_by_tier_and_the_sea_routes_they_open() -> None:
    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c2", "c3"])
    zero(state, 0)
    act(state, "place:seals:c2+c3")
    assert ids(state) == ["seal:farmer", "seal:spicer"]
    act(state, "seal:spicer")
    assert state.res[0]["jade"] == 1
    clear_turn(state, 0, ["c1"])
    state.figures[0] = ["PAG"]
    zero(state, 0, coins=10, camels=3)
    act(state, "place:travel1:c1")
    assert routes(state, "FUZ")  # R47, spicer sea route


def test_travel_posts_bonuses_and_first_player() -> None:
    state = start(3, ["abha", "dewu", "isabella"])
    clear_turn(state, 1, ["c2", "c2"])
    state.markers["FUZ"] = "CB1"
    zero(state, 1, coins=20, camels=10)
    act(state, "place:travel2:c2+c2")
    assert go(state, "OG")["path"] == ["XIA", "OG"]
    assert not state.pending or state.pending[0]["t"] != "move"
    settle(state)
    assert state.posts[1] == [] or "XIA" not in state.posts[1]  # only the end location gets a post
    assert state.next_first == 1
    clear_turn(state, 2, ["c1"])
    zero(state, 2, coins=10, camels=5)
    act(state, "place:travel1:c1")  # a lower rank than 2: the first player does not change
    settle(state)
    assert state.next_first == 1


def test_upper_travel_gives_an_extra_post_in_a_city_passed() -> None:
    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c3", "c3", "c3"])
    zero(state, 0, coins=30, camels=10, jade=2)
    act(state, "place:travel3:c3+c3+c3")
    assert go(state, "DAL")["path"] == ["XIA", "CHE", "DAL"]
    assert ids(state) == ["extra:none", "extra:CHE", "extra:XIA"]
    act(state, "extra:CHE")
    settle(state)
    assert set(state.posts[0]) == {"DAL", "CHE"}


def test_contracts_action_discards_to_make_room_then_pays_three_coins() -> None:
    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c2"])
    state.posts[0] = ["XIA", "ANX"]
    state.active[0] = ["S1", "C05"]
    zero(state, 0)
    new = [state.contract_spaces["XIA"][0], state.contract_spaces["ANX"][1]]
    act(state, "place:contracts:c2")
    act(state, "take:XIA:1")
    act(state, "take:ANX:2")
    assert ids(state) == ["discard:S1", "discard:C05"]
    act(state, "discard:S1")  # the last old contract then goes without asking
    assert state.active[0] == new and state.res[0]["coins"] == 3
    assert state.pile[-1] == "C05" and "S1" not in state.pile  # starting contracts go to the box
    assert state.turn_seat == 1  # no die left: the turn ended and the contract spaces were refilled
    assert all(c is not None for slots in state.contract_spaces.values() for c in slots)


def test_a_post_in_a_contract_city_offers_one_of_its_contracts_by_its_own_ids() -> None:
    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c1"])
    state.active[0] = ["S1"]
    state.markers.pop("XIA", None)
    state.outposts.pop("XIA", None)
    zero(state, 0, coins=10, camels=5)
    act(state, "place:travel1:c1")
    go(state, "XIA")
    offered = state.contract_spaces["XIA"][1]
    assert ids(state) == ["decline", "contract:take:XIA:1", "contract:take:XIA:2"]
    act(state, "contract:take:XIA:2")
    settle(state)
    assert state.active[0] == ["S1", offered]


def test_completing_a_contract_with_any_goods_and_jade_for_camels() -> None:
    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c2"])
    state.active[0] = ["C35"]  # 2 camels + 4 goods of any kind -> 4 VP + 1 jade
    zero(state, 0, camels=1, jade=1, pepper=2, silk=1, gold=2)
    options = [a for a in ids(state) if a.startswith("complete:C35")]
    assert "complete:C35:gold2+pepper2" in options and "complete:C35:gold1+pepper2+silk1" in options
    act(state, "complete:C35:gold1+pepper2+silk1")
    assert state.res[0]["vp"] == 4 + 2  # Abha: 1 VP per jade (the reward's and her own +1 jade)
    assert state.res[0]["camels"] == 0 and state.res[0]["gold"] == 1


def test_special_city_reward_and_improved_seal_bonus_by_die() -> None:
    state = start(3, ["abha", "dewu", "isabella"])
    clear_turn(state, 0, ["c2", "c5"])
    state.posts[0] = ["HOR"]
    state.seals[0] = {"spicer": 2}
    zero(state, 0)
    act(state, "place:HOR-1:c5")  # 2 pepper + 2 coins, plus the spicer "!" (2 pepper) twice for a 5
    assert state.res[0]["pepper"] == 6 and state.res[0]["coins"] == 2
    clear_turn(state, 0, ["c2"])
    assert "place:HOR-2:c2" not in ids(state)  # own colour once per special city


def test_milestones_and_relocation_when_out_of_posts() -> None:
    state = start(2, ["abha", "dewu"])
    state.posts_placed[0] = 8
    state.posts_left[0] = 3
    zero(state, 0)
    state._push([{"t": "posts", "seat": 0, "nodes": ["KHO"], "bonuses": []}])
    settle(state)
    assert state.res[0]["vp"] >= 5 and state.posts_left[0] == 2
    state.posts_left[0] = 0
    state.posts[0] = ["KHO", "KAB"]
    state.markers.pop("MUL", None)
    vp = state.res[0]["vp"]
    state._push([{"t": "posts", "seat": 0, "nodes": ["MUL"], "bonuses": []}])
    state._run()
    assert ids(state) == ["relocate:KAB", "relocate:KHO"]
    act(state, "relocate:KHO")
    settle(state)
    assert sorted(state.posts[0]) == ["KAB", "MUL"] and state.res[0]["vp"] == vp  # no milestone


def test_round_start_renews_offer_tiles_and_action_area_cards_and_compensates_low_rolls() -> None:
    state = start(2, ["abha", "dewu"])
    nxt = {k: v[0] for k, v in state.offer_piles.items()}
    area = [state.cards["A1"], state.cards["A2"]]
    state.pending = []
    state._start_round()
    assert state.offer_now == nxt
    assert state.card_box[-2:] == area and len(state.card_deck) == 15
    comps = [e for e in state.pending if e["t"] == "comp"]
    for effect in comps:
        total = sum(int(t[1:]) for t in state.dice[int(effect["seat"])])
        assert effect["n"] == 15 - total


def test_black_die_once_per_turn() -> None:
    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c2"])
    zero(state, 0, camels=6)
    act(state, "black")
    assert len(state.dice[0]) == 2 and state.res[0]["camels"] == 3
    assert "black" not in ids(state)


def test_city_card_exchange_and_repeat() -> None:
    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c3"])
    state.cards["A1"] = "CC05"  # 1 VP -> 3 coins or 3 coins -> 1 VP, same direction
    zero(state, 0, coins=7)
    act(state, "place:card-A1:c3")
    assert (
        "ex:vp-coins:3" in ids(state) and "ex:coins-vp:2" in ids(state) and "ex:coins-vp:3" not in ids(state)
    )
    act(state, "ex:vp-coins:3")
    assert state.res[0]["vp"] == -3 and state.res[0]["coins"] == 16


def test_two_level_turn_menu_space_then_dice_bonus_then_die() -> None:
    from engine_service.games.mp2 import Mp2State

    state = start(2, ["abha", "dewu"])
    clear_turn(state, 0, ["c2", "c5"])
    zero(state, 0, camels=3)
    assert isinstance(state, Mp2State)
    menu = [a.id for a in state.legal_actions(0)]
    assert menu[0] == "bag" and "reroll" in menu and "adjust" in menu and "place:book1" in menu
    assert not any(m.count(":") > 1 for m in menu if m.startswith("place:"))
    state.apply(0, "place:book1")
    assert [a.id for a in state.legal_actions(0)] == ["place:book1:c2", "place:book1:c5"]
    state.apply(0, "place:book1:c2")
    assert state.pending[0]["t"] == "offer"
