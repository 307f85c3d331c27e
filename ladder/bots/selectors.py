"""Bot reads, including the identity lookup the gRPC gateway authenticates bots with, and a bot's own
dashboard: its recent faults (from the seats of its last finished matches) and its matches in progress.

Layer: selectors (keyword-only, typed, read-only). Must not write. Whether a bot is connected now is not
here but in `presence.py` (it reads the gateways' registry, not the database).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db.models import Count, Q, QuerySet
from django.urls import reverse

from ladder.bots.models import Bot
from ladder.bots.services import token_hash
from ladder.matches.models import MatchStatus, Seat
from ladder.matches.selectors import match_list

RECENT_MATCHES = 50  # the finished matches a bot's fault figures cover
IN_PROGRESS = (MatchStatus.QUEUED, MatchStatus.RUNNING)
REASON_CHARS = 300  # a fault's reason as shown (the referee's reasons are short; old records may not be)


@dataclass(frozen=True)
class BotIdentity:
    """Who a token belongs to: what the gateway needs to admit a bot's session."""

    bot_id: int
    name: str
    owner: str
    games: list[str]
    max_concurrent: int


def bot_identity_for_token(*, token: str) -> BotIdentity | None:
    """The bot a token authenticates (the owner's token or the bot host's hosted credential), or None for
    an unknown, revoked or retired bot (or a house bot)."""
    if not isinstance(token, str) or not token or len(token) > 256:
        return None
    digest = token_hash(token)
    bot = (
        Bot.objects.select_related("owner")
        .filter(Q(token_hash=digest) | Q(hosted_token_hash=digest), active=True, is_house=False)
        .first()
    )
    if bot is None:
        return None
    return BotIdentity(
        bot_id=bot.pk,
        name=bot.name,
        owner=bot.owner.get_username(),
        games=list(bot.games),
        max_concurrent=bot.max_concurrent,
    )


def bot_hosted_token_valid(*, bot_id: int, token: str) -> bool:
    """Whether `token` is the hosted credential of this active bot now (not the owner's token)."""
    if not isinstance(token, str) or not token or len(token) > 256:
        return False
    return Bot.objects.filter(pk=bot_id, hosted_token_hash=token_hash(token), active=True).exists()


def bot_list(
    *,
    owner: str | None = None,
    game: str | None = None,
    search: str | None = None,
    include_retired: bool = False,
    include_house: bool = True,
) -> QuerySet[Bot]:
    bots = Bot.objects.select_related("owner").order_by("name")
    if not include_retired:
        bots = bots.filter(active=True)
    if not include_house:
        bots = bots.filter(is_house=False)
    if owner:
        bots = bots.filter(owner__username=owner)
    if game:
        bots = bots.filter(pk__in=[b.pk for b in bots if game in b.games or b.is_house])
    if search:
        bots = bots.filter(name__icontains=search)
    return bots


def bot_get(*, bot_id: int) -> Bot:
    try:
        return Bot.objects.select_related("owner").get(pk=bot_id)
    except Bot.DoesNotExist as exc:
        raise Bot.DoesNotExist(f"no bot with id {bot_id}") from exc


def bot_list_for_owner(*, user: User) -> QuerySet[Bot]:
    return Bot.objects.filter(owner=user).order_by("-active", "name")


def replay_step_path(*, match_id: int, step: int, seat: int) -> str:
    """The match page opened on the replay at `step`, seen from `seat`."""
    return f"{reverse('web:match', args=[match_id])}?step={step}&seat={seat}#replay"


@dataclass(frozen=True)
class FaultRow:
    """One fault of the bot: where it happened, what it was, and the link to that step of the replay."""

    match_id: int
    ladder_name: str
    seat: int
    step: int
    kind: str
    reason: str
    forfeit: bool
    finished_at: dt.datetime | None

    @property
    def replay_path(self) -> str:
        return replay_step_path(match_id=self.match_id, step=self.step, seat=self.seat)


@dataclass(frozen=True)
class FaultSummary:
    """The bot's faults over its last `matches` finished matches. Decisions are estimated as each match's
    steps divided by its players (the referee asks every seat in turn), so the rate is approximate."""

    matches: int
    decisions: float
    faults: int
    matches_with_faults: int
    by_kind: dict[str, int] = field(default_factory=dict)  # most frequent first
    recent: list[FaultRow] = field(default_factory=list)  # newest match first

    @property
    def per_100_decisions(self) -> float | None:
        return round(100 * self.faults / self.decisions, 2) if self.decisions else None

    @property
    def match_share(self) -> float | None:
        """The share of the matches (0..1) with at least one fault."""
        return round(self.matches_with_faults / self.matches, 4) if self.matches else None


def _fault_row(seat: Seat, fault: object) -> FaultRow | None:
    if not isinstance(fault, dict):
        return None
    step = fault.get("step")
    return FaultRow(
        match_id=seat.match_id,
        ladder_name=seat.match.ladder.name,
        seat=seat.index,
        step=step if isinstance(step, int) and step >= 0 else 0,
        kind=str(fault.get("kind") or "unknown")[:40],
        reason=str(fault.get("reason") or "")[:REASON_CHARS],
        forfeit=bool(fault.get("forfeit")),
        finished_at=seat.match.finished_at,
    )


def bot_fault_summary(*, bot_id: int, matches: int = RECENT_MATCHES, recent: int = 50) -> FaultSummary:
    """Faults by kind, the fault rate and the `recent` newest faults, over the bot's last `matches`
    finished (DONE) matches."""
    seats = list(
        Seat.objects.filter(bot_id=bot_id, match__status=MatchStatus.DONE)
        .select_related("match", "match__ladder")
        .order_by("-match_id")[:matches]
    )
    rows: list[FaultRow] = []
    decisions = 0.0
    with_faults = 0
    for seat in seats:
        players = max(1, seat.match.ladder.num_players)
        decisions += (seat.match.steps or 0) / players
        faults = [row for row in (_fault_row(seat, f) for f in seat.faults or []) if row is not None]
        with_faults += bool(faults)
        rows.extend(sorted(faults, key=lambda r: -r.step))
    kinds = Counter(row.kind for row in rows)
    return FaultSummary(
        matches=len(seats),
        decisions=round(decisions, 1),
        faults=len(rows),
        matches_with_faults=with_faults,
        by_kind=dict(sorted(kinds.items(), key=lambda item: (-item[1], item[0]))),
        recent=rows[:recent],
    )


@dataclass(frozen=True)
class MatchInProgress:
    """A match of the bot that is queued or being played; a running one may be watched live."""

    match_id: int
    status: str
    ladder_name: str
    game_id: str
    rated: bool
    seat: int
    opponents: list[tuple[int, str]]
    created_at: dt.datetime
    started_at: dt.datetime | None
    live: bool  # RUNNING and watchable (no other match of a duplicate set is still open)

    @property
    def path(self) -> str:
        return reverse("web:match", args=[self.match_id])


def bot_matches_in_progress(*, bot_id: int, limit: int = 20) -> list[MatchInProgress]:
    """The bot's QUEUED and RUNNING matches, running first, then newest first."""
    matches = match_list(bot_id=bot_id).filter(status__in=IN_PROGRESS)
    found = []
    for match in matches.order_by("-status", "-id")[:limit]:  # descending names: RUNNING before QUEUED
        seats = list(match.seats.all())
        mine = next((s.index for s in seats if s.bot_id == bot_id), 0)
        found.append(
            MatchInProgress(
                match_id=match.pk,
                status=match.status,
                ladder_name=match.ladder.name,
                game_id=match.ladder.game_id,
                rated=match.rated,
                seat=mine,
                opponents=[(s.bot_id, s.bot.name) for s in seats if s.bot_id != bot_id],
                created_at=match.created_at,
                started_at=match.started_at,
                live=match.status == MatchStatus.RUNNING and not getattr(match, "seed_in_play", False),
            )
        )
    return found


def bots_in_progress_counts(*, bot_ids: Iterable[int]) -> dict[int, int]:
    """How many QUEUED or RUNNING matches each bot has (0 for none), in one query."""
    ids = list(bot_ids)
    counts = dict.fromkeys(ids, 0)
    rows = (
        Seat.objects.filter(bot_id__in=ids, match__status__in=IN_PROGRESS)
        .values("bot_id")
        .annotate(n=Count("id"))
    )
    for row in rows:
        counts[row["bot_id"]] = row["n"]
    return counts
