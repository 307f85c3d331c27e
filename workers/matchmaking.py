"""Matchmaking: on a beat schedule, pair the online bots of every active ladder and queue their matches.

Per ladder: the bots the gateways' session registry lists as connected for the ladder's game, registered,
active and with free capacity (their streams' capacity, at most `Bot.max_concurrent`, minus the matches
they already have QUEUED or RUNNING on any ladder, or the registry's in-progress count if higher); house
bots where the ladder allows them; ratings from the ladder (start value for newcomers); the ladder's last
matches for repeat avoidance and seat rotation. `workers.pairing.plan_tables` builds the tables; each becomes
`match_create(...)` and `run_match.delay_on_commit(match.id)`. Capacity is shared across ladders within one
run, and a ladder with CARAVANSERAI_MAX_QUEUED_PER_LADDER matches already waiting gets no more.

One run at a time (the lease `matchmaking`): a slow run never overlaps the next beat.

Each run first sends the practice matches owners asked for (`ladder.matches.practice`).

Layer: orchestration. Reads models and the registry, writes only through `match_create` and
`practice_match_mark_sent`.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db.models import Count, Max

from engine_service.gateway.registry import online_bots
from ladder.bots.models import Bot
from ladder.ladders.models import Ladder
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.matches.practice import practice_match_mark_sent, practice_matches_to_send
from ladder.matches.seeds import match_seed_new
from ladder.matches.services import match_create
from ladder.ratings.models import Rating
from workers import leases
from workers.celery_app import app
from workers.config import WorkerSettings
from workers.matches import run_match
from workers.pairing import Candidate, Table, plan_tables, recent_pairs
from workers.seats import registry

log = logging.getLogger("caravanserai.matchmaking")

SETTINGS = WorkerSettings.from_env()
RECENT_MATCHES = 60  # per ladder, for repeat avoidance and seat rotation
IN_FLIGHT = (MatchStatus.NEW, MatchStatus.QUEUED, MatchStatus.RUNNING)


@dataclass(frozen=True)
class Online:
    bot_id: int
    capacity: int
    matches: int
    games: tuple[str, ...]


def online_capacity() -> dict[int, Online]:
    """Connected, registered, active, non-house bots with their capacity (from the session registry)."""
    found = {}
    for entry in online_bots(registry()):
        try:
            found[int(entry.bot_id)] = Online(int(entry.bot_id), entry.capacity, entry.matches, entry.games)
        except ValueError:
            continue  # a bot id that is not a ladder bot (a dev token): not ours to schedule
    bots = Bot.objects.filter(pk__in=found, active=True, is_house=False).only("pk", "max_concurrent", "games")
    return {
        b.pk: Online(
            b.pk, min(found[b.pk].capacity, b.max_concurrent), found[b.pk].matches, found[b.pk].games
        )
        for b in bots
    }


def in_flight(bot_ids: list[int]) -> Counter[int]:
    rows = (
        Seat.objects.filter(bot_id__in=bot_ids, match__status__in=IN_FLIGHT)
        .values("bot_id")
        .annotate(n=Count("id"))
    )
    return Counter({r["bot_id"]: r["n"] for r in rows})


def ladder_candidates(ladder: Ladder, online: dict[int, Online], free: dict[int, int]) -> list[Candidate]:
    remote_ids = [
        b.pk
        for b in Bot.objects.filter(pk__in=list(online), active=True, is_house=False)
        if ladder.game_id in b.games and ladder.game_id in online[b.pk].games
    ]
    ids = list(remote_ids)
    house_ids: list[int] = []
    if ladder.house_bots_allowed:
        house_ids = list(Bot.objects.filter(is_house=True, active=True).values_list("pk", flat=True))
        ids += house_ids
    ratings = dict(Rating.objects.filter(ladder=ladder, bot_id__in=ids).values_list("bot_id", "elo"))
    recent = list(
        Match.objects.filter(ladder=ladder).order_by("-id").values_list("pk", flat=True)[:RECENT_MATCHES]
    )
    seat_counts: dict[int, Counter[int]] = {}
    for bot_id, index in Seat.objects.filter(match_id__in=recent, bot_id__in=ids).values_list(
        "bot_id", "index"
    ):
        seat_counts.setdefault(bot_id, Counter())[index] += 1
    return [
        Candidate(
            bot_id=b,
            rating=ratings.get(b, ladder.elo_start),
            free=free.get(b, 0) if b in remote_ids else 1_000_000,
            house=b in house_ids,
            seat_counts=seat_counts.get(b, Counter()),
        )
        for b in ids
    ]


def ladder_recent_pairs(ladder: Ladder) -> Counter[tuple[int, int]]:
    recent = list(
        Match.objects.filter(ladder=ladder).order_by("-id").values_list("pk", flat=True)[:RECENT_MATCHES]
    )
    by_match: dict[int, list[int]] = {}
    for match_id, bot_id in Seat.objects.filter(match_id__in=recent).values_list("match_id", "bot_id"):
        by_match.setdefault(match_id, []).append(bot_id)
    return recent_pairs(list(by_match.values()))


def create_tables(ladder: Ladder, tables: list[Table]) -> list[int]:
    created = []
    seeds: dict[int, int] = {}
    for table in tables:
        seed = None
        if table.duplicate_group is not None:
            seed = seeds.setdefault(table.duplicate_group, match_seed_new())
        try:
            match = match_create(ladder_id=ladder.pk, bot_ids=list(table.bot_ids), seed=seed)
        except ValidationError as exc:  # a bot retired or changed games since we looked: skip the table
            log.warning("ladder %s: table %s not created: %s", ladder.slug, table.bot_ids, exc)
            continue
        run_match.delay_on_commit(match.pk)
        created.append(match.pk)
    return created


def ladders_longest_unserved_first(rng: random.Random) -> list[tuple[Ladder, bool]]:
    """Active ladders with whether each ever had a match, the one whose latest match is oldest first (never
    matched: before all), ties in random order. Shared capacity frees one bot at a time, so a fixed or
    random order lets ladders of small tables take it before a larger table's seats are ever free together."""
    ladders = list(Ladder.objects.filter(active=True).order_by("id"))
    latest = dict(
        Match.objects.filter(ladder__in=ladders)
        .values("ladder")
        .annotate(latest=Max("id"))
        .values_list("ladder", "latest")
    )
    rng.shuffle(ladders)
    ladders.sort(key=lambda ladder: latest.get(ladder.pk) or 0)  # stable: ties keep the shuffle
    return [(ladder, ladder.pk in latest) for ladder in ladders]


def matchmake(
    *, rng: random.Random | None = None, duplicate_sets: bool | None = None
) -> dict[str, list[int]]:
    """One matchmaking pass over every active ladder; returns the match ids created per ladder slug. Each
    ladder makes duplicate sets if its `duplicate_sets` says so (`duplicate_sets` overrides it)."""
    rng = rng or random.Random()
    online = online_capacity()
    if not online:
        return {}
    busy = in_flight(list(online))
    free = {b: max(0, o.capacity - max(busy[b], o.matches)) for b, o in online.items()}
    created: dict[str, list[int]] = {}
    for ladder, served in ladders_longest_unserved_first(rng):
        if not any(free.values()):
            break
        waiting = Match.objects.filter(ladder=ladder, status=MatchStatus.QUEUED).count()
        room = SETTINGS.max_queued_per_ladder - waiting
        if room <= 0:
            continue
        candidates = ladder_candidates(ladder, online, free)
        tables = plan_tables(
            candidates,
            ladder.num_players,
            ladder_recent_pairs(ladder),
            rng,
            max_tables=room,
            duplicate_sets=ladder.duplicate_sets if duplicate_sets is None else duplicate_sets,
        )
        for c in candidates:
            if not c.house:
                free[c.bot_id] = c.free
        ids = create_tables(ladder, tables)
        if ids:
            created[ladder.slug] = ids
        elif not served and len(candidates) >= ladder.num_players:
            # A ladder never matched keeps the free seats of its bots until it can fill a table.
            for c in candidates:
                if not c.house:
                    free[c.bot_id] = 0
    if created:
        log.info("matchmaking: %s", ", ".join(f"{slug} +{len(ids)}" for slug, ids in created.items()))
    return created


def send_practice_matches() -> list[int]:
    """Send the practice matches owners asked for (created NEW by the web) to the workers, once each."""
    sent = []
    for match_id in practice_matches_to_send():
        if practice_match_mark_sent(match_id=match_id):
            run_match.delay(match_id)
            sent.append(match_id)
    if sent:
        log.info("matchmaking: practice matches sent %s", sent)
    return sent


@app.task(name="matchmaking.schedule", ignore_result=True)
def schedule_matches() -> dict[str, list[int]]:
    """The beat task: send requested practice matches, then one matchmaking pass, unless another run is
    still going."""
    with leases.Lease("matchmaking", max(30.0, SETTINGS.matchmaking_seconds * 3)) as lease:
        if not lease.acquired:
            return {}
        practice = send_practice_matches()
        created = matchmake()
        return {**created, "practice": practice} if practice else created
