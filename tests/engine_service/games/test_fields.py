"""State fields declared once (`engine_service.games.fields`): what a declaration derives, and its errors."""

from __future__ import annotations

import pytest

from engine_service.games import InvalidOptions, make, state_from_json
from engine_service.games.dragonda.rules import DragondaState
from engine_service.games.expedition.rules import ExpeditionState
from engine_service.games.fields import Copy, state_field
from engine_service.games.rng import ChanceRng


def test_the_declarations_derive_names_private_fields_and_clone_groups() -> None:
    assert ExpeditionState._FIELDS[:3] == ("hands", "deck", "display")
    assert len(ExpeditionState._FIELDS) == 22 and len(DragondaState._FIELDS) == 24
    assert ExpeditionState.PRIVATE_FIELDS == ("hands", "deck")
    assert DragondaState.PRIVATE_FIELDS == ("hands", "deck")
    assert ExpeditionState._ITEMS == ("hands", "known")
    assert DragondaState._NESTED == (("turn", ("traded",)),) and "turn" not in DragondaState._SHALLOW
    assert set(ExpeditionState._PER_SEAT) == {"hands", "gold", "known"}
    assert "order" not in DragondaState._PER_SEAT and "money" in DragondaState._PER_SEAT
    assert "hands" not in vars(ExpeditionState), "the class keeps the layout, not the declaration"


def test_each_new_game_gets_its_own_start_values() -> None:
    first, second = make("expedition-v1", 3, 1), make("expedition-v1", 3, 2)
    assert isinstance(first, ExpeditionState) and isinstance(second, ExpeditionState)
    assert first.gold == [3, 3, 3] and first.gold is not second.gold
    assert first.hands[0] is not first.hands[1]
    dragonda = make("dragonda-v1", 2, 1)
    assert isinstance(dragonda, DragondaState)
    assert dragonda.cargo[0] is not dragonda.cargo[1] and len(dragonda.order) == 2


def test_loading_checks_that_per_seat_fields_hold_one_entry_per_seat() -> None:
    data = make("expedition-v1", 3, 1).to_json()
    data["state"]["gold"] = [3, 3]
    with pytest.raises(InvalidOptions, match="gold must hold one entry per seat"):
        state_from_json(data)


def test_a_clone_copies_each_field_as_declared_and_no_deeper() -> None:
    state = make("dragonda-v1", 2, 4)
    assert isinstance(state, DragondaState)
    copy = state.clone()
    assert copy.cargo is not state.cargo and copy.cargo[0] is not state.cargo[0]  # ITEMS
    assert copy.money is not state.money  # SHALLOW
    assert copy.turn is not state.turn and copy.turn["traded"] is not state.turn["traded"]  # inner key
    assert copy.log is not state.log and all(a is b for a, b in zip(copy.log, state.log, strict=True))
    assert copy.rng is not state.rng and copy.rng.state == state.rng.state
    assert copy._legal_cache is state._legal_cache  # it holds for an identical copy
    state.legal_actions(state.current_seats()[0])
    shuffled = state.shuffle_hidden(0, ChanceRng(1))
    assert shuffled._legal_cache is None, "a copy changed by hand drops the cache"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"default": [], "copy": Copy.SHALLOW}, "must be immutable"),
        ({"default": 0, "factory": list}, "one start value"),
        ({"factory": list, "seat_value": list}, "one start value"),
    ],
)
def test_a_bad_declaration_is_a_clear_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        state_field(**kwargs)  # type: ignore[arg-type]


def test_only_a_shallow_dict_names_inner_keys() -> None:
    with pytest.raises(TypeError, match="only a SHALLOW dict"):
        state_field(Copy.ITEMS, factory=dict, inner=("x",))


def test_a_family_game_redeclares_a_family_field_in_its_place_and_derives_its_private_fields() -> None:
    from engine_service.games.common.family import FamilyState
    from engine_service.games.mp2.rules import Mp2State
    from engine_service.games.voyages.rules import VoyagesState

    family = FamilyState._FIELDS
    for state_class in (VoyagesState, Mp2State):
        assert state_class._FIELDS[: len(family)] == family
    assert "goals" in VoyagesState._ITEMS and "goals" in Mp2State._SHALLOW  # contract lists / one card each
    assert VoyagesState.PRIVATE_FIELDS == ("goals", "goal_offers", "round_piles", "special")
    assert Mp2State.PRIVATE_FIELDS == (
        "goals",
        "goal_offers",
        "card_deck",
        "pile",
        "offer_piles",
        "offer_box",
    )
    assert "spaces" in Mp2State._VALUES and "offer_piles" in Mp2State._VALUES


def test_a_clone_copies_dict_values_and_leaves_out_transient_caches() -> None:
    state = make("voyages-v1", 2, 3)
    state.__dict__["_resolved"] = ("a heuristic's cache",)
    state.legal_actions(state.current_seats()[0])
    assert state._legal_cache is not None
    copy = state.clone()
    assert "_resolved" not in copy.__dict__
    assert all(copy.spaces[k] is not v for k, v in state.spaces.items())  # type: ignore[attr-defined]
    assert copy._legal_cache is None, "Voyages' copies are changed by hand: the cache is not shared"
