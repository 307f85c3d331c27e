"""Replay model: one per finished match, the referee's `MatchRecord` JSON compressed with zlib.

Layer: data only. The record (game id, options, seed, seats, action log, state hashes, result, faults) is
the replay: frames are re-simulated from it by the engine, never stored.
"""

from __future__ import annotations

import zlib

from django.db import models

from engine_service.referee import MatchRecord


class Replay(models.Model):
    match = models.OneToOneField("matches.Match", on_delete=models.CASCADE, related_name="replay")
    format = models.CharField(max_length=40)
    data = models.BinaryField(help_text="zlib-compressed MatchRecord JSON")
    sha256 = models.CharField(max_length=64, help_text="sha256 of the uncompressed record JSON")
    steps = models.PositiveIntegerField()
    final_hash = models.CharField(max_length=64, blank=True, default="")
    raw_size = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"replay of match {self.match_id} ({self.steps} steps)"

    def record_text(self) -> str:
        return zlib.decompress(bytes(self.data)).decode()

    def record(self) -> MatchRecord:
        return MatchRecord.loads(self.record_text())

    @property
    def compressed_size(self) -> int:
        return len(bytes(self.data))


class LiveProgress(models.Model):
    """The actions of a match being played, as far as the worker has published them (every few seconds),
    so a spectator can watch it: the spectator's view is re-simulated from them and the match's seed.
    Never served raw (an action id may name a seat's hidden choice); removed when the match is recorded.
    `clocks` are the referee's measured clocks of those decisions (public: the live view shows them)."""

    match = models.OneToOneField(
        "matches.Match", on_delete=models.CASCADE, primary_key=True, related_name="live_progress"
    )
    steps = models.PositiveIntegerField()
    actions = models.JSONField(help_text="[[seat, action id], ...] in play order")
    clocks = models.JSONField(
        default=dict, blank=True, help_text='{"step": [seconds charged, bank left or null], ...}'
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"match {self.match_id} live at step {self.steps}"


class DecisionDebug(models.Model):
    """What a bot wrote for its owner with one decision (`Decision.debug`, cleaned and cut by the referee:
    `engine_service.referee.debug_text`), kept beside the replay, never in it: the stored record holds none,
    so no frame, live view or public endpoint can show it. Read through `replays.debug` only, which serves
    it to the seat's bot's owner (and staff)."""

    match = models.ForeignKey("matches.Match", on_delete=models.CASCADE, related_name="debug_texts")
    seat = models.PositiveSmallIntegerField()
    step = models.PositiveIntegerField(help_text="The number of actions played before this decision.")
    text = models.TextField()

    class Meta:
        ordering = ["match_id", "seat", "step"]
        constraints = [
            models.UniqueConstraint(fields=["match", "seat", "step"], name="decision_debug_unique_step"),
        ]

    def __str__(self) -> str:
        return f"debug text of seat {self.seat} at step {self.step} of match {self.match_id}"
