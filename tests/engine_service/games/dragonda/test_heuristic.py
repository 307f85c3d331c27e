"""Dragonda's planning heuristic: what it values (trade routes that pay, the bonus trip, a way back to land)
and that it reads only what the judged seat may know."""

from __future__ import annotations

from engine_service.games.dragonda import SPEC
from engine_service.games.dragonda.heuristic import heuristic, market_worth, route_steps
from engine_service.games.dragonda.rules import DragondaState
from engine_service.games.rng import ChanceRng
from tests.engine_service.games.dragonda.helpers import fresh


def _after(state: DragondaState, seat: int, action_id: str) -> float:
    trial = state.clone()
    trial.apply(seat, action_id)
    return heuristic(trial, seat)


def _trading(state: DragondaState, seat: int, place: str) -> DragondaState:
    """`seat` on `place` in its trade step (a horse, the card step and the move done)."""
    state.pos[seat] = place
    state.means[seat] = "horse"
    state.turn_index = state.order.index(seat)
    state.turn = state._fresh_turn()
    state.phase = "trade"
    state.stack = []
    return state


def test_a_good_is_worth_its_best_sale_along_the_route_and_less_off_it() -> None:
    # Manufactures cost 10 in Venice and fetch about 40 in China, on the way while Pechino is still to see.
    mask_all = 0b11111
    worth = dict(zip(("TX", "MG", "SI", "PO", "SP", "PS"), market_worth("VEN", mask_all, True), strict=True))
    assert worth["MG"] > 30
    # Once every city is seen the route is the way home: China is off it, and so is most of that price.
    home_only = dict(zip(("TX", "MG", "SI", "PO", "SP", "PS"), market_worth("VEN", 0, True), strict=True))
    assert home_only["MG"] < worth["MG"] - 15
    assert route_steps("VEN", 0, True) == 0


def test_the_bot_buys_where_a_good_is_cheap_and_sells_where_it_is_dear() -> None:
    state = fresh(2)
    a, _ = state.order
    _trading(state, a, "VEN")
    assert _after(state, a, "buy:MG:5") > _after(state, a, "done:trade")
    dear = _trading(fresh(2), a, "PEC")
    dear.visited[a] = ["DAM", "ORM", "PEC", "SAM"]
    dear.cargo[a]["MG"] = 5
    assert _after(dear, a, "sell:MG:5") > _after(dear, a, "done:trade")


def test_a_ship_in_a_china_port_values_the_open_bonuses() -> None:
    state = fresh(2)
    a, _ = state.order
    state.pos[a] = "QUI"
    state.visited[a] = ["DAM", "ORM", "PEC", "SAM"]
    state.money[a] = 400
    on_land = heuristic(state, a)
    sailing = state.clone()
    sailing.means[a] = "ship"
    sailing.money[a] -= 100
    assert heuristic(sailing, a) > on_land  # the ship's price is repaid by 10 XP two turns away
    claimed = sailing.clone()
    claimed.bonus = {"NAG": 1, "MANPAL": 1}
    assert heuristic(claimed, a) < heuristic(sailing, a)


def test_a_land_means_on_a_sea_only_port_counts_the_way_back() -> None:
    state = fresh(2)
    a, _ = state.order
    state.pos[a] = "ZAI"
    state.means[a] = "horse"
    state.money[a] = 50
    ashore = heuristic(state, a)
    stranded = state.clone()
    stranded.pos[a] = "MAN"  # the passage back to Zaiton costs a turn
    assert heuristic(stranded, a) < ashore


def test_the_value_depends_only_on_what_the_seat_may_know() -> None:
    state = fresh(3)
    a = state.order[0]
    for seat in range(3):  # everyone holds a card or two
        while len(state.hands[seat]) < 2:
            card = next(c for c in reversed(state.deck) if c.startswith(("A", "D")))
            state.deck.remove(card)
            state.hands[seat].append(card)
    observation = state.observation(a)
    values = {heuristic(SPEC.sample_state(observation, ChanceRng(k)), a) for k in range(6)}
    assert len(values) == 1 and values == {heuristic(state, a)}
