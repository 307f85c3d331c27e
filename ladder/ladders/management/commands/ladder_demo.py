"""`manage.py ladder_demo [--matches N] [--seed S]`: the default ladders, the house bots, and N real matches
between house bots played in this process by the referee (rated, with replays), for a ladder to look at
without any remote bot. Deterministic for a given seed and an empty database."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from engine_service.games.rng import ChanceRng
from engine_service.policies import LEVELS
from ladder.bots.services import house_bot_ensure
from ladder.ladders.services import ladder_ensure_defaults
from ladder.matches.house import house_match_play
from ladder.matches.services import match_create

HOUSE_POLICIES = LEVELS  # the house levels, weakest first (engine_service.policies.levels)


class Command(BaseCommand):
    help = "Create the default ladders and house bots, and play N rated house matches."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("--matches", type=int, default=24)
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args, **options):  # type: ignore[no-untyped-def]
        ladders = ladder_ensure_defaults()
        bots = [house_bot_ensure(policy=p) for p in HOUSE_POLICIES]
        rng = ChanceRng(options["seed"])
        played = 0
        for i in range(options["matches"]):
            ladder = ladders[i % len(ladders)]
            seats = list(bots)
            rng.shuffle(seats)
            match = match_create(
                ladder_id=ladder.pk,
                bot_ids=[b.pk for b in seats[: ladder.num_players]],
                seed=rng.randbelow(2**62),
            )
            if house_match_play(match_id=match.pk):
                played += 1
                self.stdout.write(f"match {match.pk} on {ladder.slug}: done")
        self.stdout.write(
            self.style.SUCCESS(f"{len(ladders)} ladders, {len(bots)} house bots, {played} matches played")
        )
