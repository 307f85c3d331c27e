"""Ladder model. Layer: data only; writes in `services.py`, reads in `selectors.py`.

A ladder is keyed by a versioned game id, a player count and the game options; it carries its rating
parameters (Elo K, scale and start; OpenSkill mu and sigma), which never change once a match is rated
(ratings could not be recomputed otherwise). `provisional_sigma` only marks bots on the leaderboard
(`ladder.ratings.standing`), so it may change at any time.
"""

from __future__ import annotations

from django.db import models

from ladder.ratings import elo
from ladder.ratings.standing import DEFAULT_PROVISIONAL_SIGMA


class Ladder(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=120)
    game_id = models.CharField(max_length=60)
    num_players = models.PositiveSmallIntegerField()
    options = models.JSONField(default=dict, blank=True)
    description = models.TextField(blank=True, default="")
    elo_k = models.FloatField(default=elo.DEFAULT_K)
    elo_scale = models.FloatField(default=elo.DEFAULT_SCALE)
    elo_start = models.FloatField(default=elo.DEFAULT_START)
    openskill_mu = models.FloatField(default=elo.DEFAULT_MU)
    openskill_sigma = models.FloatField(default=elo.DEFAULT_SIGMA)
    provisional_sigma = models.FloatField(
        default=DEFAULT_PROVISIONAL_SIGMA,
        help_text="A bot whose OpenSkill sigma is above this is marked provisional on the leaderboard.",
    )
    season = models.PositiveIntegerField(
        default=1, help_text="The current season's number (closing a season starts the next)."
    )
    house_bots_allowed = models.BooleanField(default=True, help_text="House bots may fill empty seats.")
    duplicate_sets = models.BooleanField(
        default=False,
        help_text="Matchmaking plays each table as a duplicate set: the same seed once per seat rotation. "
        "A new ladder takes its game's default (`ladder.ladders.services.DUPLICATE_SETS_GAMES`): on where "
        "`python -m bench luck` found the paired variance of rank differences clearly lower, off elsewhere "
        "(README.md, Luck control).",
    )
    live_delay_steps = models.PositiveIntegerField(
        default=0, help_text="A running match's live view shows the game this many steps behind the play."
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game_id", "num_players", "slug"]

    def __str__(self) -> str:
        return self.name

    @property
    def params(self) -> elo.RatingParams:
        return elo.RatingParams(
            k=self.elo_k,
            scale=self.elo_scale,
            start=self.elo_start,
            mu=self.openskill_mu,
            sigma=self.openskill_sigma,
        )
