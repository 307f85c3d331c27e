"""A map of nodes joined by routes with extra costs, and every distinct outcome of a walk on it.

Pure and game-neutral: a game passes its nodes, routes (with extra costs as resource bundles) and, for
abilities that add links (jumps), a function giving the extra neighbours of a node.

A walk moves node to node along routes; going back and forth is allowed; each crossing pays the route's
extra cost. `outcomes` enumerates, for step counts in a range, every distinct (end node, cities passed,
total extra cost), keeping per (end, passed, steps) only the cost-Pareto-optimal ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

Cost = tuple[int, ...]


@dataclass(frozen=True)
class WalkOutcome:
    end: int
    steps: int
    cost: Cost  # extra route costs summed, in the order of `RouteMap.cost_names`
    passed: tuple[int, ...]  # tracked nodes entered on the way, end included, first-visit order


class RouteMap:
    """Undirected routes; `cost_names` fixes the order of the cost tuples (e.g. ("camels", "coins"))."""

    def __init__(
        self,
        nodes: Sequence[int],
        routes: Iterable[tuple[int, int, Mapping[str, int]]],
        cost_names: Sequence[str],
    ) -> None:
        self.nodes = list(nodes)
        self.cost_names = tuple(cost_names)
        self.links: dict[int, list[tuple[int, Cost]]] = {n: [] for n in self.nodes}
        self.route_cost: dict[tuple[int, int], Cost] = {}
        for a, b, cost in routes:
            vector = tuple(int(cost.get(name, 0)) for name in self.cost_names)
            self.links[a].append((b, vector))
            self.links[b].append((a, vector))
            self.route_cost[(a, b)] = vector
            self.route_cost[(b, a)] = vector
        for node in self.links:
            self.links[node].sort()

    def neighbours(self, node: int) -> list[tuple[int, Cost]]:
        return self.links[node]

    def outcomes(
        self,
        start: int,
        max_steps: int,
        *,
        min_steps: int = 1,
        extra_links: Callable[[int], Iterable[tuple[int, Cost]]] | None = None,
        tracked: frozenset[int] = frozenset(),
        budget: Cost | None = None,
    ) -> list[WalkOutcome]:
        """Distinct walk outcomes of `min_steps`..`max_steps` steps from `start`, in a stable order.

        `tracked` nodes are recorded in `passed` (first visit order, the start excluded); `budget` prunes
        walks whose extra cost exceeds it in any component. Dominated costs for the same (end, passed,
        steps) are dropped.
        """
        zero = tuple(0 for _ in self.cost_names)
        frontier: dict[tuple[int, tuple[int, ...]], list[Cost]] = {(start, ()): [zero]}
        found: list[WalkOutcome] = []
        for steps in range(1, max_steps + 1):
            nxt: dict[tuple[int, tuple[int, ...]], list[Cost]] = {}
            for (node, passed), costs in frontier.items():
                links = list(self.links[node])
                if extra_links is not None:
                    links.extend(extra_links(node))
                for other, extra in links:
                    new_passed = (*passed, other) if other in tracked and other not in passed else passed
                    for cost in costs:
                        total = tuple(c + e for c, e in zip(cost, extra, strict=True))
                        if budget is not None and any(t > b for t, b in zip(total, budget, strict=True)):
                            continue
                        _insert_pareto(nxt.setdefault((other, new_passed), []), total)
            frontier = nxt
            if steps >= min_steps:
                for (node, passed), costs in sorted(frontier.items()):
                    for cost in sorted(costs):
                        found.append(WalkOutcome(node, steps, cost, passed))
        return found


def _insert_pareto(costs: list[Cost], new: Cost) -> None:
    for old in costs:
        if all(o <= n for o, n in zip(old, new, strict=True)):
            return
    costs[:] = [old for old in costs if not all(n <= o for n, o in zip(new, old, strict=True))]
    costs.append(new)
