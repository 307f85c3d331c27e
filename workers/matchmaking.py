"""Matchmaking: on a beat schedule, pair the online bots of every active ladder and queue their matches.

Per ladder: the bots the gateways' session registry lists as connected for the ladder's game, registered,
active and with free capacity (their streams' capacity, at most `Bot.max_concurrent`, minus the matches
they already have QUEUED or RUNNING on any ladder, or the registry's in-progress count if higher); house
bots where the ladder allows them; ratings from the ladder (start value for newcomers); the ladder's last
matches for repeat avoidance and seat rotation. `workers.pairing.plan_tables` builds the tables; each becomes
`match_create(...)` and `run_match.delay_on_commit(match.id)`. Capacity is shared across ladders within one
run, and a ladder with CARAVANSERAI_MAX_QUEUED_PER_LADDER matches already waiting gets no more.

Admission and fairness between ladders:
- Ladders are served longest unserved first (the one whose latest match is oldest; a ladder never matched
  before all, and it keeps its bots' free seats until it can fill a table).
- A bot that plays more than one active ladder never has all of its slots on one of them (at most
  capacity - 1 there, when its capacity is 2 or more), so one ladder of slow tables cannot starve the others.
- House bots that search decide in the workers' search pools, a resource of fixed size: at most
  CARAVANSERAI_SEARCH_SEATS of their seats are in flight (NEW, QUEUED or RUNNING) at once; past it they are
  not seated, and tables wait for room instead of starting with a pool that cannot keep their clock.
- A newcomer (no rating yet, or provisional on the ladder) anchors a table before settled bots, and its
  table takes fast opponents before house bots that search, so its first result comes soon; ladders where a
  newcomer waits are served before the others, so scarce threads go to its table first.
- Measured headroom (`workers.capacity`): no more tables than the live workers report free threads for (less
  the matches already queued for them); no new search seats while a worker reports its search pool behind;
  and no table for a bot whose every stream is on a gateway that is not admitting at normal speed (its loop
  stalled, starting or draining: `GatewayState.admitting`) in two runs at least SLOW_GATEWAY_SECONDS apart. Tables held back so are reported
  (`report_capacity("matchmaking", ...)`) with the reasons, for the home page and the metrics: overload shows
  as tables waiting for capacity, never as a clock that runs out.

One run at a time (the lease `matchmaking`): a slow run never overlaps the next beat.

Each run first sends the practice matches owners asked for (`ladder.matches.practice`).

Layer: orchestration. Reads models and the registry, writes only through `match_create` and
`practice_match_mark_sent`.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Count, Max

from engine_service.gateway.registry import OnlineBot, online_bots
from engine_service.policies import SEARCHING_POLICIES
from ladder.bots.models import Bot
from ladder.ladders.models import Ladder
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.matches.practice import practice_match_mark_sent, practice_matches_to_send
from ladder.matches.seeds import match_seed_new
from ladder.matches.services import match_create
from ladder.ratings.models import Rating
from ladder.ratings.standing import is_provisional
from workers import capacity, leases
from workers.celery_app import app
from workers.config import WorkerSettings
from workers.matches import run_match
from workers.pairing import Candidate, Table, plan_tables, recent_pairs
from workers.seats import registry

log = logging.getLogger("caravanserai.matchmaking")

SETTINGS = WorkerSettings.from_env()
RECENT_MATCHES = 60  # per ladder, for repeat avoidance and seat rotation
IN_FLIGHT = (MatchStatus.NEW, MatchStatus.QUEUED, MatchStatus.RUNNING)
HELD_KIND = "matchmaking"


@dataclass(frozen=True)
class Online:
    bot_id: int
    capacity: int
    matches: int
    games: tuple[str, ...]


def on_admitting_gateway(entry: OnlineBot, not_admitting: set[str]) -> bool:
    """Some stream of the bot is on a gateway that admits at normal speed (or reports no admission state)."""
    return any(s.gateway_id not in not_admitting for s in entry.sessions)


SLOW_GATEWAY_SECONDS = 3.0  # not admitting at two runs this far apart: one stalled beat is not a slow gateway
_not_admitting_since: dict[str, float] = {}


def gateways_not_admitting() -> set[str]:
    """Gateways seen not admitting at normal speed in this run and in an earlier one at least
    SLOW_GATEWAY_SECONDS before, with no admitting claim seen between (a loop that stalls for a moment on a
    busy host keeps its bots playing; a gateway slow or draining for longer gets no new table for them)."""
    now = time.time()
    states = registry().gateway_states()
    for gateway_id in list(_not_admitting_since):
        if gateway_id not in states or states[gateway_id].admitting(now):
            del _not_admitting_since[gateway_id]
    slow = set()
    for gateway_id, state in states.items():
        if not state.admitting(now):
            since = _not_admitting_since.setdefault(gateway_id, now)
            if now - since >= SLOW_GATEWAY_SECONDS:
                slow.add(gateway_id)
    return slow


def online_capacity(held: list[str] | None = None) -> dict[int, Online]:
    """Connected, registered, active, non-house bots with their capacity (from the session registry); bots
    whose streams are all on gateways not admitting at normal speed are left out (counted, in words, in
    `held`)."""
    found = {}
    slow = gateways_not_admitting()
    waiting = 0
    for entry in online_bots(registry()):
        if not on_admitting_gateway(entry, slow):
            waiting += 1
            continue
        try:
            found[int(entry.bot_id)] = Online(int(entry.bot_id), entry.capacity, entry.matches, entry.games)
        except ValueError:
            continue  # a bot id that is not a ladder bot (a dev token): not ours to schedule
    if waiting and held is not None:
        held.append(f"{waiting} bot{'s' * (waiting > 1)} on a gateway not admitting at normal speed")
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


def searching_house_bots() -> set[int]:
    """Ids of the house bots whose policy searches (they decide in the search pools)."""
    return {
        pk
        for pk, policy in Bot.objects.filter(is_house=True).values_list("pk", "house_policy")
        if policy.partition(":")[0] in SEARCHING_POLICIES
    }


def search_seats_in_flight(searching: set[int]) -> int:
    """Seats of searching house bots in matches not finished yet."""
    return Seat.objects.filter(bot_id__in=searching, match__status__in=IN_FLIGHT).count()


def in_flight_by_ladder(bot_ids: list[int]) -> dict[tuple[int, int], int]:
    """(bot id, ladder id) -> the bot's matches not finished yet on that ladder."""
    rows = (
        Seat.objects.filter(bot_id__in=bot_ids, match__status__in=IN_FLIGHT)
        .values("bot_id", "match__ladder_id")
        .annotate(n=Count("id"))
    )
    return {(r["bot_id"], r["match__ladder_id"]): r["n"] for r in rows}


@dataclass
class Budget:
    """What one matchmaking run may still hand out: free slots per bot, and room in the search pools."""

    free: dict[int, int]
    search_seats: int
    searching: set[int]
    on_ladder: dict[tuple[int, int], int]
    ladders_of: Counter[int]  # active ladders each online bot may play
    threads: int | None = None  # tables the workers have free threads for (None: no worker reports)
    held: Counter[str] = field(default_factory=Counter)  # tables held back for capacity, per ladder slug
    reasons: list[str] = field(default_factory=list)  # why, in words

    def share(self, bot_id: int, ladder_id: int, capacity: int) -> int:
        """The slots `bot_id` may take on `ladder_id` now: never all of them on one ladder when it plays
        several, so one ladder of slow tables cannot hold every slot."""
        free = self.free.get(bot_id, 0)
        if self.ladders_of[bot_id] < 2 or capacity < 2:
            return free
        return max(0, min(free, capacity - 1 - self.on_ladder.get((bot_id, ladder_id), 0)))


def ladder_candidates(ladder: Ladder, online: dict[int, Online], budget: Budget) -> list[Candidate]:
    remote_ids = [
        b.pk
        for b in Bot.objects.filter(pk__in=list(online), active=True, is_house=False)
        if ladder.game_id in b.games and ladder.game_id in online[b.pk].games
    ]
    ids = list(remote_ids)
    house_ids: list[int] = []
    if ladder.house_bots_allowed:
        house = Bot.objects.filter(is_house=True, active=True).values_list("pk", flat=True)
        house_ids = [b for b in house if budget.search_seats > 0 or b not in budget.searching]
        ids += house_ids
    rated = {
        bot_id: (elo, sigma)
        for bot_id, elo, sigma in Rating.objects.filter(ladder=ladder, bot_id__in=ids).values_list(
            "bot_id", "elo", "sigma"
        )
    }
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
            rating=rated[b][0] if b in rated else ladder.elo_start,
            free=budget.share(b, ladder.pk, online[b].capacity) if b in remote_ids else 1_000_000,
            house=b in house_ids,
            seat_counts=seat_counts.get(b, Counter()),
            newcomer=b in remote_ids
            and (b not in rated or is_provisional(rated[b][1], ladder.provisional_sigma)),
            slow=b in budget.searching,
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


def measured_headroom() -> capacity.Headroom:
    """The live workers' reports, less the matches queued for their threads."""
    reports = registry().capacity_reports(capacity.KIND)
    queued = Match.objects.filter(status=MatchStatus.QUEUED).count() if reports else 0
    return capacity.headroom(reports, queued)


def has_newcomer(ladder: Ladder, online: dict[int, Online]) -> bool:
    """Some online bot that plays the ladder's game has no rating on it yet, or a provisional one."""
    playing = [b for b, o in online.items() if ladder.game_id in o.games]
    if not playing:
        return False
    sigmas = dict(Rating.objects.filter(ladder=ladder, bot_id__in=playing).values_list("bot_id", "sigma"))
    return any(b not in sigmas or is_provisional(sigmas[b], ladder.provisional_sigma) for b in playing)


def run_budget(online: dict[int, Online]) -> Budget:
    """This run's budget: each online bot's free slots, the search pools' room and the workers' threads."""
    busy = in_flight(list(online))
    room = measured_headroom()
    searching = searching_house_bots()
    ladders_of: Counter[int] = Counter()
    ladders = Ladder.objects.filter(active=True).values_list("game_id", "num_players", "house_bots_allowed")
    for game_id, players, house in ladders:
        playing = [bot_id for bot_id, entry in online.items() if game_id in entry.games]
        if house or len(playing) >= players:  # a ladder that could seat them now
            ladders_of.update(playing)
    budget = Budget(
        free={b: max(0, o.capacity - max(busy[b], o.matches)) for b, o in online.items()},
        search_seats=SETTINGS.search_seats - search_seats_in_flight(searching),
        searching=searching,
        on_ladder=in_flight_by_ladder(list(online)),
        ladders_of=ladders_of,
        threads=room.free_threads,
    )
    if room.search_behind:
        budget.search_seats = 0
        budget.reasons.append(f"no new house search seats: {room.search_behind}")
    return budget


def admitted(tables: list[Table], budget: Budget, slug: str) -> list[Table]:
    """The tables the search pools and the workers' threads have room for, in order; the others wait for a
    later run (counted in `budget.held`)."""
    kept = []
    for table in tables:
        searching = sum(1 for b in table.bot_ids if b in budget.searching)
        if searching > budget.search_seats or budget.threads == 0:
            budget.held[slug] += 1
            full = budget.threads == 0
            reason = "every worker thread is busy or promised" if full else "the search pools are full"
            if reason not in budget.reasons:
                budget.reasons.append(reason)
            continue
        budget.search_seats -= searching
        if budget.threads is not None:
            budget.threads -= 1
        kept.append(table)
    return kept


def matchmake_ladder(
    ladder: Ladder, served: bool, online: dict[int, Online], budget: Budget, **plan: Any
) -> list[int]:
    """Plan and create one ladder's tables within `budget` (consumed); the match ids created."""
    waiting = Match.objects.filter(ladder=ladder, status=MatchStatus.QUEUED).count()
    room = SETTINGS.max_queued_per_ladder - waiting
    if room <= 0:
        return []
    candidates = ladder_candidates(ladder, online, budget)
    planned = plan_tables(
        candidates, ladder.num_players, ladder_recent_pairs(ladder), max_tables=room, **plan
    )
    tables = admitted(planned, budget, ladder.slug)
    for table in tables:
        for bot_id in table.bot_ids:
            if bot_id in budget.free:
                budget.free[bot_id] -= 1
                key = (bot_id, ladder.pk)
                budget.on_ladder[key] = budget.on_ladder.get(key, 0) + 1
    ids = create_tables(ladder, tables)
    if not ids and not served and len(candidates) >= ladder.num_players:
        # A ladder never matched keeps the free seats of its bots until it can fill a table.
        for c in candidates:
            if not c.house:
                budget.free[c.bot_id] = 0
    return ids


def matchmake(
    *, rng: random.Random | None = None, duplicate_sets: bool | None = None
) -> dict[str, list[int]]:
    """One matchmaking pass over every active ladder; returns the match ids created per ladder slug. Each
    ladder makes duplicate sets if its `duplicate_sets` says so (`duplicate_sets` overrides it)."""
    rng = rng or random.Random()
    held_bots: list[str] = []
    online = online_capacity(held_bots)
    if not online:
        report_held(Counter(), held_bots)
        return {}
    budget = run_budget(online)
    budget.reasons.extend(held_bots)
    created: dict[str, list[int]] = {}
    ladders = ladders_longest_unserved_first(rng)
    ladders.sort(key=lambda entry: not has_newcomer(entry[0], online))  # stable: newcomers' ladders first
    for ladder, served in ladders:
        if not any(budget.free.values()):
            break
        dup = ladder.duplicate_sets if duplicate_sets is None else duplicate_sets
        ids = matchmake_ladder(ladder, served, online, budget, rng=rng, duplicate_sets=dup)
        if ids:
            created[ladder.slug] = ids
    if created:
        log.info("matchmaking: %s", ", ".join(f"{slug} +{len(ids)}" for slug, ids in created.items()))
    report_held(budget.held, budget.reasons)
    return created


def report_held(held: Counter[str], reasons: list[str]) -> None:
    """Say which ladders' tables this run held back for capacity, and why (lapses after two beats)."""
    if held or reasons:
        log.info("matchmaking held back %s: %s", dict(held) or "no table", "; ".join(reasons))
    payload = {"held": dict(held), "reasons": reasons[:20]}
    until = time.time() + 2 * SETTINGS.matchmaking_seconds + 1
    try:
        registry().report_capacity(HELD_KIND, "matchmaking", payload, until)
    except Exception as exc:  # the registry away: the page shows nothing held, matchmaking goes on
        log.warning("matchmaking: capacity report failed: %s", exc)


def send_practice_matches() -> list[int]:
    """Send the practice matches owners asked for (created NEW by the web) to the workers, once each, when
    their bots have a free slot (a waiting one is NEW, which the budget counts as in flight: its slot is
    kept for it)."""
    sent = []
    for match_id in practice_matches_to_send(registry=registry()):
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
