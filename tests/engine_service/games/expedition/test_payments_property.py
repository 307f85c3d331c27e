"""Property tests of Expedition's payments: every offered payment is in the hand and meets the requirement,
none is offered twice, and one exists exactly when `can_pay` says so."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from engine_service.games.expedition.cards import (
    ALL_TYPES,
    COLORS,
    GOODS,
    REQUIREMENTS,
    can_pay,
    color_of,
    is_goods,
    kind_of,
    payments,
)

hands = st.lists(st.sampled_from(ALL_TYPES), max_size=14).map(Counter)


def meets(payment: tuple[str, ...], requirement: str) -> bool:
    kinds = [kind_of(t) for t in payment]
    colors = [color_of(t) for t in payment]
    if requirement == "ANY1":
        return len(payment) == 1 and is_goods(payment[0])
    if requirement.startswith("SAME"):
        return len(payment) == int(requirement[-1]) and len(set(kinds)) == 1 and kinds[0] in GOODS
    if requirement == "FOURGOODS":
        return sorted(kinds) == sorted(GOODS)
    if requirement == "LEAD2":
        return len(payment) == 2 and all(not is_goods(t) for t in payment)
    if requirement == "COLOR3":
        return len(payment) == 3 and len(set(colors)) == 1
    if requirement == "COLOR5":
        return sorted(colors) == sorted(COLORS)
    raise AssertionError(requirement)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(hand=hands, requirement=st.sampled_from(sorted(REQUIREMENTS)))
def test_payments_are_valid_distinct_and_complete(hand: Counter[str], requirement: str) -> None:
    options = payments(hand, requirement)
    assert len(options) == len(set(options))
    for payment in options:
        assert payment == tuple(sorted(payment))
        assert not Counter(payment) - hand, "a payment uses only cards in the hand"
        assert meets(payment, requirement)
    assert bool(options) == can_pay(hand, requirement)
