"""The effect registries of Voyages and Marco Polo II: every kind a game pushes is registered once, the
choice kinds derived from the registry are the ones the games always had, and each stored effect has
exactly the keys its kind's payload TypedDict documents (seeded random games of every variant)."""

from __future__ import annotations

from typing import Any, NotRequired, get_args, get_origin, get_type_hints

import pytest

from engine_service.games import make
from engine_service.games.common.effects import AutoEffect, ChoiceEffect, Handler, registry
from engine_service.games.common.family_effects import FAMILY_EFFECTS, Good
from engine_service.games.mp2.effects import CHOICE_EFFECTS as MP2_CHOICES
from engine_service.games.mp2.effects import EFFECTS as MP2_EFFECTS
from engine_service.games.rng import ChanceRng
from engine_service.games.voyages.effects import CHOICE_EFFECTS as VOYAGES_CHOICES
from engine_service.games.voyages.effects import EFFECTS as VOYAGES_EFFECTS

# The choice kinds as the games listed them by hand before the registries (recorded matches rely on them).
VOYAGES_CHOICE_KINDS = {
    "dice", "bonus", "draft", "keep_goals", "comp", "column", "good", "goods2", "contract_full", "pick",
    "discard_old", "space_bonus", "travel", "move", "relocate", "repeat", "exchange", "city_pick",
    "city_loop", "buy_moves", "xian",
}  # fmt: skip
MP2_CHOICE_KINDS = {
    "die_bonus", "dice_pick", "draft", "keep_goal", "donata_pick", "comp", "isabella", "mailin_double",
    "other_marker", "good", "goods2", "offer", "seal_pick", "move", "extra_post", "relocate", "mongke",
    "pick", "discard_old", "city_contract", "pile_full", "reward_contract", "repeat", "exchange",
    "card_bonus", "load", "caravan_move", "caravan_good", "return_tile",
}  # fmt: skip
VARIANTS = [
    ("voyages-v1", {}),
    ("voyages-v1", {"characters": "draft", "goal_draft": True, "exchange_direction": "each"}),
    ("mp2-v1", {}),
    ("mp2-v1", {"caravans": True, "extra_post_bonus": False, "caravan_capacity": 3}),
]


def payload_type(handler: Handler) -> Any:
    """The payload TypedDict a handler class declares (its second type argument), or None for Any."""
    for cls in type(handler).__mro__:
        for base in getattr(cls, "__orig_bases__", ()):
            args = get_args(base)
            if len(args) == 2 and getattr(base, "__origin__", None) in (ChoiceEffect, AutoEffect):
                return None if args[1] is Any else args[1]
    raise AssertionError(f"{handler!r} declares no payload")


def payload_keys(payload: Any) -> tuple[set[str], set[str]]:
    """The required and all keys of a payload TypedDict (its annotations are postponed strings)."""
    hints = get_type_hints(payload, include_extras=True)
    return {k for k, t in hints.items() if get_origin(t) is not NotRequired}, set(hints)


def test_choice_kinds_are_derived_from_the_registries_and_unchanged() -> None:
    assert VOYAGES_CHOICES == VOYAGES_CHOICE_KINDS
    assert MP2_CHOICES == MP2_CHOICE_KINDS
    for effects in (VOYAGES_EFFECTS, MP2_EFFECTS):
        assert all(
            isinstance(h, ChoiceEffect) == (k in (VOYAGES_CHOICES | MP2_CHOICES)) for k, h in effects.items()
        )
        assert all(effects[h.kind] is h for h in FAMILY_EFFECTS)


def test_a_kind_registered_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="'good' is registered twice"):
        registry(Good(), Good())


def played_effects(game_id: str, players: int, options: dict[str, Any], seeds: range) -> list[dict[str, Any]]:
    """Every effect pushed (automatic ones included) in seeded random games."""
    pushed: list[dict[str, Any]] = []
    for seed in seeds:
        state = make(game_id, players, seed, options)
        push = state._push  # type: ignore[attr-defined]

        def record(effects: Any, push: Any = push) -> None:
            pushed.extend(dict(e) for e in effects)
            push(effects)

        state._push = record  # type: ignore[attr-defined]
        rng = ChanceRng(seed + 11)
        while not state.is_over():
            seat = state.current_seats()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)).id)
    return pushed


@pytest.mark.parametrize(("game_id", "options"), VARIANTS)
@pytest.mark.parametrize("players", [2, 4])
def test_every_effect_is_registered_with_its_documented_keys(
    game_id: str, options: dict[str, Any], players: int
) -> None:
    effects = VOYAGES_EFFECTS if game_id == "voyages-v1" else MP2_EFFECTS
    pushed = played_effects(game_id, players, options, range(12))
    for effect in pushed:
        payload = payload_type(effects[effect["t"]])
        if payload is not None:
            required, documented = payload_keys(payload)
            assert required <= set(effect) <= documented, (effect["t"], set(effect))
    kinds = {e["t"] for e in pushed}
    assert len(kinds) >= len(effects) // 2, sorted(set(effects) - kinds)  # the games went far enough
