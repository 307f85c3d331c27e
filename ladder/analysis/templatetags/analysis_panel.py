"""`{% analysis_panel match has_replay %}`: the match page's analysis panel ("Analyse this match" for those
who may ask, its progress while it runs, and once done the decisions that lost the most), which
`web/replay-analysis.js` drives from `GET /api/v1/matches/<id>/analysis/` and marks in the replay's move
list. Shown with a replay only, and only when there is an analysis or the reader may ask for one.

Layer: presentation; reads `ladder.analysis.selectors`.
"""

from __future__ import annotations

from typing import Any

from django import template

from ladder.analysis.models import AnalysisStatus
from ladder.analysis.selectors import WORST_COUNT, analysis_get, analysis_refusal
from ladder.matches.models import Match

register = template.Library()


@register.inclusion_tag("analysis/_analysis_panel.html", takes_context=True)
def analysis_panel(context: template.Context, match: Match, has_replay: bool) -> dict[str, Any]:
    if not has_replay:
        return {"show": False}
    request = context.get("request")
    user = getattr(request, "user", None)
    may_request = analysis_refusal(user=user, match=match) is None
    analysis = analysis_get(match_id=match.pk)
    status = analysis.status if analysis is not None else "none"
    return {
        "show": analysis is not None or may_request,
        "match": match,
        "analysis": analysis,
        "status": status,
        "open": status in (AnalysisStatus.QUEUED, AnalysisStatus.RUNNING),
        "may_request": may_request,
        "button": may_request and status in ("none", AnalysisStatus.FAILED),
        "worst_count": WORST_COUNT,
        "csrf_token": context.get("csrf_token"),
    }
