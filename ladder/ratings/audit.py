"""The rating audit: every rating rebuilt from the match records themselves, compared with the ledger and
the rating rows, and each match's rating change as the ledger records it.

Layer: selectors (read-only). `ratings_audit` replays, in ledger order, every DONE rated match from its
stored record (`MatchResult.of`: ranks, scores and forfeits; each seat's reported version) and its Seat
rows, never from the ledger's own ranks: the season of a match comes from the ladder's closed `Season`
rows and its finish time, a new version's start from `BotVersion.reset_rating`, and the maths is the
services' own (`elo.season_carry_over`, `elo.version_change`, `elo.rate_match`), applied as
`ratings.services.ratings_apply_match` applies them. It then compares each ledger row (seat, rank, score,
version, season, before and after values) and each `Rating` row with the rebuild and names every
difference: ledger rows of a match that does not exist, is not DONE or is unrated; DONE rated matches
without ledger rows; records that disagree with their Seat rows. Matches are read in batches (their records, Seat rows and
ledger rows a batch at a time), so memory grows with the number of matches only by one small entry each
(its place in the ledger order). It must not write anything: repairs are `ratings_recompute` (from the
ledger) or an operator's call.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from django.db import connection, transaction
from django.db.models import F, Q, QuerySet

from engine_service.referee import MatchRecord, MatchResult
from engine_service.referee.record import RecordError
from ladder.bots.models import BotVersion
from ladder.ladders.models import Ladder
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.ratings import elo
from ladder.ratings.models import Rating, RatingLedger, Season
from ladder.replays.models import Replay

BATCH = 500  # matches whose seats and records are read at once

KINDS = {
    "ledger_orphan": "ledger rows of a match that does not exist, is not DONE or is unrated",
    "ledger_missing": "a seat of a DONE rated match without its ledger row",
    "ledger_extra": "a ledger row for a bot that has no seat in the match",
    "ledger_field": "a ledger row's seat, rank, score, version, season or ladder differs from the record",
    "ledger_value": "a ledger row's before/after values differ from the rebuild",
    "record": "a match record that is missing, unreadable or disagrees with its Seat rows",
    "rating": "a rating row differs from the rebuild",
    "rating_missing": "a rebuilt rating without its rating row",
}


@dataclass(frozen=True)
class Difference:
    """One difference the audit found: its kind (a key of KINDS), where, and what differs."""

    kind: str
    ladder_id: int | None
    match_id: int | None
    bot_id: int | None
    detail: str

    def line(self) -> str:
        where = [
            f"{name} {value}"
            for name, value in (("ladder", self.ladder_id), ("match", self.match_id), ("bot", self.bot_id))
            if value is not None
        ]
        return f"{self.kind}: {' '.join(where)}: {self.detail}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "ladder": self.ladder_id,
            "match": self.match_id,
            "bot": self.bot_id,
            "detail": self.detail,
        }


@dataclass
class AuditReport:
    """What the audit replayed and every difference it found, in the order found."""

    matches: int = 0
    ledger_rows: int = 0
    ratings: int = 0
    differences: list[Difference] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.differences

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(KINDS, 0)
        for difference in self.differences:
            counts[difference.kind] += 1
        return counts


INCONSISTENT = Q(wins__gt=F("games"))  # counts no results can give (`standing.counts_consistent`)


def rating_rows_inconsistent(*, ladder_id: int | None = None) -> QuerySet[Rating]:
    """Rating rows whose counts cannot be right (more wins than games): shown without a win rate interval,
    warned about in the admin and counted in the web server's metrics; the audit names their cause."""
    rows = Rating.objects.filter(INCONSISTENT)
    return rows if ladder_id is None else rows.filter(ladder_id=ladder_id)


class _Row(NamedTuple):
    """A ledger row as the audit reads it."""

    id: int
    match_id: int
    ladder_id: int
    bot_id: int
    seat: int
    rank: int
    score: int | None
    version: str
    season: int
    values: tuple[float, float, float, float, float, float]  # elo, mu, sigma: before, after each
    created_at: datetime


_ROW_FIELDS = ("id", "match_id", "ladder_id", "bot_id", "seat", "rank", "score", "version", "season")
_VALUE_FIELDS = ("elo_before", "elo_after", "mu_before", "mu_after", "sigma_before", "sigma_after")


class _Match(NamedTuple):
    id: int
    ladder_id: int
    status: str
    rated: bool
    finished_at: datetime | None


class _SeatRow(NamedTuple):
    seat: int
    bot_id: int
    rank: int | None
    score: int | None
    forfeited: bool


class _Fact(NamedTuple):
    """One seat of a match as its record (and Seat row) says."""

    seat: int
    bot_id: int
    rank: int
    score: int | None
    forfeited: bool
    version: str


@dataclass
class _Running:
    """One bot's rating on one ladder as the rebuild goes (mirrors the `Rating` row's fields)."""

    rating: elo.SeatRating
    games: int = 0
    wins: int = 0
    season: int = 1
    version: str = ""
    versions: set[str] = field(default_factory=set)  # versions with a rated game on this ladder
    last_played_at: datetime | None = None
    last_match_id: int | None = None


@dataclass
class _Audit:
    ladders: dict[int, Ladder]
    closes: dict[int, list[tuple[datetime, int]]]  # per ladder: (closed_at, season number), in order
    resets: set[tuple[int, str]]  # (bot id, version name) whose owner chose "reset rating"
    report: AuditReport = field(default_factory=AuditReport)
    running: dict[tuple[int, int], _Running] = field(default_factory=dict)

    def add(self, kind: str, ladder: int | None, match: int | None, bot: int | None, detail: str) -> None:
        self.report.differences.append(Difference(kind, ladder, match, bot, detail))

    def state(self, ladder: Ladder, bot_id: int) -> _Running:
        key = (ladder.pk, bot_id)
        if key not in self.running:
            self.running[key] = _Running(elo.initial(ladder.params))
        return self.running[key]

    def season_of(self, ladder: Ladder, finished_at: datetime | None) -> int:
        """The season a match finished in: the first closed season that closed after it, else the current."""
        for closed_at, number in self.closes.get(ladder.pk, []):
            if finished_at is not None and finished_at < closed_at:
                return number
        return ladder.season


def ratings_audit(*, ladder_id: int | None = None) -> AuditReport:
    """Rebuild every rating (of one ladder, or all) from the match records and name every difference with
    the ledger and the rating rows. Reads one snapshot (REPEATABLE READ on PostgreSQL); writes nothing."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        audit = _load(ladder_id)
        for chunk in _batches(_match_order(_ledger_order(ladder_id), ladder_id), BATCH):
            _audit_batch(audit, chunk, _ledger_rows(chunk, ladder_id))
        _compare_ratings(audit, ladder_id)
    return audit.report


def _load(ladder_id: int | None) -> _Audit:
    ladders = Ladder.objects.all() if ladder_id is None else Ladder.objects.filter(pk=ladder_id)
    closes: dict[int, list[tuple[datetime, int]]] = {}
    seasons = Season.objects.order_by("ladder_id", "number").values_list("ladder_id", "closed_at", "number")
    for season_ladder, closed_at, number in seasons:
        closes.setdefault(season_ladder, []).append((closed_at, number))
    resets = set(BotVersion.objects.filter(reset_rating=True).values_list("bot_id", "name"))
    return _Audit(ladders={ladder.pk: ladder for ladder in ladders}, closes=closes, resets=resets)


def _ledger_order(ladder_id: int | None) -> dict[int, datetime]:
    """The matches with ledger rows, in ledger order (of their first row), each with that row's time."""
    rows = RatingLedger.objects.order_by("id")
    if ladder_id is not None:
        rows = rows.filter(ladder_id=ladder_id)
    first: dict[int, datetime] = {}
    for match_id, created_at in rows.values_list("match_id", "created_at").iterator(chunk_size=5000):
        first.setdefault(match_id, created_at)
    return first


def _match_order(ledger: dict[int, datetime], ladder_id: int | None) -> list[int]:
    """The matches to replay: those with ledger rows in ledger order, and the DONE rated matches without
    any, each placed before the first ledger match rated after it finished."""
    done = Match.objects.filter(status=MatchStatus.DONE, rated=True).order_by("finished_at", "id")
    if ladder_id is not None:
        done = done.filter(ladder_id=ladder_id)
    unrated = [
        (finished_at, pk)
        for pk, finished_at in done.values_list("id", "finished_at").iterator(chunk_size=5000)
        if pk not in ledger and finished_at is not None
    ]
    order: list[int] = []
    waiting = iter(unrated)
    pending = next(waiting, None)
    for match_id, rated_at in ledger.items():
        while pending is not None and pending[0] < rated_at:
            order.append(pending[1])
            pending = next(waiting, None)
        order.append(match_id)
    while pending is not None:
        order.append(pending[1])
        pending = next(waiting, None)
    return order


def _ledger_rows(chunk: list[int], ladder_id: int | None) -> dict[int, list[_Row]]:
    """The ledger rows of a batch of matches, grouped by match, each group in ledger order."""
    rows = RatingLedger.objects.filter(match_id__in=chunk).order_by("id")
    if ladder_id is not None:
        rows = rows.filter(ladder_id=ladder_id)
    groups: dict[int, list[_Row]] = {}
    for values in rows.values_list(*_ROW_FIELDS, *_VALUE_FIELDS, "created_at"):
        row = _Row._make((*values[:9], values[9:15], values[15]))
        groups.setdefault(row.match_id, []).append(row)
    return groups


def _batches(items: Sequence[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _audit_batch(audit: _Audit, chunk: list[int], ledger: dict[int, list[_Row]]) -> None:
    """Replay a batch of matches (in order) from their records, their Seat rows and their ledger rows."""
    match_rows = Match.objects.filter(pk__in=chunk).values_list(*_Match._fields)
    matches = {m.id: m for m in (_Match(*values) for values in match_rows)}
    seats: dict[int, list[_SeatRow]] = {}
    seat_rows = Seat.objects.filter(match_id__in=chunk).order_by("match_id", "index")
    for values in seat_rows.values_list("match_id", "index", "bot_id", "rank", "score", "forfeited"):
        seats.setdefault(values[0], []).append(_SeatRow._make(values[1:]))
    records = dict(Replay.objects.filter(match_id__in=chunk).values_list("match_id", "data"))
    for match_id in chunk:
        rows = ledger.get(match_id, [])
        audit.report.ledger_rows += len(rows)
        match = matches.get(match_id)
        if match is None or match.status != MatchStatus.DONE or not match.rated:
            _orphan(audit, match_id, match, rows)
            continue
        facts = _facts(audit, match, seats.get(match_id, []), records.get(match_id), rows)
        if facts is not None:
            _replay_match(audit, match, facts, rows)


def _orphan(audit: _Audit, match_id: int, match: _Match | None, rows: list[_Row]) -> None:
    if match is None:
        why = "the match does not exist"
    elif match.status != MatchStatus.DONE:
        why = f"the match is {match.status}, not DONE"
    else:
        why = "the match is unrated (practice)"
    bots = ", ".join(str(r.bot_id) for r in rows)
    audit.add(
        "ledger_orphan", rows[0].ladder_id, match_id, None, f"{len(rows)} ledger rows (bots {bots}): {why}"
    )


def _facts(
    audit: _Audit,
    match: _Match,
    seats: list[_SeatRow],
    data: bytes | memoryview | None,
    rows: list[_Row],
) -> list[_Fact] | None:
    """The seats of a match from its record, checked against its Seat rows. Without a usable record the
    Seat rows' ranks are used (and the ledger's versions, the only other copy), and the record reported."""
    ladder_id, match_id = match.ladder_id, match.id
    try:
        if data is None:
            raise RecordError("no stored record")
        record = MatchRecord.loads(zlib.decompress(bytes(data)).decode())
        result = MatchResult.of(record)
    except (RecordError, ValueError, zlib.error) as exc:
        audit.add("record", ladder_id, match_id, None, f"the record cannot be read: {exc}")
        return _facts_from_seats(audit, match, seats, rows)
    if len(seats) != len(result.seats):
        audit.add(
            "record", ladder_id, match_id, None, f"{len(seats)} seat rows, the record has {len(result.seats)}"
        )
        return None
    facts = [_fact_of(record, result, i, bot_id) for i, bot_id, *_ in seats]
    for fact, (_, _, rank, score, forfeited) in zip(facts, seats, strict=True):
        stored = (rank, score, forfeited)
        if stored != (fact.rank, fact.score, fact.forfeited):
            audit.add(
                "record",
                ladder_id,
                match_id,
                fact.bot_id,
                f"seat {fact.seat} row has rank, score, forfeited {stored}, "
                f"the record {(fact.rank, fact.score, fact.forfeited)}",
            )
    return facts


def _fact_of(record: MatchRecord, result: MatchResult, seat: int, bot_id: int) -> _Fact:
    outcome = result.seats[seat]
    version = record.seats[seat].version if seat < len(record.seats) else ""
    return _Fact(seat, bot_id, outcome.rank, outcome.score, outcome.forfeited, version or "")


def _facts_from_seats(
    audit: _Audit,
    match: _Match,
    seats: list[_SeatRow],
    rows: list[_Row],
) -> list[_Fact] | None:
    versions = {r.bot_id: r.version for r in rows}
    if not seats or any(rank is None or not 1 <= rank <= len(seats) for _, _, rank, _, _ in seats):
        audit.add("record", match.ladder_id, match.id, None, "no seat ranks either: not replayed")
        return None
    return [
        _Fact(index, bot_id, int(rank or 0), score, forfeited, versions.get(bot_id, ""))
        for index, bot_id, rank, score, forfeited in seats
    ]


def _start(
    audit: _Audit, state: _Running, fact: _Fact, season: int, params: elo.RatingParams
) -> elo.SeatRating:
    """The rating a seat's game is rated from, exactly as `ratings.services` takes it: carried over into a
    new season (games and wins from zero), then a new version's start. Changes `state`'s season counters."""
    current = state.rating
    rated_before = state.games > 0 or state.season != season
    if state.season != season:
        current = elo.season_carry_over(current, params)
        state.season, state.games, state.wins = season, 0, 0
    if not fact.version:
        return current
    name = fact.version.strip()
    start = elo.version_change(
        current,
        params,
        games=1 if rated_before else 0,
        current=state.version,
        new=name,
        reset=(fact.bot_id, name) in audit.resets and name not in state.versions,
    )
    return start or current


def _replay_match(audit: _Audit, match: _Match, facts: list[_Fact], rows: list[_Row]) -> None:
    ladder = audit.ladders[match.ladder_id]
    params = ladder.params
    season = audit.season_of(ladder, match.finished_at)
    states = [audit.state(ladder, f.bot_id) for f in facts]
    before = [_start(audit, s, f, season, params) for s, f in zip(states, facts, strict=True)]
    after = elo.rate_match(before, [f.rank for f in facts], params)
    by_bot = {r.bot_id: r for r in rows}
    for fact, state, old, new in zip(facts, states, before, after, strict=True):
        row = by_bot.pop(fact.bot_id, None)
        if row is None:
            audit.add(
                "ledger_missing", ladder.pk, match.id, fact.bot_id, f"seat {fact.seat} has no ledger row"
            )
        else:
            _compare_row(audit, ladder.pk, row, fact, season, (old, new))
        state.rating = new
        state.games += 1
        state.wins += 1 if fact.rank == 1 else 0
        state.last_played_at, state.last_match_id = match.finished_at, match.id
        state.version = fact.version or state.version
        if fact.version:
            state.versions.add(fact.version)
    for row in by_bot.values():
        audit.add("ledger_extra", row.ladder_id, match.id, row.bot_id, "the bot has no seat in the match")
    audit.report.matches += 1


def _compare_row(
    audit: _Audit, ladder_id: int, row: _Row, fact: _Fact, season: int, change: tuple[elo.SeatRating, ...]
) -> None:
    expected = {
        "seat": fact.seat,
        "rank": fact.rank,
        "score": fact.score,
        "version": fact.version,
        "season": season,
        "ladder": ladder_id,
    }
    stored = dict(zip(("seat", "rank", "score", "version", "season"), row[4:9], strict=True))
    stored["ladder"] = row.ladder_id
    for name, value in expected.items():
        if stored[name] != value:
            detail = f"{name} {stored[name]!r} in the ledger, {value!r} in the record"
            audit.add("ledger_field", ladder_id, row.match_id, row.bot_id, detail)
    old, new = change
    rebuilt = (old.elo, new.elo, old.mu, new.mu, old.sigma, new.sigma)
    if rebuilt != row.values:
        differing = [
            f"{name} {value!r} != {want!r}"
            for name, value, want in zip(_VALUE_FIELDS, row.values, rebuilt, strict=True)
            if value != want
        ]
        audit.add(
            "ledger_value", ladder_id, row.match_id, row.bot_id, "ledger != rebuilt: " + ", ".join(differing)
        )


_RATING_FIELDS = (
    "elo",
    "mu",
    "sigma",
    "games",
    "wins",
    "last_played_at",
    "version",
    "season",
    "last_match_id",
)


def _rebuilt(state: _Running) -> tuple[Any, ...]:
    return (
        state.rating.elo,
        state.rating.mu,
        state.rating.sigma,
        state.games,
        state.wins,
        state.last_played_at,
        state.version,
        state.season,
        state.last_match_id,
    )


def _compare_ratings(audit: _Audit, ladder_id: int | None) -> None:
    ratings = Rating.objects.order_by("id")
    if ladder_id is not None:
        ratings = ratings.filter(ladder_id=ladder_id)
    seen: set[tuple[int, int]] = set()
    for rating_ladder, bot_id, *stored in ratings.values_list(
        "ladder_id", "bot_id", *_RATING_FIELDS
    ).iterator(chunk_size=5000):
        audit.report.ratings += 1
        key = (rating_ladder, bot_id)
        seen.add(key)
        ladder = audit.ladders.get(rating_ladder)
        if ladder is None:
            continue
        state = audit.running.get(key) or _Running(elo.initial(ladder.params))
        _name_differences(audit, key, tuple(stored), _rebuilt(state))
    for key in _missing(audit.running, seen):
        audit.add(
            "rating_missing", key[0], None, key[1], "the records rate this bot but it has no rating row"
        )


def _name_differences(
    audit: _Audit, key: tuple[int, int], stored: tuple[Any, ...], rebuilt: tuple[Any, ...]
) -> None:
    diffs = [
        f"{name} {value!r} -> {want!r}"
        for name, value, want in zip(_RATING_FIELDS, stored, rebuilt, strict=True)
        if value != want
    ]
    if diffs:
        audit.add("rating", key[0], None, key[1], "stored -> rebuilt: " + ", ".join(diffs))


def _missing(
    running: dict[tuple[int, int], _Running], seen: set[tuple[int, int]]
) -> Iterable[tuple[int, int]]:
    return sorted(key for key in running if key not in seen)


@dataclass(frozen=True)
class RatingChange:
    """One seat's rating change in a match, as its ledger row records it (before and after)."""

    seat: int
    bot_id: int
    bot_name: str
    rank: int
    version: str
    season: int
    before: elo.SeatRating
    after: elo.SeatRating

    @property
    def elo_delta(self) -> float:
        return self.after.elo - self.before.elo

    @property
    def conservative_delta(self) -> float:
        return self.after.conservative - self.before.conservative


def match_rating_changes(*, match_id: int) -> list[RatingChange]:
    """Each seat's rating before and after the match, in seat order (empty until the match is rated, and
    for an unrated match): the ledger rows, so anyone can follow a rating from match to match."""
    rows = RatingLedger.objects.filter(match_id=match_id).select_related("bot").order_by("seat")
    return [
        RatingChange(
            seat=row.seat,
            bot_id=row.bot_id,
            bot_name=row.bot.name,
            rank=row.rank,
            version=row.version,
            season=row.season,
            before=elo.SeatRating(row.elo_before, row.mu_before, row.sigma_before),
            after=elo.SeatRating(row.elo_after, row.mu_after, row.sigma_after),
        )
        for row in rows
    ]
