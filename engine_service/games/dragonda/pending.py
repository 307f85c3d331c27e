"""Marco Polo: Dragonda's pending decisions: the frames on `DragondaState.stack`, one unit per kind.

Layer: pure game rules, a part of `rules.py` (no Django, no I/O, no RNG). A pending decision interrupts
the turn: the top frame's seat decides before anything else happens. A frame is stored on the state as a
plain JSON dict (so recorded matches keep their hashes); its kind's TypedDict names its keys. Each kind is
one `PendingKind` registered in `PENDING` by its name (`DEFENCE`, `DROP`): `actions`, what its seat is
offered; `resolve`, how the action taken resolves (popping the frame once it is done); `settle`, what
happens without asking when no decision is needed. It must not drive the turn: `rules.py` does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, Literal, TypedDict, TypeVar, cast

from engine_service.games.base import Action, JsonDict
from engine_service.games.dragonda.board import BOARD, GOODS, LAND_MEANS, card_slug, cargo_total

if TYPE_CHECKING:
    from engine_service.games.dragonda.rules import DragondaState

DEFENCE: Final = "defence"  # the kind of the frame, and of the actions it offers
DROP: Final = "drop"
ACCEPT_ATTACK = Action("accept:attack", DEFENCE, {})  # the defence's first action, as the resolution reads it


class DefenceFrame(TypedDict):
    """An attack card played against `seat`, which may cancel it with a defence card (spec 6.2)."""

    kind: Literal["defence"]
    seat: int  # the attacked seat: it decides
    attacker: int  # the seat that played the attack
    card: str  # the attack card's id


class DropFrame(TypedDict):
    """Goods `seat` must give back, one decision per piece (which good), `count` still to go."""

    kind: Literal["drop"]
    seat: int
    count: int
    reason: str  # why: the attack card's name, or "keep_three" (a lost means keeps three goods)


F = TypeVar("F", DefenceFrame, DropFrame)


class PendingKind(ABC, Generic[F]):
    """One kind of pending decision: its actions, its resolution, and its resolution without asking."""

    kind: ClassVar[str]

    @abstractmethod
    def actions(self, state: DragondaState, frame: F) -> list[Action]: ...

    @abstractmethod
    def resolve(self, state: DragondaState, frame: F, action: Action) -> None: ...

    def settle(self, state: DragondaState, frame: F) -> bool:
        """Resolve the frame at once where its seat has no real choice; True when it did."""
        return False


class Defence(PendingKind[DefenceFrame]):
    """Accept the attack, or cancel it with one of the defence cards that cancel it."""

    kind = DEFENCE

    @staticmethod
    def frame(seat: int, attacker: int, card: str) -> JsonDict:
        """The frame to push, as stored."""
        frame: DefenceFrame = {"kind": DEFENCE, "seat": seat, "attacker": attacker, "card": card}
        return cast(JsonDict, frame)

    def actions(self, state: DragondaState, frame: DefenceFrame) -> list[Action]:
        seat = int(frame["seat"])
        attack = BOARD.card_name[frame["card"]]
        actions = [Action("accept:attack", DEFENCE, {"attack": attack, "attacker": frame["attacker"]})]
        held = {BOARD.card_name[c] for c in state.hands[seat]}
        for name in BOARD.cancels[attack]:
            if name in held:
                actions.append(Action(f"defend:{card_slug(name)}", DEFENCE, {"attack": attack, "card": name}))
        return actions

    def resolve(self, state: DragondaState, frame: DefenceFrame, action: Action) -> None:
        state.stack.pop()
        target = int(frame["seat"])
        name = BOARD.card_name[frame["card"]]
        if "card" in action.details:  # defend:<CARD>, else accept:attack
            defence = state._take_card(target, str(action.details["card"]))
            state._under_deck(defence)
            state._log({"event": "defend", "seat": target, "card": BOARD.card_name[defence], "attack": name})
            return
        state._log({"event": "attack_hits", "seat": target, "card": name, "attacker": int(frame["attacker"])})
        _hit(state, target, int(frame["attacker"]), name)

    def settle(self, state: DragondaState, frame: DefenceFrame) -> bool:
        """An empty hand (a public count) cannot defend: the attack hits without asking."""
        if state.hands[int(frame["seat"])]:
            return False
        self.resolve(state, frame, ACCEPT_ATTACK)
        return True


def _hit(state: DragondaState, target: int, attacker: int, name: str) -> None:
    """The attack card `name`'s effect on `target` (spec 6.1): means lost, goods returned or a sum paid
    (to the attacker for some cards), XP lost, the next turn stopped, a false guide."""
    effect = BOARD.attack_def[name]["effect"]
    to = attacker if effect.get("to") == "attacker" else None
    if effect.get("lose") == "land" and state.means[target] in LAND_MEANS:
        state._lose_means(target, name)
    if "goods" in effect:
        total = cargo_total(state.cargo[target])
        if total == 0:
            state._pay(target, int(effect["else_pay"]), to, name)
        elif effect["goods"] == "two":
            state._push_drop(target, min(2, total), name)
        else:
            state._push_drop(target, (total + 1) // 2, name)
    elif "pay" in effect:
        state._pay(target, int(effect["pay"]), to, name)
    if effect.get("xp"):
        state._add_xp(target, int(effect["xp"]))
    if effect.get("still"):
        state._stop_next(target)
    if effect.get("false_guide"):
        state.false_guide[target] = True


class Drop(PendingKind[DropFrame]):
    """Give back one piece of a good held; the frame stays until `count` pieces are given back."""

    kind = DROP

    @staticmethod
    def frame(seat: int, count: int, reason: str) -> JsonDict:
        """The frame to push, as stored."""
        frame: DropFrame = {"kind": DROP, "seat": seat, "count": count, "reason": reason}
        return cast(JsonDict, frame)

    def actions(self, state: DragondaState, frame: DropFrame) -> list[Action]:
        cargo = state.cargo[int(frame["seat"])]
        left, why = int(frame["count"]), frame["reason"]
        return [
            Action(f"drop:{g}", DROP, {"good": g, "left": left, "why": why}) for g in GOODS if cargo[g] > 0
        ]

    def resolve(self, state: DragondaState, frame: DropFrame, action: Action) -> None:
        seat, good = int(frame["seat"]), str(action.details["good"])
        state.cargo[seat][good] -= 1
        frame["count"] = int(frame["count"]) - 1
        state._log({"event": "return_goods", "seat": seat, "good": good, "count": 1, "why": frame["reason"]})
        if frame["count"] <= 0:
            state.stack.pop()

    def settle(self, state: DragondaState, frame: DropFrame) -> bool:
        """Every piece held is of one good (or none is left): they are given back without asking."""
        seat = int(frame["seat"])
        held = [g for g in GOODS if state.cargo[seat][g] > 0]
        if len(held) > 1:
            return False
        if held:
            state.cargo[seat][held[0]] -= min(int(frame["count"]), state.cargo[seat][held[0]])
            log = {"event": "return_goods", "seat": seat, "good": held[0], "count": frame["count"]}
            state._log({**log, "why": frame["reason"]})
        state.stack.pop()
        return True


PENDING: dict[str, PendingKind[Any]] = {unit.kind: unit for unit in (Defence(), Drop())}


def pending_kind(frame: JsonDict) -> PendingKind[Any]:
    """The unit of a stored frame's kind."""
    return PENDING[str(frame["kind"])]


def as_defence(frame: JsonDict) -> DefenceFrame:
    """A stored frame read as a defence (the caller knows its kind)."""
    return cast(DefenceFrame, frame)
