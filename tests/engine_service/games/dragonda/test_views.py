"""Dragonda's views and bot support: hidden hands, determinisation, the text frame and the heuristic."""

from __future__ import annotations

from engine_service.games import registry
from engine_service.games.dragonda import SPEC
from engine_service.games.dragonda.heuristic import heuristic
from engine_service.games.rng import ChanceRng
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, run_match
from tests.engine_service.games.dragonda.helpers import QUIET_EVENT, at_turn, fresh, give


def test_observation_shows_own_hand_and_only_counts_of_others() -> None:
    state = fresh(3)
    a, b, _ = state.order
    give(state, b, "D01", "A04")
    give(state, a, "A11")
    view = state.observation(a)
    assert view["hand"] == ["A11"] and "hands" not in view
    assert view["players"][b]["hand_count"] == 2
    assert "D01" not in str(view) and "A04" not in str(view)
    assert "deck" not in view and view["deck_count"] == 73
    assert "rng" not in str(sorted(view))
    spectator = state.spectator_view()
    assert "hand" not in spectator and "hands" not in spectator
    assert state.spectator_view(reveal=True)["hands"][b] == ["A04", "D01"]


def test_sampled_state_keeps_what_the_seat_knows_and_redeals_the_rest() -> None:
    state = fresh(3)
    a, b, c = state.order
    give(state, b, "D01", "A04")
    give(state, a, "A11")
    at_turn(state, a, QUIET_EVENT)
    observation = state.observation(a)
    redealt = set()
    for k in range(8):
        sampled = SPEC.sample_state(observation, ChanceRng(k))
        assert sampled.observation(a) == observation
        assert len(sampled.hands[b]) == 2 and len(sampled.hands[c]) == 0
        assert all(card.startswith(("A", "D")) for card in sampled.hands[b])
        redealt.add(tuple(sampled.hands[b]))
    assert len(redealt) > 1


def test_render_view_is_readable() -> None:
    state = fresh(2)
    a = state.order[0]
    state.cargo[a]["SP"] = 3
    give(state, a, "A01")
    text = SPEC.render_view(state.observation(a))
    assert "Marco Polo: Dragonda" in text and "Venezia" in text and "SP3" in text and "DESERT" in text


def test_heuristic_values_progress_goods_and_position() -> None:
    state = fresh(2)
    a, _ = state.order
    base = heuristic(state, a)
    closer = state.clone()
    closer.pos[a] = "CON"  # on the way to the required cities
    assert heuristic(closer, a) > base
    richer = state.clone()
    richer.visited[a] = ["DAM"]
    assert heuristic(richer, a) > base
    loaded = state.clone()
    loaded.money[a] -= 50
    loaded.cargo[a]["MG"] = 5  # 5 x 10 in Venice, worth far more in the East
    assert heuristic(loaded, a) > base


def test_greedy_house_bot_beats_random_in_a_seeded_match() -> None:
    assert "dragonda-v1" in registry.game_ids()
    record = run_match(
        "dragonda-v1", 2, 21, [HouseSeat(make_policy("greedy", 1)), HouseSeat(make_policy("random", 2))]
    )
    assert record.result is not None
    assert record.result["ranks"] == [1, 2]
