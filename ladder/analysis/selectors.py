"""Match analysis reads: an analysis's status, progress and reviews, and the decisions that lost the most.

Layer: selectors (read-only). An analysis is shown to anyone, like the replay it was made from: only for a
match whose replay is shown (`match_secrets_revealed`), else `AnalysisNotFound`. Every decision was searched
from its own seat's observation, and a review names only moves that were played or legal for that seat, in
a match that is over (whose record, hands included, is public by then).

`analysis_refusal` says why someone may not ask for an analysis (the `AnalysisRefused` kinds carry the
HTTP status the API answers with); the service checks it again, with the bounds, before any write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ladder.analysis.models import AnalysisStatus, MatchAnalysis
from ladder.matches.models import Match, MatchStatus
from ladder.matches.selectors import match_secrets_revealed
from ladder.replays.models import Replay

WORST_COUNT = 5  # decisions the replay marks: those that lost the most


class AnalysisRefused(Exception):
    """A request the service refuses; the message says why, `status` is the HTTP status."""

    status = 400


class AnalysisNotFound(AnalysisRefused):
    status = 404


class AnalysisDenied(AnalysisRefused):
    status = 403


class AnalysisUnavailable(AnalysisRefused):
    """The match cannot be analysed (yet): not finished, or its duplicate set is still being played."""

    status = 409


class AnalysisLimited(AnalysisRefused):
    """A bound on analyses (per user, or the site's queue) is reached."""

    status = 429


def analysis_refusal(*, user: Any, match: Match) -> AnalysisRefused | None:
    """Why `user` may not ask for an analysis of `match` (None: they may, bounds aside)."""
    if user is None or not user.is_authenticated:
        return AnalysisDenied("sign in as the owner of a bot seated in this match to ask for its analysis")
    if not user.is_staff and not match.seats.filter(bot__owner_id=user.pk).exists():
        return AnalysisDenied(
            f"no seat of match {match.pk} is played by a bot of yours: a match is analysed for its bots' "
            "owners (and staff)"
        )
    if match.status != MatchStatus.DONE:
        return AnalysisUnavailable(
            f"match {match.pk} is {match.get_status_display()}: only a finished match can be analysed"
        )
    if not match_secrets_revealed(match=match):
        return AnalysisUnavailable(
            f"match {match.pk} belongs to a duplicate set still being played: it can be analysed once every "
            "match of the set is finished"
        )
    if not Replay.objects.filter(match_id=match.pk).exists():
        return AnalysisUnavailable(f"match {match.pk} has no stored replay to analyse")
    return None


def worst_decisions(reviews: Sequence[dict[str, Any]], count: int = WORST_COUNT) -> list[dict[str, Any]]:
    """The `count` reviews with the largest loss (above zero), largest first, earlier first on a tie."""
    lost = [r for r in reviews if float(r.get("loss") or 0.0) > 0.0]
    return sorted(lost, key=lambda r: (-float(r["loss"]), int(r["step"])))[:count]


def analysis_get(*, match_id: int) -> MatchAnalysis | None:
    return MatchAnalysis.objects.filter(match_id=match_id).first()


def analysis_view(*, match_id: int, user: Any = None) -> dict[str, Any]:
    """What the analysis endpoint and the replay page show: `status` (none, QUEUED, RUNNING, DONE, FAILED),
    its progress, `reason` when it failed, once DONE the `reviews` and `worst` (their steps, worst first);
    `may_request` whether `user` may ask for it (bounds aside) and `refusal` why not."""
    match = Match.objects.filter(pk=match_id).first()
    if match is None:
        raise AnalysisNotFound(f"no match with id {match_id}")
    if not match_secrets_revealed(match=match):
        raise AnalysisNotFound(
            f"match {match_id} is not finished, or belongs to a duplicate set still being played: its analysis "
            "is shown with its replay"
        )
    refusal = analysis_refusal(user=user, match=match)
    body: dict[str, Any] = {
        "match": match_id,
        "status": "none",
        "may_request": refusal is None,
        "refusal": None if refusal is None else str(refusal),
        "level": None,
        "reason": "",
        "decisions_done": 0,
        "decisions_total": 0,
        "decisions_in_match": 0,
        "cpu_seconds": 0.0,
        "requested_at": None,
        "started_at": None,
        "finished_at": None,
        "reviews": [],
        "worst": [],
    }
    analysis = analysis_get(match_id=match_id)
    if analysis is None:
        return body
    done = analysis.status == AnalysisStatus.DONE
    reviews = list(analysis.reviews) if done else []
    body.update(
        status=analysis.status,
        level=analysis.level,
        reason=analysis.reason,
        decisions_done=analysis.decisions_done,
        decisions_total=analysis.decisions_total,
        decisions_in_match=analysis.decisions_in_match,
        cpu_seconds=round(analysis.cpu_seconds, 3),
        requested_at=analysis.requested_at.isoformat(),
        started_at=analysis.started_at.isoformat() if analysis.started_at else None,
        finished_at=analysis.finished_at.isoformat() if analysis.finished_at else None,
        reviews=reviews,
        worst=[r["step"] for r in worst_decisions(reviews)],
    )
    return body
