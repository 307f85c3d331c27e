"""Tables waiting for capacity: what matchmaking's last run held back, per ladder, and why.

Layer: a read-only adapter over the session registry's capacity reports (matchmaking writes them,
`workers.matchmaking.report_held`; the registry is opened as `ladder.bots.presence` opens it). A registry that
cannot be read gives nothing held, never an exception: a page must render while the store is down. Reasons
name workers and bots by id only, never a seed, a hand or an address outside the deployment.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ladder.bots.presence import registry

log = logging.getLogger("caravanserai.ladder")

KIND = "matchmaking"  # the kind `workers.matchmaking` reports under


@dataclass(frozen=True)
class HeldTables:
    """Tables held back for capacity per ladder slug, and the reasons, as of matchmaking's last run."""

    per_ladder: dict[str, int] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return sum(self.per_ladder.values())


def held_tables() -> HeldTables:
    try:
        reports = registry().capacity_reports(KIND)
    except Exception as exc:
        log.warning("capacity reports unreadable: %s", exc)
        return HeldTables()
    per_ladder: dict[str, int] = {}
    reasons: list[str] = []
    for report in reports.values():
        for slug, n in dict(report.payload.get("held", {})).items():
            per_ladder[str(slug)] = per_ladder.get(str(slug), 0) + int(n)
        reasons += [str(r) for r in report.payload.get("reasons", []) if str(r) not in reasons]
    return HeldTables(per_ladder, tuple(reasons))
