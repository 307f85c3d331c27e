"""The Voyages of Marco Polo's turn menu: when a turn is over, the first-level menu (end, the bonus actions,
completing a contract, the main action), the die bonuses, and applying a turn-menu action (money bags,
rerolls, adjusted dice, completed contracts).

Pure: no Django, no gRPC, no clock, no global `random`. `VoyagesTurn` is the top link of `VoyagesState`'s
chain below `VoyagesState` itself (see `setup_state`); it declares no saved field and does not render views.
"""

from __future__ import annotations

from engine_service.games.base import Action
from engine_service.games.common.dice import (
    kind_of,
    remove_tokens,
    roll,
    value_of,
)
from engine_service.games.common.family_effects import (
    simple,
)
from engine_service.games.common.resources import can_afford, gain, pay
from engine_service.games.voyages.effects import (
    Bonus,
    Dice,
    DiceEffect,
)
from engine_service.games.voyages.placement import VoyagesPlacement
from engine_service.games.voyages.tables import (
    CONTRACTS,
)


class VoyagesTurn(VoyagesPlacement):
    """The turn menu (see the module docstring)."""

    def _turn_is_over(self, seat: int) -> bool:
        if self.dice[seat]:
            return False
        if self.res[seat]["camels"] >= 3 and self.black_left > 0 and not self.black_bought:
            return False
        return not any(can_afford(self.res[seat], CONTRACTS[c]["cost"]) for c in self.active[seat])

    # --- the turn menu ----------------------------------------------------------------------------------
    def _turn_actions(self, seat: int) -> list[Action]:
        """The turn menu (first level): end, `bonus` (money bag, black die, reroll, adjust: chosen with their
        die on the second level), completing a contract, and the main action's space (its dice are the second
        level), so the menu stays short."""
        held = self.dice[seat]
        res = self.res[seat]
        actions: list[Action] = []
        if self.main_done or not held:
            actions.append(Action("end", "end"))
        spaces: list[Action] = []
        if not self.main_done and held:
            for name in dict.fromkeys(str(a.details["space"]) for a in self._placements(seat, first=True)):
                spaces.append(Action(f"place:{name}", "place", {"space": name}))
            if not actions and spaces and spaces[0].id == "place:coins5":
                # The safe fallback while the main action is due: take 5 coins.
                actions.append(spaces.pop(0))
        if self._bonus_menu(seat):
            actions.append(Action("bonus", "bonus", {}))
        for cid in self.active[seat]:
            if can_afford(res, CONTRACTS[cid]["cost"]):
                actions.append(Action(f"complete:{cid}", "bonus", {"bonus": "complete", "contract": cid}))
        return actions + spaces

    def _bonus_menu(self, seat: int) -> list[Action]:
        """Second level of `bonus`: the money bag, a black die, a reroll or an adjustment (with the die)."""
        res = self.res[seat]
        actions = self._die_bonus_actions(seat, "bag")
        if res["camels"] >= 3 and self.black_left > 0 and not self.black_bought:
            actions.append(Action("black", "bonus", {"bonus": "black_die", "camels": 3}))
        if res["camels"] >= 1:
            actions += self._die_bonus_actions(seat, "reroll")
        if res["camels"] >= 2:
            actions += self._die_bonus_actions(seat, "adjust")
        return actions

    def _die_bonus_actions(self, seat: int, bonus: str) -> list[Action]:
        """Second level of bag / reroll / adjust: which die (and for adjust, which way)."""
        actions = []
        for tok in sorted(set(self.dice[seat])):
            value = value_of(tok)
            if bonus == "bag":
                actions.append(Action(f"bag:{tok}", "bonus", {"bonus": "bag", "die": tok}))
            elif value == 0:
                continue  # Raschid's unrolled dice have no value to change
            elif bonus == "reroll":
                actions.append(Action(f"reroll:{tok}", "bonus", {"bonus": "reroll", "die": tok}))
            else:
                for by in (1, -1):
                    if 1 <= value + by <= 6:
                        actions.append(
                            Action(
                                f"adjust:{tok}:{by:+d}", "bonus", {"bonus": "adjust", "die": tok, "by": by}
                            )
                        )
        return actions

    def _turn_apply(self, seat: int, action: Action) -> None:
        aid = action.id
        if aid == "end":
            self._end_turn()
        elif aid == "bonus":
            self._push([simple(Bonus.kind, seat)])
        elif aid.startswith("complete:"):
            self._complete(seat, int(action.details["contract"]))
        elif aid.startswith("place:"):
            dice_pick: DiceEffect = {"t": Dice.kind, "seat": seat, "space": str(action.details["space"])}
            self._push([dice_pick])
        else:  # pragma: no cover - the menu only makes the ids above
            raise AssertionError(aid)

    def _apply_die_bonus(self, seat: int, action: Action) -> None:
        res = self.res[seat]
        tok = str(action.details["die"])
        bonus = action.details["bonus"]
        if bonus == "bag":
            remove_tokens(self.dice[seat], [tok])
            gain(res, {"coins": 3})
            self._log({"event": "bag", "seat": seat, "die": tok})
        elif bonus == "reroll":
            pay(res, {"camels": 1})
            self._replace_die(seat, tok, roll(self.rng, kind_of(tok)))
        else:
            pay(res, {"camels": 2})
            self._replace_die(seat, tok, f"{kind_of(tok)}{value_of(tok) + int(action.details['by'])}")

    def _replace_die(self, seat: int, old: str, new: str) -> None:
        remove_tokens(self.dice[seat], [old])
        self.dice[seat].append(new)
        self.dice[seat].sort()
        self._log({"event": "die", "seat": seat, "from": old, "to": new})

    def _complete(self, seat: int, cid: int) -> None:
        contract = CONTRACTS[cid]
        pay(self.res[seat], contract["cost"])
        self.active[seat] = [c for c in self.active[seat] if c != cid]
        self.done[seat] = [*self.done[seat], cid]
        self._log({"event": "complete", "seat": seat, "contract": cid})
        self._reward(seat, contract["reward"])
