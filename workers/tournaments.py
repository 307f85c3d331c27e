"""Tournament tasks: each round is a Celery chord, a group of `run_match` tasks (one per table) whose
callback pairs the next round.

`start_tournament(id)` pairs round 1 and sends its chord; `round_finished(id)` (the chord body) pairs the
next round once every match of the current one is finished, and sends that round's chord, until the last
round, when the tournament is DONE. Pairing is the service's (`tournament_pair_next_round`, which locks the
tournament and does nothing while a round is unfinished), so a callback delivered twice, or racing the beat
sweep, never pairs a round twice. `sweep` (beat) advances any running tournament whose chord callback was
lost (a worker killed, a match given up after its last attempt), so no tournament stalls.

The task names are a contract: the ladder starts a tournament by sending `tournaments.start` by name
(`ladder.tournaments.dispatch`), never importing this module.

Layer: orchestration (thin tasks over `ladder.tournaments.services`).
"""

from __future__ import annotations

import logging

from celery import chord, group

from ladder.tournaments.models import Tournament, TournamentStatus
from ladder.tournaments.services import tournament_pair_next_round
from workers.celery_app import app
from workers.matches import run_match

log = logging.getLogger("caravanserai.tournaments")


def advance(tournament_id: int) -> list[int]:
    """Pair the next round if the current one is complete and send it as a chord; the new match ids."""
    match_ids = tournament_pair_next_round(tournament_id=tournament_id)
    if match_ids:
        chord(group(run_match.si(m) for m in match_ids))(round_finished.si(tournament_id))
        log.info("tournament %s: next round sent (%s)", tournament_id, match_ids)
    return match_ids


@app.task(name="tournaments.start", acks_late=True)
def start_tournament(tournament_id: int) -> list[int]:
    return advance(tournament_id)


@app.task(name="tournaments.round_finished", acks_late=True)
def round_finished(tournament_id: int) -> list[int]:
    return advance(tournament_id)


@app.task(name="tournaments.sweep", ignore_result=True)
def sweep() -> dict[int, list[int]]:
    advanced = {}
    for tournament_id in Tournament.objects.filter(status=TournamentStatus.RUNNING).values_list(
        "pk", flat=True
    ):
        ids = advance(tournament_id)
        if ids:
            advanced[tournament_id] = ids
    return advanced
