"""The replay archive as a dataset: a ladder's finished matches as per-decision rows, page by page.

Layer: selectors (read-only). Which matches: DONE matches of one ladder with a stored replay whose secrets
are revealed (no unfinished match shares the seed: `matches.selectors.match_secrets_revealed`), optionally
those where one of `bot_ids` played, finished in [since, until), and where every seat's rating before the
match (the ledger's `elo_before`) was at least `min_rating`. The rows themselves come from
`engine_service.envs.dataset.decision_rows`, which re-simulates each record and gives each row its own
seat's observation only, never another seat's hidden items.

Paging: matches in id order; a `DatasetCursor` (match id, step) names the next row, so an export resumes
where the last page stopped. A page is bounded twice: at most `limit` rows (`MAX_ROWS_PER_REQUEST`) and at
most `MAX_MATCHES_PER_REQUEST` matches re-simulated; it is planned from the stored step counts before any
re-simulation, so the next cursor is known before the first row is sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Exists, OuterRef, QuerySet

from engine_service.envs.dataset import Row, decision_rows
from ladder.ladders.models import Ladder
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.matches.selectors import FINAL, match_secrets_revealed
from ladder.ratings.models import RatingLedger
from ladder.replays.models import Replay

MAX_ROWS_PER_REQUEST = 5000
DEFAULT_ROWS_PER_REQUEST = 1000
MAX_MATCHES_PER_REQUEST = 50
_CURSOR = re.compile(r"^m([0-9]{1,18})s([0-9]{1,9})$")


class DatasetQueryError(ValueError):
    """A malformed cursor or filter; the message says which and what is expected."""


class LadderUnknown(LookupError):
    """No ladder with that id."""


@dataclass(frozen=True)
class DatasetCursor:
    """The next row to serve: `step` of match `match_id` (steps of later matches follow)."""

    match_id: int
    step: int = 0

    def encode(self) -> str:
        return f"m{self.match_id}s{self.step}"

    @staticmethod
    def decode(text: str) -> DatasetCursor:
        found = _CURSOR.fullmatch(text)
        if found is None:
            raise DatasetQueryError(f"cursor {text[:40]!r} is not one this API gave (m<match>s<step>)")
        return DatasetCursor(int(found[1]), int(found[2]))


@dataclass(frozen=True)
class DatasetFilter:
    ladder_id: int
    bot_ids: tuple[int, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    min_rating: float | None = None


@dataclass(frozen=True)
class PageSlice:
    match_id: int
    start: int
    stop: int


@dataclass
class DatasetPage:
    """What one request serves: slices of matches' steps, the row count, and where the next page starts
    (None: the export is complete)."""

    slices: list[PageSlice] = field(default_factory=list)
    rows: int = 0
    next_cursor: DatasetCursor | None = None


def dataset_matches(*, query: DatasetFilter) -> QuerySet[Match]:
    """The matches of the export, in id order (see the module docstring)."""
    if not Ladder.objects.filter(pk=query.ladder_id).exists():
        raise LadderUnknown(f"no ladder with id {query.ladder_id}")
    in_play = Exists(
        Match.objects.filter(seed=OuterRef("seed")).exclude(pk=OuterRef("pk")).exclude(status__in=FINAL)
    )
    matches = Match.objects.filter(ladder_id=query.ladder_id, status=MatchStatus.DONE, replay__isnull=False)
    matches = matches.annotate(seed_in_play=in_play).filter(seed_in_play=False)
    if query.bot_ids:
        matches = matches.filter(Exists(Seat.objects.filter(match=OuterRef("pk"), bot_id__in=query.bot_ids)))
    if query.since is not None:
        matches = matches.filter(finished_at__gte=query.since)
    if query.until is not None:
        matches = matches.filter(finished_at__lt=query.until)
    if query.min_rating is not None:
        below = RatingLedger.objects.filter(match=OuterRef("pk"), elo_before__lt=query.min_rating)
        matches = matches.filter(Exists(RatingLedger.objects.filter(match=OuterRef("pk")))).exclude(
            Exists(below)
        )
    return matches.order_by("pk")


def dataset_page(*, query: DatasetFilter, cursor: DatasetCursor | None, limit: int) -> DatasetPage:
    """Plan the page that starts at `cursor` (None: the first), from the stored step counts."""
    if not 1 <= limit <= MAX_ROWS_PER_REQUEST:
        raise DatasetQueryError(f"limit must be 1-{MAX_ROWS_PER_REQUEST} rows, not {limit}")
    matches = dataset_matches(query=query)
    if cursor is not None:
        matches = matches.filter(pk__gte=cursor.match_id)
    page = DatasetPage()
    for match_id, steps in matches.values_list("pk", "replay__steps").iterator():
        start = cursor.step if cursor is not None and match_id == cursor.match_id else 0
        if start >= steps:
            continue
        if len(page.slices) == MAX_MATCHES_PER_REQUEST or page.rows == limit:
            page.next_cursor = DatasetCursor(match_id, start)
            break
        stop = min(steps, start + limit - page.rows)
        page.slices.append(PageSlice(match_id, start, stop))
        page.rows += stop - start
        if stop < steps:
            page.next_cursor = DatasetCursor(match_id, stop)
            break
    return page


def dataset_rows(*, page: DatasetPage) -> Iterator[Row]:
    """The page's rows, re-simulated match by match (each seat's own observation only)."""
    for part in page.slices:
        replay_row = Replay.objects.select_related("match").get(match_id=part.match_id)
        if not match_secrets_revealed(match=replay_row.match):  # a duplicate set reopened meanwhile
            continue
        yield from decision_rows(replay_row.record(), match=part.match_id, start=part.start, stop=part.stop)
