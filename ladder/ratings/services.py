"""Rating writes: apply one finished match to the ledger and the current ratings; rebuild from the ledger.

Layer: services. `ratings_apply_match` runs inside the caller's match-result transaction: it locks the seats'
rating rows in id order (`select_for_update`), appends one ledger row per seat and updates the ratings, so a
result is applied exactly once and concurrent results for overlapping bots serialise without deadlock; the
ladder row is locked first (a match result holds it already), and the seats are then put in their places on
the ladder's maintained board in the same transaction (`ladder.ratings.board`).
The maths is `ladder.ratings.elo` (pure), a new bot version's start included (`elo.version_change`, with the
owner's "reset rating" choice read from `BotVersion`). The leaderboard cache of the ladder is invalidated after commit.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, transaction

from ladder.bots.models import BotVersion
from ladder.bots.versions import bot_version_record
from ladder.ladders.models import Ladder
from ladder.ratings import elo
from ladder.ratings.board import board_check, board_place, board_rebuild
from ladder.ratings.cache import leaderboard_cache_invalidate
from ladder.ratings.models import Rating, RatingLedger
from ladder.ratings.seats import seats_tally_add, seats_tally_check, seats_tally_rebuild


@dataclass(frozen=True)
class SeatOutcome:
    seat: int
    bot_id: int
    rank: int
    score: int | None
    version: str = ""  # the version the bot reported for this match ("": unknown, continues the current one)


def rating_rows_ensure(*, ladder: Ladder, bot_ids: Sequence[int]) -> None:
    """Create missing rating rows at the ladder's start values (idempotent, safe under concurrency)."""
    start = elo.initial(ladder.params)
    existing = set(Rating.objects.filter(ladder=ladder, bot_id__in=bot_ids).values_list("bot_id", flat=True))
    missing = [b for b in bot_ids if b not in existing]
    if missing:
        Rating.objects.bulk_create(
            [
                Rating(
                    ladder=ladder,
                    bot_id=b,
                    elo=start.elo,
                    mu=start.mu,
                    sigma=start.sigma,
                    conservative=elo.conservative(start.mu, start.sigma),
                )
                for b in missing
            ],
            ignore_conflicts=True,
        )


def ratings_apply_match(
    *, ladder: Ladder, match_id: int, outcomes: Sequence[SeatOutcome], finished_at: datetime
) -> list[RatingLedger]:
    """Append the ledger rows of one match and update the ratings. Must run inside a transaction."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("ratings_apply_match must run inside the match-result transaction")
    bot_ids = [o.bot_id for o in outcomes]
    rating_rows_ensure(ladder=ladder, bot_ids=bot_ids)
    season = Ladder.objects.select_for_update().filter(pk=ladder.pk).values_list("season", flat=True).get()
    locked = list(Rating.objects.select_for_update().filter(ladder=ladder, bot_id__in=bot_ids).order_by("id"))
    by_bot = {r.bot_id: r for r in locked}
    before = [_start_of_match(ladder, season, by_bot[o.bot_id], o, finished_at) for o in outcomes]
    after = elo.rate_match(before, [o.rank for o in outcomes], ladder.params)
    rows = []
    for outcome, old, new in zip(outcomes, before, after, strict=True):
        rows.append(
            RatingLedger(
                ladder=ladder,
                match_id=match_id,
                bot_id=outcome.bot_id,
                seat=outcome.seat,
                rank=outcome.rank,
                score=outcome.score,
                version=outcome.version,
                season=season,
                elo_before=old.elo,
                elo_after=new.elo,
                mu_before=old.mu,
                mu_after=new.mu,
                sigma_before=old.sigma,
                sigma_after=new.sigma,
                created_at=finished_at,
            )
        )
        rating = by_bot[outcome.bot_id]
        rating.elo, rating.mu, rating.sigma = new.elo, new.mu, new.sigma
        rating.games += 1
        rating.wins += 1 if outcome.rank == 1 else 0
        rating.last_played_at = finished_at
        rating.last_match_id = match_id
        rating.version = outcome.version or rating.version
    RatingLedger.objects.bulk_create(rows)
    seats_tally_add(ladder_id=ladder.pk, rows=rows)
    Rating.objects.bulk_update(locked, [*_FIELDS[:-1], "last_match", "updated_at"])
    board_place(ladder_id=ladder.pk, rating_ids=[r.pk for r in locked])  # sets `conservative` too
    transaction.on_commit(lambda: leaderboard_cache_invalidate(ladder_id=ladder.pk))
    return rows


def _start_of_match(
    ladder: Ladder, season: int, rating: Rating, outcome: SeatOutcome, at: datetime
) -> elo.SeatRating:
    """The rating the seat's game is rated from: its current one, carried over into a new season (its
    games and wins then count from zero), and a new version's start. Changes `rating`'s season counters."""
    current = elo.SeatRating(elo=rating.elo, mu=rating.mu, sigma=rating.sigma)
    rated_before = rating.games > 0 or rating.season != season
    if rating.season != season:
        current = elo.season_carry_over(current, ladder.params)
        rating.season, rating.games, rating.wins = season, 0, 0
    if not outcome.version:
        return current
    version = bot_version_record(bot_id=outcome.bot_id, name=outcome.version, at=at)
    reset = (  # a reset asked for applies to the version's first game here; only then is the ledger read
        version.reset_rating
        and not RatingLedger.objects.filter(
            ladder=ladder, bot_id=outcome.bot_id, version=version.name
        ).exists()
    )
    start = elo.version_change(
        current,
        ladder.params,
        games=1 if rated_before else 0,
        current=rating.version,
        new=version.name,
        reset=reset,
    )
    return start or current


@dataclass
class _Running:
    rating: elo.SeatRating
    games: int = 0
    wins: int = 0
    last_played_at: datetime | None = None
    last_match_id: int | None = None
    version: str = ""
    versions: set[str] = field(default_factory=set)  # versions rated on this ladder so far
    season: int = 1
    rated: bool = False  # rated on this ladder before, in any season


@dataclass
class RecomputeReport:
    matches: int = 0
    ledger_rows: int = 0
    ledger_mismatches: list[str] = field(default_factory=list)
    rating_differences: list[str] = field(default_factory=list)
    ratings_written: int = 0

    @property
    def identical(self) -> bool:
        return not self.ledger_mismatches and not self.rating_differences


_FIELDS = ("elo", "mu", "sigma", "games", "wins", "last_played_at", "version", "season", "last_match_id")


def ratings_recompute(*, write: bool = True) -> RecomputeReport:
    """Rebuild every rating from the ledger (in ledger order, with each ladder's parameters) and compare
    with the stored table. Ledger rows whose before/after values the rebuild does not reproduce are
    reported; with `write`, rating rows that differ are overwritten with the rebuilt values. Each ladder's
    maintained board (`ladder.ratings.board`) is then compared with the board placed from scratch over the
    (rewritten) rows, and its seat tally (`ladder.ratings.seats`) with the ledger's totals, each difference
    reported among the rating differences, and rebuilt with `write`.

    The ledger and the ratings are read in one snapshot (one transaction: REPEATABLE READ on PostgreSQL;
    on SQLite the ladder's transactions take the write lock, so results wait for the few milliseconds of the
    rebuild), so results recorded meanwhile never show as a difference. A rewrite locks every ladder row
    first, as a match result does before its rating rows, so results wait for it rather than deadlock; on
    PostgreSQL a result committed after the snapshot began makes the write fail (run it again)."""
    outermost = not connection.in_atomic_block  # inside a caller's transaction, its snapshot is the one
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        ladders_read = Ladder.objects.order_by("pk")  # locked to write: as a result, ladder before ratings
        ladders = {
            ladder.pk: ladder for ladder in (ladders_read.select_for_update() if write else ladders_read)
        }
        report = RecomputeReport()
        running = _rebuild_from_ledger(ladders, report)
        changed, missing = _compare_with_stored(ladders, running, report)
        if write:
            _write_rebuilt(changed, missing, report)
        for ladder_id in ladders:
            lines = board_rebuild(ladder_id=ladder_id) if write else board_check(ladder_id=ladder_id)
            lines += (
                seats_tally_rebuild(ladder_id=ladder_id) if write else seats_tally_check(ladder_id=ladder_id)
            )
            report.rating_differences.extend(lines)
            if write and lines:
                transaction.on_commit(functools.partial(leaderboard_cache_invalidate, ladder_id=ladder_id))
    return report


def _rebuild_from_ledger(
    ladders: dict[int, Ladder], report: RecomputeReport
) -> dict[tuple[int, int], _Running]:
    running: dict[tuple[int, int], _Running] = {}
    resets = set(BotVersion.objects.filter(reset_rating=True).values_list("bot_id", "name"))
    groups: dict[int, list[RatingLedger]] = {}
    for row in RatingLedger.objects.order_by("id").iterator(chunk_size=2000):
        groups.setdefault(row.match_id, []).append(row)  # dicts keep first-seen (ledger) order
    for match_id, rows in groups.items():
        rows.sort(key=lambda r: r.seat)
        ladder = ladders[rows[0].ladder_id]
        params = ladder.params
        states = [running.setdefault((ladder.pk, r.bot_id), _Running(elo.initial(params))) for r in rows]
        for row, state in zip(rows, states, strict=True):
            if row.season != state.season:
                state.rating = elo.season_carry_over(state.rating, params)
                state.season, state.games, state.wins = row.season, 0, 0
            start = elo.version_change(
                state.rating,
                params,
                games=1 if state.rated else 0,
                current=state.version,
                new=row.version,
                reset=(row.bot_id, row.version) in resets and row.version not in state.versions,
            )
            state.rating = start or state.rating
        try:
            after = elo.rate_match([s.rating for s in states], [r.rank for r in rows], params)
        except ValueError as exc:  # rows missing or edited: reported, the match left out of the rebuild
            report.ledger_mismatches.append(f"match {match_id}: its ledger rows cannot be replayed ({exc})")
            continue
        for row, state, new in zip(rows, states, after, strict=True):
            expected = (state.rating.elo, new.elo, state.rating.mu, new.mu, state.rating.sigma, new.sigma)
            stored = (
                row.elo_before,
                row.elo_after,
                row.mu_before,
                row.mu_after,
                row.sigma_before,
                row.sigma_after,
            )
            if expected != stored:
                report.ledger_mismatches.append(
                    f"match {match_id} bot {row.bot_id}: ledger {stored} != rebuilt {expected}"
                )
            state.rating = new
            state.games += 1
            state.wins += 1 if row.rank == 1 else 0
            state.last_played_at = row.created_at
            state.last_match_id = match_id
            state.rated = True
            if row.version:
                state.version = row.version
                state.versions.add(row.version)
        report.matches += 1
        report.ledger_rows += len(rows)
    return running


def _rebuilt_fields(state: _Running) -> dict[str, Any]:
    return {
        "elo": state.rating.elo,
        "mu": state.rating.mu,
        "sigma": state.rating.sigma,
        "games": state.games,
        "wins": state.wins,
        "last_played_at": state.last_played_at,
        "version": state.version,
        "season": state.season,
        "last_match_id": state.last_match_id,
    }


def _compare_with_stored(
    ladders: dict[int, Ladder], running: dict[tuple[int, int], _Running], report: RecomputeReport
) -> tuple[list[Rating], list[Rating]]:
    """The stored rows that differ from the rebuild (set to the rebuilt values) and the missing rows."""
    changed = []
    for rating in Rating.objects.order_by("id"):
        state = running.pop((rating.ladder_id, rating.bot_id), None) or _Running(
            elo.initial(ladders[rating.ladder_id].params)
        )
        rebuilt = _rebuilt_fields(state)
        diffs = [
            f"{name} {getattr(rating, name)!r} -> {rebuilt[name]!r}"
            for name in _FIELDS
            if getattr(rating, name) != rebuilt[name]
        ]
        if diffs:
            report.rating_differences.append(
                f"ladder {rating.ladder_id} bot {rating.bot_id}: " + ", ".join(diffs)
            )
            for name, value in rebuilt.items():
                setattr(rating, name, value)
            changed.append(rating)
    missing = []
    for (ladder_id, bot_id), state in running.items():
        report.rating_differences.append(f"ladder {ladder_id} bot {bot_id}: rating row missing")
        missing.append(Rating(ladder_id=ladder_id, bot_id=bot_id, **_rebuilt_fields(state)))
    return changed, missing


def _write_rebuilt(changed: list[Rating], missing: list[Rating], report: RecomputeReport) -> None:
    if changed:
        Rating.objects.bulk_update(changed, [*_FIELDS[:-1], "last_match"])
    if missing:
        Rating.objects.bulk_create(missing)
    report.ratings_written = len(changed) + len(missing)
    for ladder_id in {r.ladder_id for r in changed} | {r.ladder_id for r in missing}:
        transaction.on_commit(functools.partial(leaderboard_cache_invalidate, ladder_id=ladder_id))
