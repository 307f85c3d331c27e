"""Tournament writes: create a tournament, pair its next round (creating the round's ladder matches), cancel.

Layer: services (keyword-only, typed, transactional). Bad input raises `ValidationError` naming the problem
and changes nothing. Pairing a round locks the tournament row, so the chord callback and the beat sweep can
both ask for the next round and only one gets it; a round is paired only once every match of the previous
one is finished (DONE, ERROR or CANCELLED). Must not run matches or send tasks (the workers do).

Seeds: each match's seed is derived from the tournament seed, the round and the table with an HMAC keyed by
the server secret (`ladder.matches.seeds`), so a tournament is reproducible from its row and its results on
the same server, and its seed (shown once it is over) predicts no match.
"""

from __future__ import annotations

import logging
import math
import random
import secrets
from collections import Counter
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ladder.bots.models import Bot
from ladder.ladders.models import Ladder
from ladder.matches.models import MatchStatus
from ladder.matches.seeds import seed_derive
from ladder.matches.services import match_create
from ladder.ratings.models import Rating
from ladder.tournaments.models import (
    Tournament,
    TournamentEntry,
    TournamentFormat,
    TournamentMatch,
    TournamentRound,
    TournamentStatus,
)
from pairing.tournament import pair_key, round_robin_rounds, swiss_round

log = logging.getLogger(__name__)

MAX_ENTRANTS = 64
MAX_ROUNDS = 30
FINAL = (MatchStatus.DONE, MatchStatus.ERROR, MatchStatus.CANCELLED)


def match_seed(tournament_seed: int, round_number: int, table: int) -> int:
    return seed_derive("tournament", tournament_seed, round_number, table)


def _clean_int(value: Any, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationError({field: [f"{field} must be a whole number {low} to {high}"]})
    return value


@transaction.atomic
def tournament_create(
    *,
    ladder_id: int,
    bot_ids: list[int],
    format: str,
    rounds: int | None = None,
    name: str = "",
    seed: int | None = None,
    user: User | None = None,
) -> Tournament:
    """A RUNNING tournament with its entrants (seed order = the order given); no round is paired yet."""
    try:
        ladder = Ladder.objects.get(pk=ladder_id)
    except Ladder.DoesNotExist as exc:
        raise ValidationError({"ladder": [f"no ladder with id {ladder_id}"]}) from exc
    if not ladder.active:
        raise ValidationError({"ladder": [f"ladder {ladder.slug} is closed"]})
    if format not in TournamentFormat.values:
        raise ValidationError({"format": [f"format must be one of {', '.join(TournamentFormat.values)}"]})
    if not isinstance(bot_ids, (list, tuple)) or any(
        isinstance(b, bool) or not isinstance(b, int) for b in bot_ids
    ):
        raise ValidationError({"bots": ["bots must be a list of bot ids"]})
    if len(set(bot_ids)) != len(bot_ids):
        raise ValidationError({"bots": ["a bot can enter a tournament once"]})
    n = ladder.num_players
    if not n <= len(bot_ids) <= MAX_ENTRANTS:
        raise ValidationError({"bots": [f"a tournament on {ladder.slug} needs {n} to {MAX_ENTRANTS} bots"]})
    bots = {b.pk: b for b in Bot.objects.filter(pk__in=bot_ids)}
    for bot_id in bot_ids:
        bot = bots.get(bot_id)
        if bot is None:
            raise ValidationError({"bots": [f"no bot with id {bot_id}"]})
        if not bot.active:
            raise ValidationError({"bots": [f"{bot.name} is retired"]})
        if bot.is_house and not ladder.house_bots_allowed:
            raise ValidationError({"bots": [f"{ladder.slug} does not seat house bots ({bot.name})"]})
        if not bot.is_house and ladder.game_id not in bot.games:
            raise ValidationError({"bots": [f"{bot.name} does not play {ladder.game_id}"]})
    if format == TournamentFormat.ROUND_ROBIN:
        if rounds is not None:
            raise ValidationError(
                {"rounds": ["a round robin's rounds follow from its entrants; leave rounds out"]}
            )
        rounds = len(round_robin_rounds(bot_ids, n))
        if rounds > MAX_ROUNDS:
            raise ValidationError(
                {"bots": [f"a round robin of these bots needs {rounds} rounds (max {MAX_ROUNDS})"]}
            )
    elif rounds is None:
        rounds = max(1, math.ceil(math.log2(len(bot_ids))))
    rounds = _clean_int(rounds, "rounds", 1, MAX_ROUNDS)
    if seed is None:
        seed = secrets.randbits(62)
    seed = _clean_int(seed, "seed", 0, 2**62 - 1)
    if not isinstance(name, str) or len(name) > 120:
        raise ValidationError({"name": ["the name is text of at most 120 characters"]})
    name = name.strip() or f"{TournamentFormat(format).label.capitalize()} on {ladder.name}"
    tournament = Tournament.objects.create(
        name=name,
        ladder=ladder,
        format=format,
        rounds_planned=rounds,
        seed=seed,
        created_by=user if user is not None and user.is_authenticated else None,
    )
    TournamentEntry.objects.bulk_create(
        [TournamentEntry(tournament=tournament, bot_id=b, seed_order=i) for i, b in enumerate(bot_ids)]
    )
    return tournament


def _round_complete(round_: TournamentRound) -> bool:
    return not round_.tournament_matches.exclude(match__status__in=FINAL).exists()


def _swiss_tables(tournament: Tournament, entrants: list[int]) -> tuple[list[tuple[int, ...]], list[int]]:
    from ladder.tournaments.selectors import tournament_scores

    scores = tournament_scores(tournament=tournament)
    ladder = tournament.ladder
    ratings = dict(Rating.objects.filter(ladder=ladder, bot_id__in=entrants).values_list("bot_id", "elo"))
    standings = [(b, scores["points"][b], ratings.get(b, ladder.elo_start)) for b in entrants]
    met: Counter[tuple[int, int]] = Counter()
    seat_counts: dict[int, Counter[int]] = {}
    for bots, _ in scores["tables"]:
        for i, a in enumerate(bots):
            seat_counts.setdefault(a, Counter())[i] += 1
            for b in bots[i + 1 :]:
                met[pair_key(a, b)] += 1
    byes_had = Counter(b for r in tournament.rounds.all() for b in r.byes)
    rng = random.Random(f"{tournament.seed}:{tournament.rounds.count() + 1}")
    return swiss_round(standings, ladder.num_players, met, seat_counts, rng, byes_had)


@transaction.atomic
def tournament_pair_next_round(*, tournament_id: int) -> list[int]:
    """Pair the next round and create its matches (QUEUED); returns their ids. Returns [] (changing
    nothing) while the current round has unfinished matches; when the last round is complete, the
    tournament becomes DONE and [] is returned."""
    try:
        tournament = Tournament.objects.select_for_update().select_related("ladder").get(pk=tournament_id)
    except Tournament.DoesNotExist as exc:
        raise ValidationError({"tournament": [f"no tournament with id {tournament_id}"]}) from exc
    if tournament.status != TournamentStatus.RUNNING:
        return []
    last = tournament.rounds.order_by("-number").first()
    now = timezone.now()
    if last is not None:
        if not _round_complete(last):
            return []
        if last.finished_at is None:
            last.finished_at = now
            last.save(update_fields=["finished_at"])
    number = 1 if last is None else last.number + 1
    if number > tournament.rounds_planned:
        tournament.status = TournamentStatus.DONE
        tournament.finished_at = now
        tournament.save(update_fields=["status", "finished_at"])
        return []
    entrants = list(tournament.entries.order_by("seed_order").values_list("bot_id", flat=True))
    if tournament.format == TournamentFormat.ROUND_ROBIN:
        tables = round_robin_rounds(entrants, tournament.ladder.num_players)[number - 1]
        seated = {b for t in tables for b in t}
        byes: list[
            int
        ] = []  # every bot plays the same number of round-robin matches: sitting out scores nothing
        idle = [b for b in entrants if b not in seated]
    else:
        tables, byes = _swiss_tables(tournament, entrants)
        idle = []
    round_ = TournamentRound.objects.create(tournament=tournament, number=number, byes=byes)
    ids = []
    for i, table in enumerate(tables):
        try:
            match = match_create(
                ladder_id=tournament.ladder_id,
                bot_ids=list(table),
                seed=match_seed(tournament.seed, number, i),
            )
        except ValidationError as exc:  # a bot retired or left the game since the tournament began
            log.warning("tournament %s round %s table %s not played: %s", tournament.pk, number, table, exc)
            continue
        TournamentMatch.objects.create(round=round_, match=match, table=i)
        ids.append(match.pk)
    if idle:
        log.info("tournament %s round %s: %s sit out", tournament.pk, number, idle)
    return ids


@transaction.atomic
def tournament_cancel(*, tournament_id: int) -> bool:
    """Stop pairing new rounds (matches already queued still play and are rated on the ladder)."""
    tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
    if tournament is None:
        raise ValidationError({"tournament": [f"no tournament with id {tournament_id}"]})
    if tournament.status != TournamentStatus.RUNNING:
        return False
    tournament.status = TournamentStatus.CANCELLED
    tournament.finished_at = timezone.now()
    tournament.save(update_fields=["status", "finished_at"])
    return True
