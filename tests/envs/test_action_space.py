"""The stable action space: every legal action of seeded random games maps to an index and back.

The suite samples: GAMES_PER_SETTING random games of every game, player count and option variant, every
decision of each checked. The full series, thousands of games, is `python -m bench action_space`
(bench/bench_action_space.py)."""

from __future__ import annotations

import pytest

from engine_service.envs.action_space import (
    ActionSpaceError,
    action_space,
    enumerate_pattern,
    natural_key,
)
from engine_service.envs.space_check import check_random_game, settings
from engine_service.games import Action
from engine_service.games.registry import list_games

GAMES_PER_SETTING = 2  # 17 settings: 34 games; two, so a fixed id is also seen to keep its index across games


@pytest.mark.parametrize(("game_id", "players", "options"), list(settings()))
def test_every_legal_action_maps_to_an_index_and_back(
    game_id: str, players: int, options: dict[str, object]
) -> None:
    space, fixed_seen = action_space(game_id), {}
    decisions = 0
    for game in range(GAMES_PER_SETTING):
        decisions += check_random_game(space, game_id, players, options, 500 + game, fixed_seen)[0]
    assert decisions > 100 * GAMES_PER_SETTING


def test_a_mapping_that_does_not_round_trip_is_named() -> None:
    class Shifted(type(action_space("expedition-v1"))):  # type: ignore[misc]
        def action_id(self, legal, index):  # type: ignore[no-untyped-def]
            return legal[-1].id

    with pytest.raises(ActionSpaceError, match=r"expedition-v1 2p .* seed 3 step 0: .* does not round-trip"):
        check_random_game(Shifted("expedition-v1"), "expedition-v1", 2, {}, 3)


def test_the_layout_is_contiguous_and_the_same_for_every_variant() -> None:
    for spec in list_games():
        space = action_space(spec.game_id)
        layout = space.describe()
        assert [b["kind"] for b in layout] == list((spec.reference() or {})["actions"])
        starts = [b["start"] for b in layout]
        assert starts == sorted(starts) and starts[0] == 0
        assert layout[-1]["start"] + layout[-1]["size"] == space.size
        for block in layout:
            if block["fixed"]:
                assert block["size"] == len(block["ids"]) and block["ids"] == sorted(block["ids"])


def test_fixed_kinds_are_the_reference_patterns_finite_languages() -> None:
    assert enumerate_pattern("^means:(foot|horse|caravan|ship)$", 10) == (
        "means:caravan",
        "means:foot",
        "means:horse",
        "means:ship",
    )
    assert enumerate_pattern("^attack:(A|B):s[0-3]$", 100) == tuple(
        f"attack:{c}:s{i}" for c in "AB" for i in range(4)
    )
    assert enumerate_pattern("^buy:(TX|MG):[1-9][0-9]*$", 500) is None  # unbounded quantity
    assert enumerate_pattern("^x[a-z]{3}$", 500) is None  # 17,576 ids: relative slots
    assert action_space("expedition-v1").block("draw").fixed
    assert not action_space("expedition-v1").block("move").fixed


def test_relative_slots_follow_the_natural_order() -> None:
    assert sorted(["buy:SP:10", "buy:SP:2", "buy:MG:3"], key=natural_key) == [
        "buy:MG:3",
        "buy:SP:2",
        "buy:SP:10",
    ]
    space = action_space("dragonda-v1")
    legal = [Action("buy:SP:10", "buy"), Action("buy:SP:2", "buy"), Action("done:trade", "trade_done")]
    start = space.block("buy").start
    assert space.index(legal, "buy:SP:2") == start
    assert space.index(legal, "buy:SP:10") == start + 1
    assert space.action_id(legal, start + 1) == "buy:SP:10"


def test_errors_name_the_problem() -> None:
    space = action_space("expedition-v1")
    legal = [Action("draw:deck", "draw", {"source": "deck"})]
    with pytest.raises(ActionSpaceError, match="not one of the legal actions"):
        space.index(legal, "pass")
    with pytest.raises(ActionSpaceError, match="outside 0-"):
        space.action_id(legal, space.size)
    with pytest.raises(ActionSpaceError, match="is not legal now"):
        space.action_id(legal, space.block("end_movement").start)
    with pytest.raises(ActionSpaceError, match="only 0 legal now"):
        space.action_id(legal, space.block("move").start)
    with pytest.raises(ActionSpaceError, match="outside its pattern"):
        space.index([Action("take:pink-gold", "draw")], "take:pink-gold")
    with pytest.raises(ActionSpaceError, match="no action kind"):
        space.index([Action("fly", "fly")], "fly")
