"""Practice matches a bot owner asks for: unrated, their bot against chosen house bots or bots that accept
challenges, in any game, player count and option set; played by the same workers and replayed like any
other match.

Layer: services (keyword-only, transactional writes). A practice match lives on an inactive ladder of its
own per (game, players, options), so leaderboards never list it, and it is created NEW: the scheduler's
`matchmaking.schedule` pass sends it to the workers (`practice_matches_to_send` and
`practice_match_mark_sent`), so the web process never talks to the broker. It changes no rating.

A request keeps its word: a practice match is sent only when every remote bot it seats has a free slot now
(a stream open for its game with room, and fewer QUEUED or RUNNING matches than its `max_concurrent`), so a
worker never calls it off for want of room. Until then it waits NEW, and `practice_match_waiting` says for
whom ("waiting for a free slot of bot X"); matchmaking counts a NEW match among a bot's matches in flight,
so rated matches never take the slot a waiting practice match needs. A match that waited longer than
LADDER_PRACTICE_MAX_WAIT_SECONDS is called off, unrated, with that reason on its page. Reads the gateways'
session registry (through `ladder.bots.presence`), never writes to it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from engine_service.games import InvalidOptions, get_game
from engine_service.gateway.registry import SessionInfo, SessionRegistry
from ladder.bots import presence
from ladder.bots.models import Bot
from ladder.bots.services import house_bot_ensure
from ladder.ladders.models import Ladder
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.matches.seeds import match_seed_new
from ladder.matches.services import match_cancel

log = logging.getLogger("caravanserai.practice")

UNFINISHED = (MatchStatus.NEW, MatchStatus.QUEUED, MatchStatus.RUNNING)
BUSY = (MatchStatus.QUEUED, MatchStatus.RUNNING)  # matches holding a bot's slot (or about to)


def practice_house_policies() -> list[str]:
    """The house bots a practice match may seat (LADDER_PRACTICE_HOUSE_POLICIES)."""
    return list(settings.LADDER_PRACTICE_HOUSE_POLICIES)


def practice_match_request(*, user: User, bot_id: Any, game_id: Any, options: Any, opponents: Any) -> Match:
    """A NEW unrated match of `user`'s bot (seat 0) against `opponents` (house policy names or ids of bots
    that accept challenges or are `user`'s own), in `game_id` with `options`. ValidationError naming the
    field otherwise; nothing is created then."""
    bot = _own_bot(user, bot_id)
    spec = _game(game_id)
    if not isinstance(opponents, list) or not opponents:
        raise ValidationError({"opponents": ["name at least one opponent: a house bot or a bot id"]})
    players = 1 + len(opponents)
    try:
        resolved = spec.resolve_options(options if options is not None else {}, players)
    except InvalidOptions as exc:
        field = "opponents" if "players" in str(exc) else "options"
        raise ValidationError({field: [str(exc)]}) from exc
    seated = [bot, *(_opponent(user, spec.game_id, o) for o in opponents)]
    if len({b.pk for b in seated}) != len(seated):
        raise ValidationError({"opponents": ["a bot can take only one seat in a match"]})
    with transaction.atomic():
        open_count = Match.objects.filter(requested_by=user, status__in=UNFINISHED).count()
        if open_count >= settings.LADDER_PRACTICE_MAX_OPEN:
            raise ValidationError(
                {
                    "detail": [
                        f"you have {open_count} practice matches waiting or being played; "
                        f"at most {settings.LADDER_PRACTICE_MAX_OPEN} at once"
                    ]
                }
            )
        ladder = _practice_ladder(spec.game_id, players, resolved)
        match = Match.objects.create(
            ladder=ladder, seed=match_seed_new(), status=MatchStatus.NEW, rated=False, requested_by=user
        )
        Seat.objects.bulk_create([Seat(match=match, index=i, bot=b) for i, b in enumerate(seated)])
    return match


@dataclass(frozen=True)
class Room:
    """A remote bot's room for one more match of a game now."""

    bot_id: int
    name: str
    streams: int  # its streams open for the game
    stream_capacity: int  # matches at once those streams were granted
    stream_free: int  # room on those streams, as the gateways last reported
    max_concurrent: int
    busy: int  # its QUEUED and RUNNING matches, any ladder

    @property
    def free(self) -> int:
        return max(0, min(self.stream_free, self.max_concurrent - self.busy))


def _remote_seats(match_ids: Iterable[int]) -> dict[int, list[Bot]]:
    seats: dict[int, list[Bot]] = {}
    for seat in Seat.objects.filter(match_id__in=list(match_ids), bot__is_house=False).select_related("bot"):
        seats.setdefault(seat.match_id, []).append(seat.bot)
    return seats


def _busy(bot_ids: Iterable[int]) -> Counter[int]:
    """Each bot's QUEUED and RUNNING matches, any ladder."""
    ids = list(bot_ids)
    return Counter(
        Seat.objects.filter(bot_id__in=ids, match__status__in=BUSY).values_list("bot_id", flat=True)
    )


def _rooms(
    bots: Iterable[Bot], game_id: str, sessions: list[SessionInfo], busy: Counter[int] | None = None
) -> dict[int, Room]:
    wanted = {b.pk: b for b in bots}
    busy = _busy(wanted) if busy is None else busy
    streams: dict[int, list[SessionInfo]] = {pk: [] for pk in wanted}
    for session in sessions:
        if session.bot_id.isdigit() and int(session.bot_id) in wanted and game_id in session.games:
            streams[int(session.bot_id)].append(session)
    return {
        pk: Room(
            bot_id=pk,
            name=bot.name,
            streams=len(streams[pk]),
            stream_capacity=sum(s.capacity for s in streams[pk]),
            stream_free=sum(s.free for s in streams[pk]),
            max_concurrent=bot.max_concurrent,
            busy=busy[pk],
        )
        for pk, bot in wanted.items()
    }


def _no_room(room: Room) -> str:
    if room.busy >= room.max_concurrent:
        return (
            f"waiting for a free slot of bot {room.name}: all {room.max_concurrent} of its slots "
            f"(max_concurrent) hold queued or running matches; raise max_concurrent on the bot's page"
        )
    return (
        f"waiting for a free slot of bot {room.name}: its streams have room for {room.stream_capacity} "
        f"match(es) at once (as its Hello asked) and all are in use; ask for more in its Hello"
    )


def _sessions(registry: SessionRegistry | None) -> list[SessionInfo] | None:
    """Every stream the gateways hold now; None when the registry cannot be read."""
    try:
        return list((registry or presence.registry()).sessions())
    except Exception as exc:  # a store that is down: nothing can be known to have room, so nothing is sent
        log.warning("practice: session registry unreadable, nothing sent this pass: %s", exc)
        return None


def practice_matches_to_send(limit: int = 50, *, registry: SessionRegistry | None = None) -> list[int]:
    """Practice matches requested, not yet sent, whose remote bots all have a free slot now, oldest first
    (an older match takes a slot before a younger one; slots are counted down within the pass). Matches
    that waited longer than LADDER_PRACTICE_MAX_WAIT_SECONDS are called off here first, with the reason.
    `registry` is the gateways' session registry (this process's reader by default)."""
    practice_matches_expire()
    pending = list(
        Match.objects.filter(status=MatchStatus.NEW, requested_by__isnull=False)
        .select_related("ladder")
        .order_by("id")[:limit]
    )
    sessions = _sessions(registry) if pending else []
    if sessions is None:
        return []
    seats = _remote_seats(m.pk for m in pending)
    busy = _busy({bot.pk for bots in seats.values() for bot in bots})
    taken: Counter[int] = Counter()
    chosen = []
    for match in pending:
        bots = seats.get(match.pk, [])
        rooms = _rooms(bots, match.ladder.game_id, sessions, busy)
        if all(room.free - taken[pk] > 0 for pk, room in rooms.items()):
            taken.update(list(rooms))
            chosen.append(match.pk)
    return chosen


def practice_match_mark_sent(*, match_id: int) -> bool:
    """NEW → QUEUED for a practice match; True for the one caller that moved it (it sends the task)."""
    updated = Match.objects.filter(pk=match_id, status=MatchStatus.NEW, requested_by__isnull=False).update(
        status=MatchStatus.QUEUED, queued_at=timezone.now()
    )
    return updated == 1


def practice_match_waiting(*, match: Match, registry: SessionRegistry | None = None) -> str | None:
    """Why a practice match still waits to be sent, in words ("waiting for a free slot of bot X: ..."); None
    when it is not a practice match waiting (NEW)."""
    if match.status != MatchStatus.NEW or match.requested_by_id is None:
        return None
    bots = _remote_seats([match.pk]).get(match.pk, [])
    sessions = _sessions(registry)
    if sessions is None:
        return "waiting: whether its bots are connected cannot be told right now"
    rooms = _rooms(bots, match.ladder.game_id, sessions)
    for room in rooms.values():
        if not room.streams:
            return f"waiting for bot {room.name} to connect (with a stream for {match.ladder.game_id})"
        if room.free <= 0:
            return _no_room(room)
    return "waiting to be sent to a worker (the scheduler sends it within seconds)"


def practice_matches_expire(*, now: dt.datetime | None = None) -> list[int]:
    """Call off the practice matches still NEW after LADDER_PRACTICE_MAX_WAIT_SECONDS, unrated, saying why
    on their page; their ids."""
    limit = settings.LADDER_PRACTICE_MAX_WAIT_SECONDS
    cutoff = (now or timezone.now()) - dt.timedelta(seconds=limit)
    stale = Match.objects.filter(status=MatchStatus.NEW, requested_by__isnull=False, created_at__lt=cutoff)
    expired = []
    for match in stale.select_related("ladder"):
        waiting = practice_match_waiting(match=match) or "waiting"
        reason = f"called off, unrated: still {waiting} after {limit / 60:g} minutes"
        if match_cancel(match_id=match.pk, reason=reason, only_if_not_started=True):
            expired.append(match.pk)
    return expired


def _own_bot(user: User, bot_id: Any) -> Bot:
    if isinstance(bot_id, bool) or not isinstance(bot_id, int):
        raise ValidationError({"bot": ["the id of one of your bots"]})
    bot = Bot.objects.filter(pk=bot_id, owner=user, is_house=False).first()
    if bot is None:
        raise ValidationError({"bot": [f"you have no bot with id {bot_id}"]})
    if not bot.active:
        raise ValidationError({"bot": [f"{bot.name} is retired"]})
    return bot


def _game(game_id: Any) -> Any:
    try:
        return get_game(str(game_id))
    except InvalidOptions as exc:
        raise ValidationError({"game_id": [str(exc)]}) from exc


def _opponent(user: User, game_id: str, opponent: Any) -> Bot:
    if isinstance(opponent, str):
        if opponent not in practice_house_policies():
            allowed = ", ".join(practice_house_policies())
            raise ValidationError(
                {"opponents": [f"{opponent!r} is not a house bot here (one of: {allowed})"]}
            )
        return house_bot_ensure(policy=opponent)
    if isinstance(opponent, bool) or not isinstance(opponent, int):
        raise ValidationError({"opponents": ["each opponent is a house bot's name or a bot id"]})
    bot = Bot.objects.filter(pk=opponent, active=True).first()
    if bot is None or not (bot.owner_id == user.pk or bot.accepts_challenges or bot.is_house):
        raise ValidationError({"opponents": [f"bot {opponent} does not exist or does not accept challenges"]})
    if not bot.is_house and game_id not in bot.games:
        raise ValidationError({"opponents": [f"{bot.name} does not play {game_id}"]})
    return bot


def _practice_ladder(game_id: str, players: int, options: dict[str, Any]) -> Ladder:
    """The inactive ladder that holds the practice matches of one game, player count and option set."""
    key = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:8]
    slug = f"practice-{game_id}-{players}p-{key}"
    spec = get_game(game_id)
    shown = ", ".join(f"{k}={v}" for k, v in sorted(options.items()) if v != _default(spec, k))
    name = f"Practice: {spec.name}, {players} players" + (f" ({shown})" if shown else "")
    try:
        with transaction.atomic():
            ladder, _ = Ladder.objects.get_or_create(
                slug=slug,
                defaults={
                    "name": name[:120],
                    "game_id": game_id,
                    "num_players": players,
                    "options": options,
                    "active": False,
                    "description": "Unrated practice matches that bot owners asked for.",
                },
            )
    except IntegrityError:
        ladder = Ladder.objects.get(slug=slug)
    return ladder


def _default(spec: Any, name: str) -> Any:
    return next((opt.default for opt in spec.options if opt.name == name), None)
