"""`{% match_status match %}`: a match page's state line (a practice match waiting for a free slot of its
bot, queued, running, called off) and, while the match is unfinished, the small poll
(`web/match_status.js`) that reloads the page when its state changes, so the page goes from waiting to the
live view to the replay by itself. Layer: presentation; reads `ladder.matches.status_apis.match_status_data`,
the same fields as `GET /api/v1/matches/<id>/status/`.
"""

from __future__ import annotations

from typing import Any

from django import template

from ladder.matches.models import Match, MatchStatus
from ladder.matches.status_apis import match_status_data

register = template.Library()

UNFINISHED = (MatchStatus.NEW, MatchStatus.QUEUED, MatchStatus.RUNNING)


@register.inclusion_tag("web/_match_status.html")
def match_status(match: Match) -> dict[str, Any]:
    data = match_status_data(match=match)
    return {"state": data, "polling": match.status in UNFINISHED}
