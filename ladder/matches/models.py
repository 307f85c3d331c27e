"""Match and seat models. Layer: data only; state changes go through `matches.services`.

Status: NEW (being set up) -> QUEUED -> RUNNING -> DONE, or ERROR (infrastructure failures exhausted) or
CANCELLED. An infrastructure failure with retry puts a RUNNING match back to QUEUED; only a result makes it
DONE, and only once.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class MatchStatus(models.TextChoices):
    NEW = "NEW", "new"
    QUEUED = "QUEUED", "queued"
    RUNNING = "RUNNING", "running"
    DONE = "DONE", "done"
    ERROR = "ERROR", "error"
    CANCELLED = "CANCELLED", "cancelled"


class Match(models.Model):
    ladder = models.ForeignKey("ladders.Ladder", on_delete=models.PROTECT, related_name="matches")
    seed = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=MatchStatus.choices, default=MatchStatus.NEW)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    end_reason = models.CharField(max_length=40, blank=True, default="")
    steps = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    rated = models.BooleanField(default=True, help_text="False for a practice match: it changes no rating.")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="requested_matches",
        help_text="Who asked for this practice match (none for ladder and tournament matches).",
    )

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["ladder", "status", "-id"], name="match_ladder_status"),
            models.Index(fields=["status", "-id"], name="match_status"),
            models.Index(fields=["seed"], name="match_seed"),  # duplicate sets share a seed
        ]
        verbose_name_plural = "matches"

    def __str__(self) -> str:
        return f"match {self.pk} ({self.status})"

    @property
    def is_done(self) -> bool:
        return self.status == MatchStatus.DONE


class Seat(models.Model):
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    index = models.PositiveSmallIntegerField()
    bot = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="seats")
    score = models.IntegerField(null=True, blank=True)
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    forfeited = models.BooleanField(default=False)
    faults = models.JSONField(
        default=list, blank=True, help_text="[{step, kind, reason, ...}] from the referee."
    )
    end_reason = models.CharField(
        max_length=20,
        blank=True,
        default="",
        help_text="Why the match ended for this seat: forfeit, resigned or disconnect when it forfeited, "
        "else how the game ended (completed, turn_cap).",
    )

    class Meta:
        ordering = ["match_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["match", "index"], name="seat_unique_index"),
            models.UniqueConstraint(fields=["match", "bot"], name="seat_unique_bot"),
        ]
        indexes = [models.Index(fields=["bot", "-match"], name="seat_bot_matches")]

    def __str__(self) -> str:
        return f"seat {self.index} of match {self.match_id}: {self.bot_id}"
