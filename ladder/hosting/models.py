"""Hosted bot models. Layer: data only; writes live in `services.py`, reads in `selectors.py`.

A `HostedVersion` is one uploaded archive: immutable (never updated or deleted once stored), identified by
its sha256, with the version uploaded before it as its parent; its `name` is the manifest's version, the
`bot_version` its code reports in Hello, recorded as a `BotVersion` with the same lineage. A `HostedBot` is
a bot's hosting state: which version the bot hosts run, which host holds it (a lease), and what that host
last reported (state, last exit, a bounded log shown to the owner only). The bot's token is never here.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from ladder.bots.models import Bot


class HostedVersion(models.Model):
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="hosted_versions")
    name = models.CharField(max_length=64)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    runtime = models.CharField(max_length=16)
    entry = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField()
    file_count = models.PositiveIntegerField()
    archive = models.BinaryField()
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["bot_id", "created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["bot", "name"], name="hosted_version_unique_name")]

    def __str__(self) -> str:
        return f"{self.bot} {self.name} ({self.sha256[:12]})"


class HostedBot(models.Model):
    WAITING = "waiting"
    STATES = ["waiting", "running", "backoff", "failed", "stopped"]

    bot = models.OneToOneField(Bot, on_delete=models.CASCADE, related_name="hosting")
    version = models.ForeignKey(HostedVersion, on_delete=models.PROTECT, related_name="+")
    enabled = models.BooleanField(default=True, help_text="False: no host runs it.")
    host_id = models.CharField(max_length=64, blank=True, default="")
    claimed_until = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=16, default=WAITING)
    detail = models.CharField(max_length=200, blank=True, default="")
    starts = models.PositiveIntegerField(default=0)
    crashes = models.PositiveIntegerField(default=0)
    log = models.TextField(blank=True, default="")
    reported_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.bot} hosted {self.version.name}: {self.state}"
