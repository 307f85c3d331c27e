"""The Voyages of Marco Polo's rewards, movement and arrivals: reward bundles, the copied city bonuses, the
discarded contracts, the route options (Johannes's extra links), moving the figure and what arriving gives.

Pure: no Django, no gRPC, no clock, no global `random`. `VoyagesMovement` is one link of `VoyagesState`'s
chain (see `setup_state`); it may call only `VoyagesSetup`'s methods below it, never the placement or the
turn menu, and it declares no saved field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine_service.games.base import Action
from engine_service.games.common import cardrow
from engine_service.games.common.effects import EffectBase
from engine_service.games.common.family_effects import (
    goods_choices,
    posts_effect,
    reward_effect,
    simple,
)
from engine_service.games.common.resources import gain, pay
from engine_service.games.voyages.effects import (
    DRAW_CONTRACT,
    CityBonusEffect,
    Xian,
    move_effect,
)
from engine_service.games.voyages.setup_state import (
    RESOURCES,
    VoyagesSetup,
)
from engine_service.games.voyages.tables import (
    BEIJING,
    CITIES,
    NODE_TYPE,
    OASES,
    OUTPOST_BONUSES,
    ROUTES,
    SLUG,
    TRAVEL_COST,
)


class VoyagesMovement(VoyagesSetup):
    """Rewards, movement and arrivals (see the module docstring)."""

    # --- rewards ----------------------------------------------------------------------------------------
    def _reward(self, seat: int, reward: Mapping[str, int]) -> None:
        """Gain a reward bundle; its choices (goods, moves, contracts) become effects resolved next."""
        gain(self.res[seat], {k: v for k, v in reward.items() if k in RESOURCES})
        effects = goods_choices(seat, reward.get("good_choice", 0), reward.get("different_goods", 0))
        effects += [simple(Xian.kind, seat)] * reward.get("other_bonus", 0)
        for _ in range(reward.get("black_die", 0)):
            self._take_black_die(seat)
        effects += [simple(DRAW_CONTRACT.kind, seat)] * reward.get("contract", 0)
        effects += [move_effect(seat, 1, {}, skip=True)] * reward.get("move", 0)
        self._push(effects)

    def _copied_bonus(self, seat: int, city: int) -> CityBonusEffect:
        return self._city_bonus_effect(seat, city)

    def _bonus_cities(self, seat: int) -> list[int]:
        return self.small_cities_of(seat)

    def _discard_contract(self, cid: int) -> None:
        """Contracts given up go to the bottom of the special pile."""
        cardrow.put_bottom(self.special, [cid])

    # --- movement ---------------------------------------------------------------------------------------
    def _extra_links(self, seat: int) -> Any:
        if self.chars[seat] != "johannes":
            return None
        printed = self.options["johannes_jump_cost"] == "printed"

        def links(node: int) -> list[tuple[int, tuple[int, ...]]]:
            if node not in OASES:
                return []
            zero = (0, 0)
            return [
                (other, ROUTES.route_cost.get((node, other), zero) if printed else zero)
                for other in OASES
                if other != node
            ]

        return links

    def _route_options(
        self,
        seat: int,
        max_steps: int,
        coins: int,
        camels: int,
        *,
        table: bool = False,
        per_step: Mapping[str, int] | None = None,
        figures: Sequence[int] | None = None,
        base_steps: int = 0,
    ) -> list[dict[str, Any]]:
        """Affordable distinct movements of one figure: end, cities passed (Wilhelm), total coins/camels.

        With `table`, the Travel table cost for `base_steps + steps` minus that of `base_steps` is added
        (Niccolo's second figure continues the same Travel)."""
        per = per_step or {}
        wilhelm = self.chars[seat] == "wilhelm"
        tracked = frozenset(CITIES - set(self.posts[seat])) if wilhelm else frozenset()
        links = self._extra_links(seat)
        options: list[dict[str, Any]] = []
        figs = range(len(self.figures[seat])) if figures is None else figures
        for fig in figs:
            start = self.figures[seat][fig]
            best: dict[tuple[int, tuple[int, ...]], list[tuple[int, int, int]]] = {}
            for out in ROUTES.outcomes(
                start, max_steps, extra_links=links, tracked=tracked, budget=(camels, coins)
            ):
                k = out.steps
                cost_coins = out.cost[1] + per.get("coins", 0) * k
                if table:
                    cost_coins += TRAVEL_COST[base_steps + k] - TRAVEL_COST[base_steps]
                cost_camels = out.cost[0] + per.get("camels", 0) * k
                if cost_coins > coins or cost_camels > camels:
                    continue
                entries = best.setdefault((out.end, out.passed), [])
                if any(c <= cost_coins and m <= cost_camels for c, m, _ in entries):
                    continue
                entries[:] = [e for e in entries if not (cost_coins <= e[0] and cost_camels <= e[1])]
                entries.append((cost_coins, cost_camels, k))
            for (end, passed), entries in best.items():
                for cost_coins, cost_camels, k in entries:
                    options.append(
                        {
                            "fig": fig,
                            "end": end,
                            "passed": list(passed),
                            "coins": cost_coins,
                            "camels": cost_camels,
                            "steps": k,
                        }
                    )
        options.sort(key=lambda o: (o["coins"], o["camels"], o["fig"], o["end"], o["passed"], o["steps"]))
        return options

    def _route_action(self, seat: int, option: dict[str, Any], prefix: str = "route") -> Action:
        parts = [prefix]
        if len(self.figures[seat]) > 1:
            parts.append(f"f{int(option['fig']) + 1}")
        parts.append(SLUG[int(option["end"])])
        if self.chars[seat] == "wilhelm" and option["passed"]:
            parts.append("via=" + "+".join(SLUG[n] for n in option["passed"]))
        parts.append(f"{option['coins']}coins")
        parts.append(f"{option['camels']}camels")
        return Action(":".join(parts), "move", dict(option))

    def _move(self, seat: int, moves: Sequence[Mapping[str, Any]], *, table: bool) -> None:
        """Pay every cost first, then move the figures, then place posts where they end (Wilhelm: in
        every city passed) and only then take the bonuses."""
        coins = sum(int(m["coins"]) for m in moves)
        camels = sum(int(m["camels"]) for m in moves)
        pay(self.res[seat], {"coins": coins, "camels": camels})
        nodes: list[int] = []
        for m in moves:
            self.figures[seat][int(m["fig"])] = int(m["end"])
            self.figures[seat] = list(self.figures[seat])
            if self.chars[seat] == "wilhelm":
                nodes += [int(n) for n in m["passed"] if n not in nodes]
            elif int(m["end"]) in CITIES and int(m["end"]) not in nodes:
                nodes.append(int(m["end"]))
        self._log(
            {
                "event": "move",
                "seat": seat,
                "to": [int(m["end"]) for m in moves],
                "coins": coins,
                "camels": camels,
                "travel": table,
            }
        )
        nodes = [n for n in nodes if n not in self.posts[seat]]
        if nodes:
            self._push([posts_effect(seat, nodes)])

    def _arrive_in(self, seat: int, node: int) -> list[EffectBase]:
        """Put the post on the map and return the bonus effects of that city."""
        self.posts[seat] = [*self.posts[seat], node]
        self.posts_this_turn = [*self.posts_this_turn, node]
        kind = NODE_TYPE[node]
        if node == BEIJING:
            slot = self.beijing.index(None) if None in self.beijing else None
            if slot is not None:
                self.beijing[slot] = seat
            return []
        if kind == "large":
            bonus = self.outposts.pop(str(node), None)
            if bonus is None:
                return []
            self._log({"event": "outpost_bonus", "seat": seat, "city": node, "bonus": bonus})
            return [reward_effect(seat, OUTPOST_BONUSES[bonus])]
        if kind == "small":
            return [self._city_bonus_effect(seat, node)]
        return []

    def _post_removed(self, seat: int, node: int) -> None:
        if node == BEIJING:
            self.beijing = [None if s == seat else s for s in self.beijing]

    def node_name(self, node: int) -> str:
        return SLUG[node]
