"""Play a match whose seats are all house bots in this process: mark it running, let the referee run it
with each seat's house policy, and record the result through `match_record_result`.

Layer: an orchestration helper over the services (used by `manage.py ladder_demo`, tests and the bench;
matches with remote bots are run by the Celery workers through the gateway). House policies are seeded from
the match seed, the seat index and the server secret (`house_seed`), so a house match is reproducible from
its row on the same server.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, run_match
from ladder.matches.models import Match
from ladder.matches.seeds import seed_derive
from ladder.matches.services import match_mark_running, match_record_result


def house_seed(match_seed: int, seat: int) -> int:
    """The house policy's seed for `seat`: keyed by the server secret, so the match seed alone (published
    once the match is over) predicts no house bot's play in another match."""
    return seed_derive("house", match_seed, seat)


def house_match_record(*, match: Match) -> MatchRecord:
    """The referee's record of `match` played by its house bots (no database writes)."""
    seats = list(match.seats.select_related("bot").order_by("index"))
    not_house = [s.bot.name for s in seats if not s.bot.is_house]
    if not_house:
        raise ValidationError(f"match {match.pk} has remote bots ({', '.join(not_house)}); workers run those")
    players = [
        HouseSeat(make_policy(s.bot.house_policy, seed=house_seed(match.seed, s.index)), name=s.bot.name)
        for s in seats
    ]
    for player, seat in zip(players, seats, strict=True):
        player.bot_id = str(seat.bot_id)
    ladder = match.ladder
    return run_match(
        ladder.game_id, ladder.num_players, match.seed, players, ladder.options, match_id=str(match.pk)
    )


def house_match_play(*, match_id: int) -> bool:
    """Run and record one all-house match; False when it was not runnable or was already recorded."""
    if not match_mark_running(match_id=match_id):
        return False
    match = Match.objects.select_related("ladder").get(pk=match_id)
    record = house_match_record(match=match)
    return match_record_result(match_id=match_id, record=record)
