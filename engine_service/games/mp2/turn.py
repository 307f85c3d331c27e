"""Marco Polo II's turn menu: the first-level menu (end, the bonus actions, the normal action), the die
bonuses, the improve and contract costs, and applying a turn-menu action (money bags, improvements, Vidal,
outposts, rerolls, completed contracts).

Pure: no Django, no gRPC, no clock, no global `random`. `Mp2Turn` is the top link of `Mp2State`'s chain
below `Mp2State` itself (see `setup_state`); it declares no saved field and does not render views.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine_service.games.base import Action
from engine_service.games.common import dice
from engine_service.games.common.family_effects import (
    GOOD_PAIRS,
)
from engine_service.games.common.resources import pay_with
from engine_service.games.mp2.effects import (
    DicePick,
    DicePickEffect,
    DieBonus,
    DieBonusEffect,
)
from engine_service.games.mp2.placement import Mp2Placement
from engine_service.games.mp2.setup_state import (
    BLACK_DIE_CAMELS,
)
from engine_service.games.mp2.tables import (
    CONTRACTS,
    GOODS,
    OUTPOSTS,
    SEAL_NAMES,
    SEALS,
    WILD,
    tok_value,
)


class Mp2Turn(Mp2Placement):
    """The turn menu (see the module docstring)."""

    def _turn_is_over(self, seat: int) -> bool:
        return not self.dice[seat] and len(self._turn_actions(seat)) == 1

    # --- the turn menu ----------------------------------------------------------------------------------
    def _turn_actions(self, seat: int) -> list[Action]:
        """The turn menu (first level): end, bonus actions, and the normal action's space. Which die (or
        dice) is a second decision (`die_bonus` / `dice_pick` effects), so the menu stays short."""
        held = self.dice[seat]
        res = self.res[seat]
        char = self.chars[seat]
        actions: list[Action] = []
        spaces: list[Action] = []
        if self.main_done or not held:
            actions.append(Action("end", "end"))
        else:
            for name in dict.fromkeys(str(a.details["space"]) for a in self._placements(seat, first=True)):
                spaces.append(Action(f"place:{name}", "place", {"space": name}))
        if held:
            # The safe fallback while the normal action is due (and the action itself when none is possible).
            forced = not self.main_done and not spaces
            actions.append(Action("bag", "bonus", {"bonus": "money_bag", "as_action": forced}))
        for cid in self.active[seat]:
            for payment in self._contract_payments(seat, cid):
                suffix = ":" + "+".join(f"{g}{k}" for g, k in sorted(payment.items()) if k) if payment else ""
                actions.append(
                    Action(
                        f"complete:{cid}{suffix}",
                        "bonus",
                        {"bonus": "complete", "contract": cid, "goods": payment},
                    )
                )
        for seal in SEAL_NAMES:
            if self.seals[seat].get(seal) == 1 and self.can_pay(seat, self._improve_cost(seat, seal)):
                actions.append(Action(f"improve:{seal}", "bonus", {"bonus": "improve", "seal": seal}))
        if char == "vidal" and not self.vidal_sold[seat] and all(res[g] >= 1 for g in GOODS):
            actions.append(Action("vidal:set", "bonus", {"bonus": "vidal_set", "vp": 5}))
        for tile in sorted(set(self.kept_tiles[seat])):
            actions.append(Action(f"outpost:{tile}", "bonus", {"bonus": "outpost", "tile": tile}))
        if self.options["caravans"]:
            actions.extend(self._caravan_menu(seat))
        if self.black_left > 0 and not self.black_bought and self.can_pay(seat, {"camels": BLACK_DIE_CAMELS}):
            actions.append(Action("black", "bonus", {"bonus": "black_die", "camels": BLACK_DIE_CAMELS}))
        if held and self.can_pay(seat, {"camels": 1}):
            actions.append(Action("reroll", "bonus", {"bonus": "reroll", "camels": 1}))
        if held and self.can_pay(seat, {"camels": 2}):
            actions.append(Action("adjust", "bonus", {"bonus": "adjust", "camels": 2}))
        return actions + spaces

    def _die_bonus_actions(self, seat: int, bonus: str, as_action: bool = False) -> list[Action]:
        """Second level of the money bag, a reroll or a change of value: which die (and what, or which way)."""
        actions = []
        for tok in sorted(set(self.dice[seat])):
            value = tok_value(tok)
            if bonus == "bag":
                for what, bundle in (
                    ("coins", {"coins": 3}),
                    ("camels", {"camels": 2}),
                    ("jade", {"jade": 1}),
                ):
                    actions.append(
                        Action(
                            f"bag:{tok}:{what}",
                            "bonus",
                            {"bonus": "money_bag", "die": tok, "gain": bundle, "as_action": as_action},
                        )
                    )
            elif bonus == "reroll":
                actions.append(Action(f"reroll:{tok}", "bonus", {"bonus": "reroll", "die": tok, "camels": 1}))
            else:
                for by in (1, -1):
                    if 1 <= value + by <= 6:
                        actions.append(
                            Action(
                                f"adjust:{tok}:{by:+d}",
                                "bonus",
                                {"bonus": "adjust", "die": tok, "by": by, "camels": 2},
                            )
                        )
        return actions

    def _improve_cost(self, seat: int, seal: str) -> dict[str, int]:
        cost = dict(SEALS[seal]["improve"])
        if self.chars[seat] == "tebaldo":
            cost.pop("coins", None)
        return cost

    def _contract_payments(self, seat: int, cid: str) -> list[dict[str, int]]:
        """The goods a contract can be paid with: [{}] for a fixed cost, one entry per way to pay its "any"
        or "2 different" goods; [] if it cannot be completed now. Vidal pays nothing."""
        cost = CONTRACTS[cid]["cost"]
        if self.chars[seat] == "vidal":
            return [{}]
        fixed = {k: v for k, v in cost.items() if k not in ("any", "diff2")}
        if not self.can_pay(seat, fixed):
            return []
        res = self.res[seat]
        left = {g: res[g] - fixed.get(g, 0) for g in GOODS}
        if cost.get("any"):
            k = int(cost["any"])
            out = []
            for p in range(min(k, left["pepper"]) + 1):
                for s in range(min(k - p, left["silk"]) + 1):
                    g = k - p - s
                    if g <= left["gold"]:
                        out.append({"pepper": p, "silk": s, "gold": g})
            return out
        if cost.get("diff2"):
            return [{a: 1, b: 1} for a, b in GOOD_PAIRS if left[a] >= 1 and left[b] >= 1]
        return [{}]

    def _turn_apply(self, seat: int, action: Action) -> None:
        aid = action.id
        details = action.details
        if aid == "end":
            self._end_turn()
        elif aid in ("bag", "reroll", "adjust"):
            as_action = aid == "bag" and bool(details["as_action"])
            bonus: DieBonusEffect = {"t": DieBonus.kind, "seat": seat, "bonus": aid, "as_action": as_action}
            self._push([bonus])
        elif aid.count(":") == 1 and aid.startswith("place:"):
            pick: DicePickEffect = {"t": DicePick.kind, "seat": seat, "space": str(details["space"])}
            self._push([pick])
        elif aid == "black":
            self._pay(seat, {"camels": BLACK_DIE_CAMELS})
            self.black_bought = True
            self._take_black_die(seat)
        elif aid.startswith("bag:"):
            self._money_bag(seat, str(details["die"]), details["gain"], bool(details["as_action"]))
        elif aid.startswith("complete:"):
            self._complete(seat, str(details["contract"]), dict(details["goods"]))
        elif aid.startswith("improve:"):
            self._improve(seat, str(details["seal"]))
        elif aid == "vidal:set":
            self._vidal_set(seat)
        elif aid.startswith("outpost:"):
            self._use_outpost(seat, str(details["tile"]))
        elif aid.startswith("claim:"):
            self._claim(seat, str(details["tile"]), str(details["city"]))
        elif aid.startswith("caravan:"):
            self._complete_caravan(seat, int(details["caravan"]))
        elif aid.startswith("reroll:"):
            self._reroll(seat, str(details["die"]))
        elif aid.startswith("adjust:"):
            tok = str(details["die"])
            self._pay(seat, {"camels": 2})
            self._replace_die(seat, tok, f"{dice.kind_of(tok)}{tok_value(tok) + int(details['by'])}")
        elif aid.startswith("place:"):
            self._place(seat, action)
        else:  # pragma: no cover - the menu only makes the ids above
            raise AssertionError(aid)

    def _money_bag(self, seat: int, tok: str, bundle: Mapping[str, int], as_action: bool) -> None:
        dice.remove_tokens(self.dice[seat], [tok])
        self._gain(seat, bundle)
        if as_action:
            self.main_done = True
        self._log({"event": "money_bag", "seat": seat, "die": tok, "gain": dict(bundle)})

    def _improve(self, seat: int, seal: str) -> None:
        self._pay(seat, self._improve_cost(seat, seal))
        self.seals[seat] = {**self.seals[seat], seal: 2}
        self._log({"event": "improve", "seat": seat, "seal": seal})
        if self.chars[seat] == "dewu":
            self._gain(seat, {"jade": 1})
        self._reward(seat, SEALS[seal]["bonus"])

    def _vidal_set(self, seat: int) -> None:
        res = self.res[seat]
        pay_with(res, {g: 1 for g in GOODS}, WILD, ())
        res["vp"] += 5
        self.vidal_sold[seat] = True
        self._log({"event": "vidal_set", "seat": seat})

    def _use_outpost(self, seat: int, tile: str) -> None:
        """Filippo uses an outpost tile he kept."""
        kept = list(self.kept_tiles[seat])
        kept.remove(tile)
        self.kept_tiles[seat] = kept
        self._log({"event": "outpost_used", "seat": seat, "tile": tile})
        self._reward(seat, OUTPOSTS[tile])

    def _reroll(self, seat: int, tok: str) -> None:
        self._pay(seat, {"camels": 1})
        new = dice.roll(self.rng, dice.kind_of(tok))
        self._replace_die(seat, tok, new)
        self._isabella_face(seat, tok_value(new))

    def _replace_die(self, seat: int, old: str, new: str) -> None:
        dice.remove_tokens(self.dice[seat], [old])
        self.dice[seat] = sorted([*self.dice[seat], new])
        self._log({"event": "die", "seat": seat, "from": old, "to": new})

    def _complete(self, seat: int, cid: str, goods: Mapping[str, int]) -> None:
        contract = CONTRACTS[cid]
        if self.chars[seat] != "vidal":
            fixed = {k: v for k, v in contract["cost"].items() if k not in ("any", "diff2")}
            self._pay(seat, fixed)
            pay_with(self.res[seat], goods, WILD, ())
            self.res[seat]["vp"] += int(contract["vp"])
        self.active[seat] = [c for c in self.active[seat] if c != cid]
        self.done[seat] = [*self.done[seat], cid]
        self._log({"event": "complete", "seat": seat, "contract": cid})
        if self.chars[seat] == "abha":
            self._gain(seat, {"jade": 1})
        self._reward(seat, contract["reward"])
