"""The Caravans: route tiles, claiming, loading, moving after book actions, completing (double, upgrade,
sell), flipping tiles each round, end-game half-price sales."""

from __future__ import annotations

from engine_service.games.mp2.scoring import final_scores
from engine_service.games.mp2.tables import CITIES_OF_SHIELD, ROUTE_TILES
from tests.engine_service.games.mp2.helpers import act, clear_turn, ids, settle, start, zero


def test_route_tiles_cover_twenty_shield_slots_and_every_pair_is_reachable() -> None:
    slots = [s for pair in ROUTE_TILES.values() for s in pair]
    assert len(ROUTE_TILES) == 10 and len(slots) == 20
    assert all(a != b for a, b in ROUTE_TILES.values())
    assert slots.count("lotus") == 3 and slots.count("horse") == 3
    assert ROUTE_TILES["RT01"] == ("phoenix", "lion")
    for a, b in ROUTE_TILES.values():
        assert CITIES_OF_SHIELD[a] and CITIES_OF_SHIELD[b]


def test_claim_needs_a_city_a_matching_face_up_tile_goods_and_a_free_caravan() -> None:
    state = start(2, ["abha", "dewu"], caravans=True)
    clear_turn(state, 0, ["c2"])
    state.figures[0] = ["OG"]  # an oasis: no claim
    zero(state, 0, pepper=1)
    assert not any(a.startswith("claim:") for a in ids(state))
    state.figures[0] = ["BEI"]  # Beijing's Dragon: RT02 and RT03
    assert {a.split(":")[1] for a in ids(state) if a.startswith("claim:")} == {"RT02", "RT03"}
    assert not any(a.endswith(":BEI") for a in ids(state) if a.startswith("claim:"))
    zero(state, 0, jade=3)  # jade is no load
    assert not any(a.startswith("claim:") for a in ids(state))
    zero(state, 0, silk=3)
    act(state, "claim:RT02:PAG")
    assert ids(state) == ["load:silk", "load:silk+silk"]
    act(state, "load:silk+silk")
    assert not any(a.startswith("claim:") for a in ids(state))  # one caravan at a time
    state.tiles["RT03"] = "down"
    state.caravans[0] = []
    assert not any(a.startswith("claim:RT03") for a in ids(state))  # face-down tiles cannot be claimed


def test_caravan_moves_only_after_a_book_action_and_may_stop_early() -> None:
    state = start(2, ["abha", "dewu"], caravans=True)
    clear_turn(state, 0, ["c1", "c5"])
    state.caravans[0] = [{"tile": "RT02", "at": "PAG", "goods": ["pepper"]}]
    state.tiles["RT02"] = "held"
    zero(state, 0, coins=5)
    act(state, "place:khan:c1")
    assert not state.pending  # no caravan movement after Khan's Favor
    clear_turn(state, 0, ["c5"])
    act(state, "place:book3a:c5")
    act(state, "offer:free2")
    assert state.pending[0]["t"] == "caravan_move" and state.pending[0]["left"] == [3]
    assert ids(state)[0] == "stop"
    assert "cstep:FUZ" not in ids(state) and "cstep:CAL" not in ids(state)  # sea routes need seals
    act(state, "cstep:DAL")
    act(state, "stop")
    assert state.caravans[0][0]["at"] == "DAL" and not state.pending


def test_completion_needs_the_figure_there_and_upgrade_turns_silk_into_gold() -> None:
    state = start(2, ["abha", "dewu"], caravans=True)
    clear_turn(state, 0, ["c2"])
    state.caravans[0] = [{"tile": "RT05", "at": "KER", "goods": ["silk", "pepper"]}]
    state.tiles["RT05"] = "held"
    state.figures[0] = ["HER"]
    zero(state, 0)
    assert "caravan:1:complete" not in ids(state)
    state.figures[0] = ["KER"]
    act(state, "caravan:1:complete")
    act(state, "upgrade:silk")
    act(state, "upgrade:pepper")
    assert state.res[0]["gold"] == 1 and state.res[0]["silk"] == 1 and state.res[0]["vp"] == 0
    assert state.tiles["RT05"] == "down" and state.caravans[0] == []
    zero(state, 0, pepper=1)
    assert not any(a.startswith("claim:RT05") for a in ids(state))  # face down until the next round


def test_completion_on_an_oasis_follows_the_option() -> None:
    for allowed in (True, False):
        state = start(2, ["abha", "dewu"], caravans=True, caravan_oasis_completion=allowed)
        clear_turn(state, 0, ["c2"])
        state.caravans[0] = [{"tile": "RT05", "at": "OH", "goods": ["gold"]}]
        state.figures[0] = ["OH"]
        assert ("caravan:1:complete" in ids(state)) is allowed


def test_face_down_tiles_flip_up_at_round_start() -> None:
    state = start(2, ["abha", "dewu"], caravans=True)
    state.tiles["RT04"] = "down"
    state.tiles["RT05"] = "held"
    state._start_round()
    assert state.tiles["RT04"] == "up" and state.tiles["RT05"] == "held"


def test_goods_left_on_caravans_sell_at_half_price_at_the_end() -> None:
    state = start(2, ["abha", "dewu"], caravans=True)
    state.caravans[0] = [{"tile": "RT05", "at": "OH", "goods": ["gold", "silk"]}]
    state.caravans[1] = [{"tile": "RT06", "at": "KAR", "goods": ["pepper"]}]
    scores = final_scores(state)
    assert scores[0]["caravans"] == 3 + 2 and scores[1]["caravans"] == 1


def test_caravan_capacity_option_and_mailin_cannot_start_where_a_figure_stands() -> None:
    state = start(2, ["mailin", "abha"], caravans=True, caravan_capacity=1)
    clear_turn(state, 0, ["c2"])
    state.figures[0] = ["FUZ", "CHE"]
    zero(state, 0, gold=2)
    claims = [a for a in ids(state) if a.startswith("claim:RT01")]
    assert "claim:RT01:CHE" not in claims and "claim:RT01:SAM" in claims
    act(state, "claim:RT01:SAM")
    settle(state)
    assert state.caravans[0][0]["goods"] == ["gold"]  # capacity 1: the only load is taken
