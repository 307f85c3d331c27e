"""Rating models: the append-only ledger and the current rating per bot and ladder.

Layer: data only. Ledger rows are written once by `ratings.services` inside the match-result transaction and
never changed (`save` refuses updates, `delete` refuses); `Rating` rows are the ledger's running total and
can be rebuilt from it (`manage.py ratings_recompute`), board fields included: `conservative`, `position` and
`leads_tier` are the maintained leaderboard (`ladder.ratings.board` keeps them, in the rating transaction,
and its docstring defines them). `SeatTally` rows are the ledger's totals per seat position, kept the same
way by `ladder.ratings.seats`. A ledger row's `*_before` values are the ones the match
was rated from: at a new bot version's first game they are the version's start (`elo.version_change`).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from ladder.ratings.elo import conservative

LISTED = Q(position__isnull=False)  # on the ladder's current board


class Rating(models.Model):
    ladder = models.ForeignKey("ladders.Ladder", on_delete=models.CASCADE, related_name="ratings")
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="ratings")
    elo = models.FloatField()
    mu = models.FloatField()
    sigma = models.FloatField()
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    last_played_at = models.DateTimeField(null=True, blank=True)
    last_match = models.ForeignKey(
        "matches.Match", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    version = models.CharField(
        max_length=64, blank=True, default="", help_text="The bot version the rating was last earned with."
    )
    season = models.PositiveIntegerField(default=1, help_text="The ladder season these values belong to.")
    updated_at = models.DateTimeField(auto_now=True)
    conservative = models.FloatField(default=0.0, help_text="mu - 3 sigma, the board's ranking key.")
    position = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Place on the ladder's current board (1 = top); empty when not listed.",
    )
    leads_tier = models.BooleanField(default=False, help_text="Opens a tier of the current board.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["ladder", "bot"], name="rating_unique_ladder_bot")]
        indexes = [
            models.Index(fields=["ladder", "-elo", "id"], name="rating_leaderboard"),
            models.Index(fields=["ladder", "position"], name="rating_board_position", condition=LISTED),
            models.Index(
                fields=["ladder", "-conservative", "id"], name="rating_board_order", condition=LISTED
            ),
            models.Index(
                fields=["ladder", "position"], name="rating_board_tiers", condition=Q(leads_tier=True)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot} on {self.ladder}: {self.elo:.1f}"

    def save(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        """Saved with its ranking key (bulk writes set it themselves: `ratings.services`, `ratings.board`)."""
        self.conservative = conservative(self.mu, self.sigma)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and {"mu", "sigma"} & set(update_fields):
            kwargs["update_fields"] = {*update_fields, "conservative"}
        super().save(*args, **kwargs)

    @property
    def win_rate(self) -> float | None:
        return self.wins / self.games if self.games else None


class LedgerRowImmutable(Exception):
    """The rating ledger is append-only."""


class RatingLedger(models.Model):
    ladder = models.ForeignKey("ladders.Ladder", on_delete=models.PROTECT, related_name="ledger")
    match = models.ForeignKey("matches.Match", on_delete=models.PROTECT, related_name="ledger")
    bot = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="ledger")
    seat = models.PositiveSmallIntegerField()
    rank = models.PositiveSmallIntegerField()
    score = models.IntegerField(null=True)
    version = models.CharField(
        max_length=64, blank=True, default="", help_text="The version the bot reported for this match."
    )
    season = models.PositiveIntegerField(default=1, help_text="The ladder season the match was rated in.")
    elo_before = models.FloatField()
    elo_after = models.FloatField()
    mu_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_before = models.FloatField()
    sigma_after = models.FloatField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["match", "bot"], name="ledger_unique_match_bot")]
        indexes = [models.Index(fields=["bot", "ladder", "id"], name="ledger_history")]

    def __str__(self) -> str:
        return f"match {self.match_id} {self.bot_id}: {self.elo_before:.1f} -> {self.elo_after:.1f}"

    def save(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        if self.pk is not None and not kwargs.get("force_insert"):
            raise LedgerRowImmutable("rating ledger rows are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise LedgerRowImmutable("rating ledger rows are append-only")

    @property
    def elo_delta(self) -> float:
        return self.elo_after - self.elo_before

    @property
    def conservative_after(self) -> float:
        return conservative(self.mu_after, self.sigma_after)


class SeatTally(models.Model):
    """One seat position's totals over every ledger row of a ladder (all seasons): the win-rate-by-seat
    table in a read of num_players rows. Kept by `ladder.ratings.seats` in the rating transaction."""

    ladder = models.ForeignKey("ladders.Ladder", on_delete=models.CASCADE, related_name="seat_tallies")
    seat = models.PositiveSmallIntegerField()
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    rank_sum = models.PositiveBigIntegerField(default=0)
    scored = models.PositiveIntegerField(default=0, help_text="Games of the seat with a score recorded.")
    score_sum = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["ladder_id", "seat"]
        constraints = [models.UniqueConstraint(fields=["ladder", "seat"], name="seat_tally_unique_seat")]

    def __str__(self) -> str:
        return f"{self.ladder_id} seat {self.seat}: {self.wins}/{self.games}"


class Season(models.Model):
    """A closed season of a ladder: its final standings are frozen in `SeasonStanding` rows."""

    ladder = models.ForeignKey("ladders.Ladder", on_delete=models.CASCADE, related_name="seasons")
    number = models.PositiveIntegerField()
    name = models.CharField(max_length=120, blank=True, default="")
    started_at = models.DateTimeField()
    closed_at = models.DateTimeField()

    class Meta:
        ordering = ["ladder_id", "number"]
        constraints = [models.UniqueConstraint(fields=["ladder", "number"], name="season_unique_number")]

    def __str__(self) -> str:
        return self.name or f"{self.ladder} season {self.number}"


class SeasonStanding(models.Model):
    """One bot's final place in a closed season (the leaderboard row at the close, as it was)."""

    season = models.ForeignKey(Season, on_delete=models.CASCADE, related_name="standings")
    bot = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="season_standings")
    position = models.PositiveIntegerField()
    rank = models.PositiveIntegerField()
    tier = models.PositiveIntegerField()
    provisional = models.BooleanField()
    elo = models.FloatField()
    mu = models.FloatField()
    sigma = models.FloatField()
    conservative = models.FloatField()
    games = models.PositiveIntegerField()
    wins = models.PositiveIntegerField()

    class Meta:
        ordering = ["season_id", "position"]
        constraints = [models.UniqueConstraint(fields=["season", "bot"], name="season_standing_unique_bot")]
