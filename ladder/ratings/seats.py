"""The maintained seat tally: per ladder and seat position, the rated games, first places, rank sum and
score sum over every ledger row, so the leaderboard's "win rate by seat" reads one row per seat whatever
the ladder's history.

Layer: services. Writes only `SeatTally`; `seats_tally_add` runs in the rating transaction (the ladder row
is locked by then, so two results never interleave their increments), and `seats_tally_rebuild` /
`seats_tally_check` compare with the ledger aggregated from scratch, which is the definition
(`manage.py ratings_recompute` runs them). This module must not compute ratings nor render anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction
from django.db.models import BigIntegerField, Case, Count, F, Q, Sum, Value, When

from ladder.ratings.models import RatingLedger, SeatTally


@dataclass(frozen=True)
class _Totals:
    games: int = 0
    wins: int = 0
    rank_sum: int = 0
    scored: int = 0
    score_sum: int = 0


TALLY_FIELDS = ("games", "wins", "rank_sum", "scored", "score_sum")


def seats_tally_add(*, ladder_id: int, rows: Sequence[RatingLedger]) -> None:
    """Count one match's new ledger rows (one per seat) into the ladder's seat tally, in one UPDATE. Runs
    inside the caller's transaction, after it has locked the ladder row."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("the seat tally changes inside the rating transaction")
    seats = [row.seat for row in rows]
    if len(set(seats)) != len(seats):
        raise ValueError(f"one match's ledger rows name a seat twice: {seats}")
    SeatTally.objects.bulk_create(
        [SeatTally(ladder_id=ladder_id, seat=seat) for seat in seats], ignore_conflicts=True
    )
    SeatTally.objects.filter(ladder_id=ladder_id, seat__in=seats).update(
        games=F("games") + 1,
        wins=F("wins") + _per_seat(rows, lambda row: 1 if row.rank == 1 else 0),
        rank_sum=F("rank_sum") + _per_seat(rows, lambda row: row.rank),
        scored=F("scored") + _per_seat(rows, lambda row: 0 if row.score is None else 1),
        score_sum=F("score_sum") + _per_seat(rows, lambda row: row.score or 0),
    )


def _per_seat(rows: Sequence[RatingLedger], amount: Callable[[RatingLedger], int]) -> Case:
    """The amount each seat's row adds, as one SQL expression over the seat."""
    whens = [When(seat=row.seat, then=Value(amount(row))) for row in rows]
    return Case(*whens, default=Value(0), output_field=BigIntegerField())


def _from_ledger(ladder_id: int) -> dict[int, _Totals]:
    aggregated = (
        RatingLedger.objects.filter(ladder_id=ladder_id)
        .order_by()
        .values("seat")
        .annotate(
            games=Count("id"),
            wins=Count("id", filter=Q(rank=1)),
            rank_sum=Sum("rank"),
            scored=Count("score"),
            score_sum=Sum("score"),
        )
    )
    totals: dict[int, _Totals] = {}
    for r in aggregated:
        row: dict[str, Any] = dict(r)
        totals[row["seat"]] = _Totals(*(int(row[name] or 0) for name in TALLY_FIELDS))  # Sum of none: None
    return totals


def _differences(ladder_id: int) -> tuple[dict[int, _Totals], list[str]]:
    expected = _from_ledger(ladder_id)
    stored = {
        t.seat: _Totals(*(getattr(t, name) for name in TALLY_FIELDS))
        for t in SeatTally.objects.filter(ladder_id=ladder_id)
    }
    empty = _Totals()
    lines = [
        f"ladder {ladder_id} seat {seat}: tally {stored.get(seat, empty)}, ledger {expected.get(seat, empty)}"
        for seat in sorted(set(expected) | set(stored))
        if stored.get(seat, empty) != expected.get(seat, empty)
    ]
    return expected, lines


def seats_tally_check(*, ladder_id: int) -> list[str]:
    """What differs between the ladder's seat tally and its ledger (read only)."""
    return _differences(ladder_id)[1]


def seats_tally_rebuild(*, ladder_id: int) -> list[str]:
    """Write the ladder's seat tally from its ledger; the differences there were, as `seats_tally_check`
    names them. Inside the caller's transaction, which holds the ladder row's lock."""
    expected, lines = _differences(ladder_id)
    if lines:
        SeatTally.objects.filter(ladder_id=ladder_id).delete()
        SeatTally.objects.bulk_create(
            [SeatTally(ladder_id=ladder_id, seat=seat, **asdict(totals)) for seat, totals in expected.items()]
        )
    return lines
