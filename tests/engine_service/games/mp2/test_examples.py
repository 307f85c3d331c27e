"""The specification's rulebook examples (section 2.4 and the character examples), reproduced on the map."""

from __future__ import annotations

import itertools
from collections import deque

from engine_service.games.mp2.tables import NEIGHBOURS, NODES, OASES, ROUTE_ID, ROUTE_SEAL, ROUTES
from tests.engine_service.games.mp2.helpers import act, clear_turn, go, ids, start, zero


def _shortest(start_node: str, seals: set[str]) -> dict[str, tuple[int, list[list[str]]]]:
    """BFS distances with every shortest path, using sea routes only with their seal."""
    best: dict[str, tuple[int, list[list[str]]]] = {start_node: (0, [[start_node]])}
    queue = deque([start_node])
    while queue:
        node = queue.popleft()
        dist, paths = best[node]
        for other, _cost in NEIGHBOURS[node]:
            seal = ROUTE_SEAL[(node, other)]  # type: ignore[index]
            if seal and seal not in seals:
                continue
            if other not in best:
                best[other] = (dist + 1, [[*p, other] for p in paths])  # type: ignore[index, list-item]
                queue.append(other)  # type: ignore[arg-type]
            elif best[other][0] == dist + 1:  # type: ignore[index]
                best[other][1].extend([*p, other] for p in paths)  # type: ignore[index, list-item]
    return best


def _path_cost(path: list[str]) -> dict[str, int]:
    total = {"coins": 0, "camels": 0, "jade": 0}
    for a, b in itertools.pairwise(path):
        for name, amount in zip(ROUTES.cost_names, ROUTES.route_cost[(a, b)], strict=True):  # type: ignore[index]
            total[name] += amount
    return total


def test_mongke_xian_to_jaipur_path_cost_and_uniqueness() -> None:
    for seals in (set(), {"farmer", "spicer", "tailor", "jeweler"}):
        dist, paths = _shortest("XIA", seals)["JAI"]
        assert dist == 4
        assert paths == [["XIA", "OG", "FUZ", "OH", "JAI"]]
    path = ["XIA", "OG", "FUZ", "OH", "JAI"]
    assert [n in OASES for n in path[1:]] == [True, False, True, False]
    assert _path_cost(path) == {"coins": 8, "camels": 4, "jade": 0}
    assert [ROUTE_ID[(a, b)] for a, b in itertools.pairwise(path)] == ["R34", "R35", "R36", "R37"]


def test_mongke_moves_xian_to_jaipur_in_two_steps_scoring_the_two_oases() -> None:
    state = start(2, ["mongke", "dewu"])
    seat = 0
    clear_turn(state, seat, ["c2", "c2"])
    state.figures[seat] = ["XIA"]
    zero(state, seat, coins=20, camels=10)
    act(state, "place:travel2:c2+c2")
    route = go(state, "JAI")  # oases are free of steps for him: Xian -> Fuzhou -> Jaipur is 2 steps
    assert route["steps"] == 2 and route["path"] == ["OG", "FUZ", "OH", "JAI"]
    assert route["id"] == "route:JAI:8coins+4camels"
    assert state.figures[seat] == ["JAI"]
    assert state.res[seat]["coins"] == 20 - 8 and state.res[seat]["camels"] == 10 - 4
    assert "JAI" in state.posts[seat]
    assert state.res[seat]["vp"] == 6  # 3 VP per different oasis: Hunan and Yunnan
    # then 2 coins or 1 camel per oasis (after the contract-city choice of Jaipur)
    while state.pending and state.pending[0]["t"] != "mongke":
        act(state, ids(state)[0])
    assert ids(state) == ["oasis:2coins+0camels", "oasis:1coins+1camels", "oasis:0coins+2camels"]


def test_gantulga_pagan_to_kabul_pays_only_the_jade() -> None:
    assert ROUTES.route_cost[("PAG", "KAB")] == (6, 2, 1)  # type: ignore[index]
    state = start(2, ["gantulga", "dewu"])
    clear_turn(state, 0, ["c3"])
    state.figures[0] = ["PAG"]
    zero(state, 0, coins=2, jade=1)
    assert "place:travel2:c3" not in " ".join(ids(state))  # Gantulga: only the lower Travel space
    act(state, "place:travel1:c3")
    assert go(state, "KAB")["id"] == "route:KAB:1jade"
    assert state.figures[0] == ["KAB"]
    assert state.res[0]["coins"] == 0 and state.res[0]["jade"] == 0 and state.res[0]["camels"] == 0


def test_caravan_chengdu_to_pagan_within_book_two() -> None:
    assert _shortest("CHE", set())["PAG"][0] == 2
    state = start(2, ["dewu", "abha"], caravans=True)
    clear_turn(state, 0, ["c3"])
    state.caravans[0] = [{"tile": "RT01", "at": "CHE", "goods": ["gold"]}]
    state.tiles["RT01"] = "held"
    zero(state, 0)
    act(state, "place:book2:c3")
    act(state, "offer:free1")
    act(state, "cstep:DAL")
    assert state.caravans[0][0]["at"] == "DAL"
    act(state, "cstep:PAG")
    assert state.caravans[0][0]["at"] == "PAG"
    assert not state.pending  # book II allows at most 2 steps


def test_claim_in_fuzhou_puts_the_caravan_in_chengdu_loaded_with_pepper_and_gold() -> None:
    state = start(2, ["dewu", "abha"], caravans=True)
    clear_turn(state, 0, ["c3"])
    state.figures[0] = ["FUZ"]
    zero(state, 0, pepper=1, gold=1)
    claims = [a for a in ids(state) if a.startswith("claim:")]
    assert "claim:RT01:CHE" in claims and "claim:RT01:SAM" in claims and "claim:RT01:HOR" in claims
    act(state, "claim:RT01:CHE")
    assert ids(state) == ["load:gold", "load:pepper", "load:gold+pepper"]
    act(state, "load:gold+pepper")
    assert state.caravans[0] == [{"tile": "RT01", "at": "CHE", "goods": ["gold", "pepper"]}]
    assert state.res[0]["pepper"] == 0 and state.res[0]["gold"] == 0 and state.tiles["RT01"] == "held"


def test_caravan_completion_sell_gold_and_double_pepper() -> None:
    state = start(2, ["dewu", "abha"], caravans=True)
    clear_turn(state, 0, ["c3"])
    state.figures[0] = ["PAG"]
    state.caravans[0] = [{"tile": "RT01", "at": "PAG", "goods": ["gold", "pepper"]}]
    state.tiles["RT01"] = "held"
    zero(state, 0)
    act(state, "caravan:1:complete")
    assert ids(state) == ["double:gold", "sell:gold"]  # gold cannot be upgraded
    act(state, "sell:gold")
    assert state.res[0]["vp"] == 6
    assert ids(state) == ["double:pepper", "upgrade:pepper", "sell:pepper"]
    act(state, "double:pepper")
    assert state.res[0]["pepper"] == 2
    assert state.caravans[0] == [] and state.tiles["RT01"] == "down"


def test_tebaldo_jaipur_to_merw_on_book_three_needs_the_tailor_seal() -> None:
    for seals, reachable in (({"tailor": 1}, True), ({}, False), ({"spicer": 1, "jeweler": 1}, False)):
        expected = 5 if reachable else 6
        names = {s for s in seals}
        assert _shortest("JAI", names)["MER"][0] == expected
        state = start(2, ["tebaldo", "abha"], caravans=True)
        clear_turn(state, 0, ["c5"])
        state.seals[0] = dict(seals)
        state.caravans[0] = [{"tile": "RT04", "at": "JAI", "goods": ["silk"]}]
        state.tiles["RT04"] = "held"
        zero(state, 0)
        act(state, "place:book3a:c5")
        act(state, "offer:free1")
        assert state.pending[0]["left"] == [5]  # 3 for book III + 2 for Tebaldo
        act(state, "cstep:CAM")
        if reachable:
            for node in ("HOR", "KER", "HER", "MER"):
                act(state, f"cstep:{node}")
            assert state.caravans[0][0]["at"] == "MER"
        else:
            assert "cstep:HOR" not in ids(state)  # the sea route Cambay-Hormuz needs the tailor seal


def test_kashgar_is_top_left_with_marker_card_and_outpost_and_op01_is_two_gold() -> None:
    kas = NODES["KAS"]
    assert kas["xy"] == [5, 5] and set(kas["holds"]) == {"marker", "card", "outpost"}
    assert NODES["BEI"]["xy"][0] == max(n["xy"][0] for n in NODES.values())
    from engine_service.games.mp2.tables import OUTPOSTS

    assert OUTPOSTS["OP01"] == {"gold": 2}


def test_vidal_completes_c18_paying_nothing_and_takes_two_jade_without_points() -> None:
    state = start(2, ["vidal", "abha"], caravans=True)
    clear_turn(state, 0, ["c3"])
    state.active[0] = ["C18"]
    zero(state, 0)
    act(state, "complete:C18")
    assert state.res[0]["jade"] == 2 and state.res[0]["vp"] == 0
    assert state.done[0] == ["C18"]


def test_donata_red_figure_on_a_red_post_city_pays_five_jade_and_camels_for_fifteen_points() -> None:
    state = start(3, ["donata", "abha", "dewu"], caravans=True)
    assert state.spare_figs[0]  # picked at setup
    state.spare_figs[0] = [3, 1, 2]  # red among them (an unused colour with 3 players: colour 3)
    clear_turn(state, 0, ["c1"])
    state.cards["MER"] = "CC12"  # 1 camel + 1 jade -> 3 VP, repeated up to the die value
    zero(state, 0, camels=5, jade=5)
    assert "place:card-MER:F3" in ids(state)  # an unused colour activates any city action
    assert "place:card-MER:F1" not in ids(state)  # yellow (seat 1) has no post in Merw
    act(state, "place:card-MER:F3")
    assert ids(state)[-1] == "times:5"
    act(state, "times:5")
    assert state.res[0]["vp"] == 15 and state.res[0]["jade"] == 0 and state.res[0]["camels"] == 0
    assert 3 not in state.spare_figs[0]
    # a player colour's figure activates a city action only where that colour has a post
    clear_turn(state, 0, ["c1"])
    state.posts[1] = ["MER"]
    state.brown.pop("card-MER")
    zero(state, 0, camels=1, jade=1)
    assert "place:card-MER:F1" in ids(state)
