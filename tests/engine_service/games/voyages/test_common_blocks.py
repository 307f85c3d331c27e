"""The game-neutral blocks in engine_service/games/common, exercised on Voyages' map and tables."""

from __future__ import annotations

import pytest

from engine_service.games.common import cardrow, resources
from engine_service.games.common.dice import (
    SpaceDef,
    colour_used,
    distinct_groups,
    placement_fee,
    remove_tokens,
)
from engine_service.games.voyages.tables import ROUTES

from .helpers import node


def test_walk_outcomes_keep_cheapest_costs_and_track_cities() -> None:
    outcomes = ROUTES.outcomes(node("venezia"), 2)
    ends = {(o.end, o.steps, o.cost) for o in outcomes}
    assert (node("moscow"), 2, (0, 0)) in ends
    assert (node("samarcanda"), 2, (3, 0)) in ends  # via Oasis E: 3 camels
    assert (node("venezia"), 2, (0, 0)) in ends  # there and back
    assert all(o.passed == () for o in outcomes)
    tracked = ROUTES.outcomes(
        node("venezia"), 3, min_steps=3, tracked=frozenset({node("alexandria"), node("adana")})
    )
    assert any(o.end == node("adana") and o.passed == (node("alexandria"), node("adana")) for o in tracked)
    broke = ROUTES.outcomes(node("venezia"), 1, budget=(0, 0))
    assert {o.end for o in broke} == {node("oasis-a"), node("alexandria")}


def test_placement_fee_and_colour_rule() -> None:
    shared, single = SpaceDef("silk", 2), SpaceDef("card", 1, shared=False)
    assert placement_fee(shared, False, [4, 5]) == 0
    assert placement_fee(shared, True, [4, 5]) == 4
    assert placement_fee(shared, True, [4, 5], exempt=True) == 0
    assert placement_fee(single, True, [6]) is None
    assert colour_used([[1, ["c3"]], [0, ["b2"]]], 0) is False
    assert colour_used([[0, ["c3", "b2"]]], 0) is True
    assert distinct_groups(["c1", "c1", "c2"], 2) == [("c1", "c1"), ("c1", "c2")]
    pool = ["c1", "c2"]
    with pytest.raises(ValueError):
        remove_tokens(pool, ["c3"])
    assert pool == ["c1", "c2"]


def test_card_row_slides_left_and_bad_picks_change_nothing() -> None:
    row = [10, 11, 12, 13]
    assert cardrow.take_from_row(row, [3, 1]) == [12, 10]
    assert row == [11, 13]
    with pytest.raises(ValueError):
        cardrow.take_from_row(row, [3])
    assert row == [11, 13]
    pile = [1, 2]
    assert cardrow.draw_top(pile) == 1
    cardrow.put_bottom(pile, [5])
    assert pile == [2, 5]


def test_resource_bundles_pay_only_what_is_held() -> None:
    held = {"coins": 5, "camels": 1}
    assert resources.max_times(held, {"coins": 2}, 6) == 2
    with pytest.raises(ValueError):
        resources.pay(held, {"camels": 2})
    assert held == {"coins": 5, "camels": 1}
    resources.pay(held, {"coins": 2}, 2)
    resources.gain(held, {"silk": 1})
    assert held == {"coins": 1, "camels": 1, "silk": 1}
    assert resources.describe({"camels": 2, "silk": 0}) == "2 camels"
