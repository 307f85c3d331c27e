"""Bot model. Layer: data only; writes live in `services.py`, reads in `selectors.py`.

A bot's token is never stored: only its sha256 (`token_hash`) and its first characters (`token_hint`) so an
owner can tell tokens apart. A revoked token leaves `token_hash` empty; a retired bot is `active=False` and
never plays again. A hosted bot has a credential of its own, `hosted_token_hash` (the sha256 of the token the
bot host holds for it): it authenticates the same bot, so an owner's token and the hosted one work side by
side, each replaced or revoked without touching the other; both streams share the bot's `max_concurrent`. House bots (`is_house`) run in-process with the named `house_policy`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower


class Bot(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="bots")
    name = models.CharField(max_length=40)
    description = models.TextField(blank=True, default="")
    games = models.JSONField(default=list, help_text="Versioned game ids this bot plays.")
    token_hash = models.CharField(max_length=64, null=True, blank=True, unique=True)
    token_hint = models.CharField(max_length=12, blank=True, default="")
    token_created_at = models.DateTimeField(null=True, blank=True)
    hosted_token_hash = models.CharField(
        max_length=64, null=True, blank=True, unique=True, help_text="The bot host's credential (sha256)."
    )
    hosted_token_created_at = models.DateTimeField(null=True, blank=True)
    active = models.BooleanField(default=True, help_text="False once retired: never plays again.")
    retired_at = models.DateTimeField(null=True, blank=True)
    max_concurrent = models.PositiveSmallIntegerField(default=1)
    accepts_challenges = models.BooleanField(
        default=False, help_text="Other owners may ask for unrated practice matches against this bot."
    )
    versions_seen = models.JSONField(default=list, help_text="Bot versions reported by the gateway.")
    is_house = models.BooleanField(default=False)
    house_policy = models.CharField(max_length=40, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(Lower("name"), name="bot_name_unique_ci"),
            models.UniqueConstraint(
                fields=["house_policy"], condition=models.Q(is_house=True), name="house_policy_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(is_house=False, house_policy="")
                | models.Q(is_house=True, token_hash=None, hosted_token_hash=None),
                name="house_bot_shape",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def has_token(self) -> bool:
        return bool(self.token_hash)

    @property
    def status_label(self) -> str:
        if not self.active:
            return "retired"
        if self.is_house:
            return "house"
        return "active" if self.token_hash else "token revoked"


class BotVersion(models.Model):
    """A version string a bot reported, with its lineage: `parent` is the version the bot played before it.

    Its first rated game on a ladder starts from the parent's rating with a widened sigma, or from the
    ladder's start values when `reset_rating` (the owner's choice, fixed once the version has a rated game);
    the rule is `ladder.ratings.elo.version_start`."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    name = models.CharField(max_length=64)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children"
    )
    reset_rating = models.BooleanField(
        default=False, help_text="Start this version from the ladder's start rating, not its parent's."
    )
    first_seen_at = models.DateTimeField()

    class Meta:
        ordering = ["bot_id", "first_seen_at", "id"]
        constraints = [models.UniqueConstraint(fields=["bot", "name"], name="bot_version_unique_name")]

    def __str__(self) -> str:
        return f"{self.bot} {self.name}"
