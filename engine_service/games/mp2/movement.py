"""Marco Polo II's rewards, movement and arrivals: reward bundles, the route map's steps and their costs,
the reachable routes, what arriving in a city gives, and The Caravans (claims, caravan moves, completion).

Pure: no Django, no gRPC, no clock, no global `random`. `Mp2Movement` is one link of `Mp2State`'s chain
(see `setup_state`); it may call only `Mp2Setup`'s methods below it, never the placement or the turn menu,
and it declares no saved field.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine_service.games.base import Action
from engine_service.games.common.effects import EffectBase
from engine_service.games.common.family_effects import (
    goods_choices,
    reward_effect,
    simple,
)
from engine_service.games.mp2.effects import (
    PILE_CONTRACT,
    CaravanGood,
    CaravanGoodEffect,
    CaravanHome,
    CaravanHomeEffect,
    CityContract,
    CityContractEffect,
    Load,
    OtherMarker,
    ReturnTile,
    ReturnTileEffect,
    RewardContract,
    marker_effect,
    move_effect,
)
from engine_service.games.mp2.setup_state import (
    Mp2Setup,
)
from engine_service.games.mp2.tables import (
    BEIJING,
    CITIES_OF_SHIELD,
    GOODS,
    NEIGHBOURS,
    NODES,
    OASES,
    OUTPOSTS,
    RESOURCES,
    ROUTE_SEAL,
    ROUTE_TILES,
    SHIELD,
    SPECIAL_CITIES,
)


def _links_of(node: str, mongke: bool) -> list[tuple[tuple[str, ...], tuple[int, int, int], tuple[str, ...]]]:
    """Moves of one step from `node`: (path of nodes entered, summed route cost, sea seals needed). For
    Möngke a step runs through any oases to the next city, or ends on an oasis."""
    out: list[tuple[tuple[str, ...], tuple[int, int, int], tuple[str, ...]]] = []

    def walk(at: str, path: tuple[str, ...], cost: tuple[int, int, int], seals: tuple[str, ...]) -> None:
        for other, extra in NEIGHBOURS[at]:
            if other == node or other in path:
                continue
            seal = ROUTE_SEAL[(at, other)]
            new_cost = (cost[0] + extra[0], cost[1] + extra[1], cost[2] + extra[2])
            new_seals = (*seals, seal) if seal and seal not in seals else seals
            new_path = (*path, other)
            out.append((new_path, new_cost, new_seals))
            if mongke and other in OASES:
                walk(other, new_path, new_cost, new_seals)

    walk(node, (), (0, 0, 0), ())
    out.sort()
    return out


LINKS = {node: _links_of(node, False) for node in NODES}
MONGKE_LINKS = {node: _links_of(node, True) for node in NODES}


def _pareto_add(
    ways: list[tuple[tuple[int, int, int], tuple[str, ...]]],
    cost: tuple[int, int, int],
    path: tuple[str, ...],
) -> None:
    """Keep `ways` cost-Pareto-optimal (one path per cost)."""
    for old, _path in ways:
        if all(o <= n for o, n in zip(old, cost, strict=True)):
            return
    ways[:] = [w for w in ways if not all(n <= o for n, o in zip(cost, w[0], strict=True))]
    ways.append((cost, path))


class Mp2Movement(Mp2Setup):
    """Rewards, movement, arrivals and caravans (see the module docstring)."""

    # --- rewards ----------------------------------------------------------------------------------------
    def _reward(self, seat: int, reward: Mapping[str, int]) -> None:
        """Gain a reward bundle; its choices (goods, moves, contracts, ...) become effects resolved next."""
        self._gain(seat, {k: v for k, v in reward.items() if k in RESOURCES})
        effects = goods_choices(seat, reward.get("good_choice", 0), reward.get("diff2", 0))
        effects += [simple(OtherMarker.kind, seat)] * reward.get("other_marker", 0)
        for _ in range(reward.get("black_die", 0)):
            self._take_black_die(seat)
        if reward.get("shield"):
            self.extra_shields[seat] += int(reward["shield"])
        effects += [simple(PILE_CONTRACT.kind, seat)] * reward.get("contract_pile", 0)
        effects += [simple(RewardContract.kind, seat)] * reward.get("contract_city", 0)
        if reward.get("move"):
            effects.append(move_effect(seat, "reward", int(reward["move"]), {}, optional=True))
        self._push(effects)

    # --- choice effects ---------------------------------------------------------------------------------
    # --- contracts --------------------------------------------------------------------------------------
    # --- movement ---------------------------------------------------------------------------------------
    def _step_cost(self, seat: int, cost: tuple[int, int, int], per: Mapping[str, int]) -> dict[str, int]:
        coins, camels, jade = cost
        if self.chars[seat] == "gantulga":
            coins = camels = 0
        return {
            "coins": coins + per.get("coins", 0),
            "camels": camels + per.get("camels", 0),
            "jade": jade + per.get("jade", 0),
        }

    def _steps(
        self, seat: int, per: Mapping[str, int], extra: Mapping[str, int]
    ) -> list[tuple[int, tuple[str, ...], dict[str, int]]]:
        """Affordable single steps for each figure: (figure, path entered, cost), with `extra` coins already
        owed (a placement fee) counted against the holdings."""
        links = MONGKE_LINKS if self.chars[seat] == "mongke" else LINKS
        seals = self.seals[seat]
        out = []
        for fig, start in enumerate(self.figures[seat]):
            for path, cost, needed in links[start]:
                if any(s not in seals for s in needed):
                    continue
                price = self._step_cost(seat, cost, per)
                total = {k: price.get(k, 0) + extra.get(k, 0) for k in ("coins", "camels", "jade")}
                if self.can_pay(seat, total):
                    out.append((fig, path, price))
        return out

    def _can_step(self, seat: int, extra: Mapping[str, int], per: Mapping[str, int]) -> bool:
        return bool(self._steps(seat, per, extra))

    def _routes(
        self, seat: int, fig: int, max_steps: int, per: Mapping[str, int]
    ) -> list[tuple[str, int, dict[str, int], tuple[str, ...]]]:
        """Affordable movements of one figure of 1..`max_steps` steps: (end, steps, total cost, nodes
        entered on one cheapest way). Per end only the cost-Pareto-optimal ones are kept (fewer steps on a
        tie); walks may go back and forth."""
        links = MONGKE_LINKS if self.chars[seat] == "mongke" else LINKS
        seals = self.seals[seat]
        frontier: dict[str, list[tuple[tuple[int, int, int], tuple[str, ...]]]] = {
            self.figures[seat][fig]: [((0, 0, 0), ())]
        }
        best: dict[str, list[tuple[tuple[int, int, int], int, tuple[str, ...]]]] = {}
        for steps in range(1, max_steps + 1):
            nxt: dict[str, list[tuple[tuple[int, int, int], tuple[str, ...]]]] = {}
            for node, ways in frontier.items():
                for path, cost, needed in links[node]:
                    if any(x not in seals for x in needed):
                        continue
                    price = self._step_cost(seat, cost, per)
                    for done, walked in ways:
                        total = (done[0] + price["coins"], done[1] + price["camels"], done[2] + price["jade"])
                        if not self.can_pay(seat, {"coins": total[0], "camels": total[1], "jade": total[2]}):
                            continue
                        _pareto_add(nxt.setdefault(path[-1], []), total, (*walked, *path))
            frontier = nxt
            for end, ways in frontier.items():
                for total, walked in ways:
                    found = best.setdefault(end, [])
                    if any(all(o <= t for o, t in zip(old, total, strict=True)) for old, _k, _w in found):
                        continue
                    found[:] = [f for f in found if not all(t <= o for t, o in zip(total, f[0], strict=True))]
                    found.append((total, steps, walked))
        out = []
        for end in sorted(best):
            for total, steps, walked in sorted(best[end]):
                out.append((end, steps, {"coins": total[0], "camels": total[1], "jade": total[2]}, walked))
        return out

    def _arrive_in(self, seat: int, node: str) -> list[EffectBase]:
        """Put the post on the map and return the bonus effects of that city."""
        self.posts[seat] = [*self.posts[seat], node]
        self.posts_this_turn = [*self.posts_this_turn, node]
        effects: list[EffectBase] = []
        if node in self.markers:
            effects.append(marker_effect(seat, self.markers[node]))
        tile = self.outposts.pop(node, None)
        if tile is not None:
            self._log({"event": "outpost", "seat": seat, "city": node, "tile": tile})
            effects.append(reward_effect(seat, OUTPOSTS[tile]))
            keepers = [s for s in range(self.num_players) if self.chars[s] == "filippo"]
            if keepers:
                self.kept_tiles[keepers[0]] = sorted([*self.kept_tiles[keepers[0]], tile])
        if node in self.contract_spaces and any(c is not None for c in self.contract_spaces[node]):
            effects.append(CityContractEffect(t=CityContract.kind, seat=seat, city=node))
        if node in SPECIAL_CITIES:
            effects.append(reward_effect(seat, SPECIAL_CITIES[node]["bonus"]))
        return effects

    # --- caravans ---------------------------------------------------------------------------------------
    def caravan_capacity(self, seat: int) -> int:
        return 2 if self.chars[seat] == "tartarino" else 1

    def _claims(self, seat: int) -> list[tuple[str, str]]:
        if len(self.caravans[seat]) >= self.caravan_capacity(seat):
            return []
        if not any(self.res[seat][g] > 0 for g in GOODS):
            return []
        out = set()
        figures = set(self.figures[seat])
        for node in figures:
            if node not in SHIELD or NODES[node]["kind"] == "oasis":
                continue
            shield = SHIELD[node]
            for tile, state in self.tiles.items():
                if state != "up" or shield not in ROUTE_TILES[tile]:
                    continue
                a, b = ROUTE_TILES[tile]
                other = b if a == shield else a
                for city in CITIES_OF_SHIELD[other]:
                    if city == BEIJING:
                        continue
                    if self.chars[seat] == "mailin" and city in figures:
                        continue
                    out.add((tile, city))
        return sorted(out)

    def _caravan_menu(self, seat: int) -> list[Action]:
        actions = [
            Action(f"claim:{tile}:{city}", "bonus", {"bonus": "claim_route", "tile": tile, "city": city})
            for tile, city in self._claims(seat)
        ]
        oasis_ok = self.options["caravan_oasis_completion"]
        for i, caravan in enumerate(self.caravans[seat]):
            at = caravan["at"]
            if at in self.figures[seat] and (oasis_ok or at not in OASES) and caravan["goods"]:
                actions.append(
                    Action(f"caravan:{i + 1}:complete", "bonus", {"bonus": "complete_route", "caravan": i})
                )
        return actions

    def _claim(self, seat: int, tile: str, city: str) -> None:
        self.tiles = {**self.tiles, tile: "held"}
        self.caravans[seat] = [*self.caravans[seat], {"tile": tile, "at": city, "goods": []}]
        self._log({"event": "caravan_claim", "seat": seat, "tile": tile, "city": city})
        self._push([simple(Load.kind, seat)])

    def _complete_caravan(self, seat: int, i: int) -> None:
        caravan = self.caravans[seat][i]
        self._log({"event": "caravan_complete", "seat": seat, "caravan": i + 1, "at": caravan["at"]})
        effects: list[EffectBase] = [
            CaravanGoodEffect(t=CaravanGood.kind, seat=seat, goods=list(caravan["goods"]))
        ]
        if self.chars[seat] == "tartarino":
            self._gain(seat, {"jade": 1})
            self.res[seat]["vp"] += 3
            tiles = sorted(c["tile"] for c in self.caravans[seat])
            if len(tiles) > 1:
                effects.append(ReturnTileEffect(t=ReturnTile.kind, seat=seat, caravan=i, tiles=tiles))
                self._push(effects)
                return
        effects.append(CaravanHomeEffect(t=CaravanHome.kind, seat=seat, caravan=i, tile=caravan["tile"]))
        self._push(effects)
