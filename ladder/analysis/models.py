"""The analysis of a finished match: one per match, asked for by a bot owner (or staff), run by a worker.

Layer: data only; state changes go through `analysis.services`. Status: QUEUED (asked for, a task sent) ->
RUNNING (a worker holds it; `decisions_done` of `decisions_total` so far) -> DONE (`reviews` stored) or
FAILED (`reason` says why: its CPU or time budget ran out, the record could not be read, ...). A FAILED
analysis may be asked for again (back to QUEUED); a DONE one is kept and served as it is.

`reviews` is the engine's `DecisionReview.as_json()` list, in decision order: per decision, the deciding seat,
the move played and the best move the search found (ids and words), their estimated values and the loss
(best less played, never negative). Each decision was searched from its own seat's observation only.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class AnalysisStatus(models.TextChoices):
    QUEUED = "QUEUED", "queued"
    RUNNING = "RUNNING", "running"
    DONE = "DONE", "done"
    FAILED = "FAILED", "failed"


class MatchAnalysis(models.Model):
    match = models.OneToOneField("matches.Match", on_delete=models.CASCADE, related_name="analysis")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="match_analyses",
        help_text="Who asked for it last (their per-user bounds count it).",
    )
    status = models.CharField(max_length=10, choices=AnalysisStatus.choices, default=AnalysisStatus.QUEUED)
    reason = models.TextField(blank=True, default="", help_text="Why it failed (FAILED only).")
    level = models.CharField(max_length=40, default="search", help_text="The house level that searched.")
    decisions_done = models.PositiveIntegerField(default=0)
    decisions_total = models.PositiveIntegerField(
        default=0, help_text="Decisions to analyse (at most LADDER_ANALYSIS_MAX_DECISIONS); 0 until started."
    )
    decisions_in_match = models.PositiveIntegerField(
        default=0, help_text="Decisions of the match with a choice (more than one legal move)."
    )
    cpu_seconds = models.FloatField(default=0.0, help_text="CPU time spent on it, over every attempt.")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Times a worker started it.")
    reviews = models.JSONField(default=list, blank=True, help_text="DecisionReview.as_json() per decision.")
    requested_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "match analyses"
        indexes = [
            models.Index(fields=["requested_by", "-requested_at"], name="analysis_user_requested"),
            models.Index(fields=["status"], name="analysis_status"),
        ]

    def __str__(self) -> str:
        return f"analysis of match {self.match_id} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status in (AnalysisStatus.QUEUED, AnalysisStatus.RUNNING)
