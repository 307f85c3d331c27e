"""A game state's fields, declared once: what each holds at the start, how a copy copies it, who may see it.

A game's state class declares each field of its game-specific state as a class attribute:

    class ExpeditionState(GameState):
        hands: list[list[int]] = state_field(Copy.ITEMS, seat_value=list, private=True)
        turns: int = state_field(default=0)

and `GameState` derives the rest from the declarations, in declaration order: the new game's values
(`initial`), the saved payload and its loading (the field names, `_FIELDS`; a per-seat field must hold one
entry per seat), the fast `clone` (each field copied as its `Copy` says, never deeper) and the private-field
list (`PRIVATE_FIELDS`: what some seat may not see; a sampled state redraws exactly those).

A subclass adds its fields after the inherited ones; one it declares again (a family game whose field holds
other values than the family's) keeps its inherited place. A class whose `__init__` sets a field's start
value declares none (the field is None until then).

Pure: no Django, no I/O, no RNG; it knows no game. It must not decide rules: a field's meaning lives in the
game's module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any


class Copy(Enum):
    """How `clone` copies a field. A copy is never deeper than this, so a game that changes a field deeper
    in place (an item of a SHALLOW list, an entry of an ITEMS item's list) must declare it deeper."""

    SHARED = "shared"  # immutable values (numbers, strings, None, tuples): the copy shares them
    SHALLOW = "shallow"  # a list or dict of immutable values (or of values never changed in place); a
    # dict's keys named in `inner` hold lists or dicts of immutable values, copied too
    ITEMS = "items"  # a list of lists or dicts of immutable values: each item copied
    VALUES = "values"  # a dict of lists or dicts of immutable values: each value copied
    DEEP = "deep"  # nested JSON of any depth: copied whole


def json_copy(value: Any) -> Any:
    """A deep copy of plain JSON data (dicts, lists, scalars), much faster than `copy.deepcopy`."""
    if isinstance(value, list):
        return [json_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: json_copy(v) for k, v in value.items()}
    return value


_IMMUTABLE = (int, float, str, bool, tuple, type(None))


@dataclass(frozen=True)
class StateField:
    """One declared field: its name (given by the class), copy semantics, start value and visibility."""

    copy: Copy
    initial: Callable[[Any], Any] | None  # a new game's value, from the state (None: `default`, shared)
    default: Any = None  # an immutable start value
    private: bool = False  # some seat may not see it (or not all of it): sampled states redraw it
    per_seat: bool = False  # one entry per seat, checked when a payload is loaded
    inner: tuple[str, ...] = ()  # a SHALLOW dict's keys whose values are copied one level too
    name: str = ""

    def named(self, name: str) -> StateField:
        return replace(self, name=name)


def state_field(
    copy: Copy = Copy.SHARED,
    *,
    default: Any = None,
    factory: Callable[[], Any] | None = None,
    seat_value: Callable[[], Any] | None = None,
    initial: Callable[[Any], Any] | None = None,
    private: bool = False,
    per_seat: bool = False,
    inner: tuple[str, ...] = (),
) -> Any:
    """Declare a field. Its start value is one of: `default` (an immutable value), `factory()`,
    `seat_value()` once per seat (which makes it a per-seat field), or `initial(state)` (from the new
    state's player count and options). `inner` (SHALLOW dicts only) names the keys whose values are
    copied too. Typed `Any` so that the declaration carries the field's own type annotation, as
    `dataclasses.field` does."""
    given = sum(x is not None for x in (factory, seat_value, initial)) + (default is not None)
    if given > 1:
        raise TypeError("a state field has one start value: default, factory, seat_value or initial")
    if not isinstance(default, _IMMUTABLE):
        raise TypeError(f"a state field's default must be immutable, not {default!r}: use a factory")
    if inner and copy is not Copy.SHALLOW:
        raise TypeError("only a SHALLOW dict names inner keys")
    if seat_value is not None:
        each = seat_value
        start: Callable[[Any], Any] = lambda state: [each() for _ in range(state.num_players)]  # noqa: E731
        per_seat = True
    elif factory is not None:
        make = factory
        start = lambda state: make()  # noqa: E731
    elif initial is not None:
        start = initial
    else:
        return StateField(copy, None, default, private, per_seat, tuple(inner))
    return StateField(copy, start, None, private, per_seat, tuple(inner))


def collect(namespace: Mapping[str, Any]) -> tuple[StateField, ...]:
    """The fields a class body declares, named, in declaration order."""
    return tuple(value.named(name) for name, value in namespace.items() if isinstance(value, StateField))


def extend(inherited: tuple[StateField, ...], declared: tuple[StateField, ...]) -> tuple[StateField, ...]:
    """A subclass's fields: the inherited ones, each redeclared one in its inherited place (a game whose
    field holds other values than the family's declares it again), then the new ones."""
    own = {f.name: f for f in declared}
    merged = tuple(own.pop(f.name, f) for f in inherited)
    return merged + tuple(f for f in declared if f.name in own)


@dataclass(frozen=True)
class Layout:
    """What a class's declared fields derive: names, private names, per-seat names, and the clone groups."""

    fields: tuple[StateField, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def private(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.private)

    @property
    def per_seat(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.per_seat)

    @property
    def defaults(self) -> dict[str, Any]:
        """The fields that start at an immutable default, and their defaults."""
        return {f.name: f.default for f in self.fields if f.initial is None}

    @property
    def made(self) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
        """The fields whose start value is made for each new state, and what makes it."""
        return tuple((f.name, f.initial) for f in self.fields if f.initial is not None)

    def copied(self, copy: Copy) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.copy is copy and not f.inner)

    @property
    def nested(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The SHALLOW dicts with inner keys, and their keys."""
        return tuple((f.name, f.inner) for f in self.fields if f.inner)
