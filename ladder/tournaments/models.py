"""Tournament models. Layer: data only; writes in `services.py`, reads in `selectors.py`.

A tournament runs on one ladder for a fixed set of entrants, round by round; each round holds the ladder
matches it created (`TournamentMatch`) and the bots that sat out with a bye (Swiss only; a bye is worth
half a point). Status: RUNNING until its last round is complete, then DONE (or CANCELLED).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class TournamentFormat(models.TextChoices):
    ROUND_ROBIN = "round_robin", "round robin"
    SWISS = "swiss", "Swiss"


class TournamentStatus(models.TextChoices):
    RUNNING = "RUNNING", "running"
    DONE = "DONE", "done"
    CANCELLED = "CANCELLED", "cancelled"


class Tournament(models.Model):
    name = models.CharField(max_length=120)
    ladder = models.ForeignKey("ladders.Ladder", on_delete=models.PROTECT, related_name="tournaments")
    format = models.CharField(max_length=20, choices=TournamentFormat.choices)
    rounds_planned = models.PositiveSmallIntegerField()
    seed = models.BigIntegerField()
    status = models.CharField(
        max_length=10, choices=TournamentStatus.choices, default=TournamentStatus.RUNNING
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return self.name


class TournamentEntry(models.Model):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="tournament_entries")
    seed_order = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["tournament_id", "seed_order"]
        constraints = [models.UniqueConstraint(fields=["tournament", "bot"], name="entry_unique_bot")]


class TournamentRound(models.Model):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveSmallIntegerField()
    byes = models.JSONField(default=list, blank=True, help_text="Bot ids sitting this round out.")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["tournament_id", "number"]
        constraints = [models.UniqueConstraint(fields=["tournament", "number"], name="round_unique_number")]


class TournamentMatch(models.Model):
    round = models.ForeignKey(TournamentRound, on_delete=models.CASCADE, related_name="tournament_matches")
    match = models.OneToOneField("matches.Match", on_delete=models.PROTECT, related_name="tournament_match")
    table = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["round_id", "table"]
