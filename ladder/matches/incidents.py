"""Server incidents of a match, in words for its page and its bot owners.

An infrastructure failure (a worker, gateway, bot host, broker or database lost; the match's time limit) is
never rated: the service `match_record_infrastructure_failure` appends one line per failed attempt to
`Match.error` (`incident_line`), puts the match back to be played again from the start, and after the
ladder's last attempt ends it ERROR with `end_reason` SERVER_INCIDENT: voided, unrated. This module writes
and reads those lines, so the format lives in one place. Layer: pure helpers over a `Match` row (no writes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ladder.matches.models import Match, MatchStatus

SERVER_INCIDENT = "server incident"  # a match's end_reason when incidents voided it
_LINE = re.compile(r"^attempt (\d+): (.*)$")


def incident_line(*, attempt: int, reason: str) -> str:
    """The line `Match.error` keeps for one attempt stopped by the server."""
    return f"attempt {attempt}: {reason.strip()}"


@dataclass(frozen=True)
class Incident:
    attempt: int
    reason: str


def match_incidents(*, match: Match) -> list[Incident]:
    """The attempts of `match` that server incidents stopped, in order."""
    found = []
    for line in match.error.splitlines():
        parsed = _LINE.match(line.strip())
        if parsed:
            found.append(Incident(int(parsed.group(1)), parsed.group(2)))
    return found


def match_incident_summary(*, match: Match) -> str:
    """One sentence on what server incidents did to `match`, or "" when it had none."""
    count = len(match_incidents(match=match))
    if not count:
        return ""
    times = "once" if count == 1 else f"{count} times"
    if match.status == MatchStatus.ERROR:
        return (
            f"Server incident: stopped by our infrastructure {times} and voided after its last attempt. "
            "It is unrated and no bot was charged."
        )
    if match.status == MatchStatus.DONE:
        return (
            f"Server incident: stopped by our infrastructure {times} and played again from the start; "
            "only the completed play counts, and no bot was charged for the interruptions."
        )
    return (
        f"Server incident: stopped by our infrastructure {times}; it will be played again from the start, "
        "and no bot is charged for it."
    )
