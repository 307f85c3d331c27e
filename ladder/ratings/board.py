"""The maintained leaderboard: each listed rating row's place on its ladder's current board, kept up to date
in the rating transaction, so that a page of the board is read in O(page) whatever the ladder's size.

Layer: services. Writes only Rating's board fields; the rules are `ladder.ratings.standing`'s, whose `place`
is the definition (`board_rebuild` is `place` over the whole ladder, and the tests compare the maintained
board with it on random ladders). What is stored, per rating row:

- `conservative` = mu - 3 sigma (the ranking key, indexed with the ladder and the row id);
- `position`: the row's place on the board, 1 to N for the N listed rows, null when not listed. Listed: an
  active bot with at least one game in the ladder's current season. Order: conservative descending, then
  rating id (`place` breaks exact ties by input order, and its callers pass rows oldest first);
- `leads_tier`: the row opens a tier (its interval mu +/- 2 sigma does not overlap the interval of the
  previous tier's first row; the first row always does).

Tier numbers, ranks, provisional marks and intervals are derived per row when a page is read
(`selectors.leaderboard_page`): the tier is the number of leaders at or above the row, the rank the
position of the first row with the same conservative rating.

When one row changes (`board_place`) only the rows between its old and new positions move, by one place,
and the tier chain is walked from the leader above the change to the first row past the change that was a
leader already (from there on the chain is the one stored): one indexed query per tier walked, and writes
only where a flag changes. Every change takes the ladder row's lock first (a match result holds it already),
so two changes to one board never interleave. This module must not compute ratings (`services` does) nor
render anything; `board_rebuild` is the repair (`manage.py ratings_recompute` runs it on every ladder).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import F, Q

from ladder.ladders.models import Ladder
from ladder.ratings.elo import conservative
from ladder.ratings.models import LISTED, Rating
from ladder.ratings.standing import Z_RATING, place, rating_interval

BOARD_FIELDS = ("conservative", "position", "leads_tier")


def _locked_season(ladder_id: int) -> int:
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("the board changes inside the rating transaction")
    return Ladder.objects.select_for_update().filter(pk=ladder_id).values_list("season", flat=True).get()


def board_place(*, ladder_id: int, rating_ids: Sequence[int]) -> None:
    """Put rating rows of one ladder whose values changed (mu, sigma, games, season, the bot retired) in
    their place on its board, one after the other. Runs inside the caller's transaction."""
    season = _locked_season(ladder_id)
    for rating_id in rating_ids:
        _place_one(ladder_id, season, rating_id)


def board_lock_for_bot(*, bot_id: int) -> list[int]:
    """Lock, in id order, every ladder the bot has a rating row on, and return their ids. A match result
    locks its ladder before its bots, so a change to a bot's standings (retiring it) takes the ladders'
    locks before the bot's, never the other way round."""
    ladder_ids = list(
        Rating.objects.filter(bot_id=bot_id)
        .order_by("ladder_id")
        .values_list("ladder_id", flat=True)
        .distinct()
    )
    list(
        Ladder.objects.select_for_update()
        .filter(pk__in=ladder_ids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    return ladder_ids


def board_bot_retired(*, bot_id: int, ladder_ids: Sequence[int]) -> None:
    """Take a retired bot off the boards of `ladder_ids` (locked by `board_lock_for_bot`, in the caller's
    transaction, before the bot's row was)."""
    rows = Rating.objects.filter(LISTED, bot_id=bot_id, ladder_id__in=ladder_ids).order_by("ladder_id")
    for ladder_id, rating_id in list(rows.values_list("ladder_id", "id")):
        board_place(ladder_id=ladder_id, rating_ids=[rating_id])


def board_clear(*, ladder_id: int) -> None:
    """Empty the ladder's board (a season closes: a bot is listed again once it plays in the new one)."""
    _locked_season(ladder_id)
    Rating.objects.filter(ladder_id=ladder_id).filter(LISTED | Q(leads_tier=True)).update(
        position=None, leads_tier=False
    )


def _place_one(ladder_id: int, season: int, rating_id: int) -> None:
    """Move one row to its place. Its stored `conservative` is its key until it is placed, so the other
    changed rows of the same match still wait, consistently, in their old places."""
    row = (
        Rating.objects.filter(pk=rating_id, ladder_id=ladder_id)
        .values("position", "mu", "sigma", "games", "season", "bot__active")
        .first()
    )
    if row is None:
        return
    old: int | None = row["position"]
    value = conservative(row["mu"], row["sigma"])
    if not (row["bot__active"] and row["games"] >= 1 and row["season"] == season):
        Rating.objects.filter(pk=rating_id).update(conservative=value, position=None, leads_tier=False)
        if old is not None:
            _shift(ladder_id, old + 1, None, -1)
            _retier(ladder_id, start=old, end=old - 1)
        return
    new = _new_position(ladder_id, rating_id, value, old)
    if old is None:
        _shift(ladder_id, new, None, 1)
        start, end = new, new
    elif new < old:
        _shift(ladder_id, new, old - 1, 1)
        start, end = new, old
    else:
        _shift(ladder_id, old + 1, new, -1)  # no row when new == old
        start, end = old, new
    Rating.objects.filter(pk=rating_id).update(conservative=value, position=new)
    _retier(ladder_id, start=start, end=end)


def _new_position(ladder_id: int, rating_id: int, value: float, old: int | None) -> int:
    """The row's place once moved: one after the last other listed row that comes before it (an older row
    with the same conservative rating, else the lowest row rated above it: each one index lookup)."""
    others = Rating.objects.filter(LISTED, ladder_id=ladder_id).exclude(pk=rating_id)
    above = (
        others.filter(conservative=value, id__lt=rating_id)
        .order_by("-id")
        .values_list("position", flat=True)
        .first()
    )
    if above is None:
        above = (
            others.filter(conservative__gt=value)
            .order_by("conservative", "-id")
            .values_list("position", flat=True)
            .first()
        )
    if above is None:
        return 1
    return above if old is not None and old < above else above + 1


def _shift(ladder_id: int, first: int, last: int | None, by: int) -> None:
    rows = Rating.objects.filter(ladder_id=ladder_id, position__gte=first)
    if last is not None:
        rows = rows.filter(position__lte=last)
    rows.update(position=F("position") + by)


@dataclass(frozen=True)
class _Leader:
    id: int
    position: int
    low: float
    high: float
    flagged: bool  # its stored leads_tier


def _leader(values: dict[str, Any] | None) -> _Leader | None:
    if values is None:
        return None
    low, high = rating_interval(values["mu"], values["sigma"])
    return _Leader(values["id"], values["position"], low, high, values["leads_tier"])


_LEADER_VALUES = ("id", "position", "mu", "sigma", "leads_tier")


def _retier(ladder_id: int, *, start: int, end: int) -> None:
    """Re-mark tier leaders after a change between positions `start` and `end`: rows above `start` keep
    their marks, and below `end` the rows are the ones that followed the change before it, in order."""
    listed = Rating.objects.filter(LISTED, ladder_id=ladder_id)
    above = listed.filter(leads_tier=True, position__lt=start).order_by("-position")
    leader = _leader(
        above.values(*_LEADER_VALUES).first() or listed.filter(position=1).values(*_LEADER_VALUES).first()
    )
    after = start - 1  # the rows above `start` are unchanged: those below the leader overlap it
    while leader is not None:
        if not leader.flagged:
            Rating.objects.filter(pk=leader.id).update(leads_tier=True)
        following = _next_leader(ladder_id, leader, after=max(after, leader.position))
        stale = listed.filter(leads_tier=True, position__gt=leader.position)
        if following is not None:
            stale = stale.filter(position__lt=following.position)
        stale.update(leads_tier=False)
        if following is None or (following.position > end and following.flagged):
            return
        leader = following


def _next_leader(ladder_id: int, leader: _Leader, *, after: int) -> _Leader | None:
    """The first row below position `after` (at or below `leader`, with every row between them in the
    leader's tier) whose interval does not overlap the leader's: `standing.place`'s rule,
    `high < leader low or low > leader high`, with the interval computed as `standing.rating_interval`
    computes it (mu -/+ Z_RATING * sigma, the same floating-point operations)."""
    outside = Q(high__lt=leader.low) | Q(low__gt=leader.high)
    row = (
        Rating.objects.filter(LISTED, ladder_id=ladder_id, position__gt=after)
        .annotate(low=F("mu") - Z_RATING * F("sigma"), high=F("mu") + Z_RATING * F("sigma"))
        .filter(outside)
        .order_by("position")
        .values(*_LEADER_VALUES)
        .first()
    )
    return _leader(row)


def _board_differences(ladder_id: int, season: int) -> tuple[list[Rating], list[str]]:
    """The ladder's rows whose board fields differ from `place` over its listed rows (as unsaved rows
    carrying the placed values), and a line naming each difference."""
    provisional_sigma = Ladder.objects.filter(pk=ladder_id).values_list("provisional_sigma", flat=True).get()
    rows = list(
        Rating.objects.filter(ladder_id=ladder_id)
        .order_by("id")
        .values_list("id", "bot_id", "mu", "sigma", "games", "season", "bot__active", *BOARD_FIELDS)
    )
    wanted: dict[int, tuple[float, int | None, bool]] = {
        r[0]: (conservative(r[2], r[3]), None, False) for r in rows
    }
    listed = [r for r in rows if r[6] and r[4] >= 1 and r[5] == season]
    previous_tier = 0
    skills = [(r[2], r[3]) for r in listed]
    for position, placed in enumerate(place(skills, provisional_sigma=provisional_sigma), start=1):
        wanted[listed[placed.index][0]] = (placed.conservative, position, placed.tier != previous_tier)
        previous_tier = placed.tier
    changed, lines = [], []
    for rating_id, bot_id, *_values, value, position, leads in rows:
        want = wanted[rating_id]
        if (value, position, leads) != want:
            lines.append(
                f"board of ladder {ladder_id} bot {bot_id}: (conservative, position, leads_tier) "
                f"{(value, position, leads)} -> {want}"
            )
            changed.append(Rating(pk=rating_id, conservative=want[0], position=want[1], leads_tier=want[2]))
    return changed, lines


def board_check(*, ladder_id: int) -> list[str]:
    """What differs between the ladder's maintained board and the board placed from scratch (read only)."""
    season = Ladder.objects.filter(pk=ladder_id).values_list("season", flat=True).get()
    return _board_differences(ladder_id, season)[1]


def board_rebuild(*, ladder_id: int) -> list[str]:
    """Place the ladder's board from scratch and write the rows that differ; the differences, as
    `board_check` names them. Its own transaction unless the caller's."""
    with transaction.atomic():
        season = _locked_season(ladder_id)
        changed, lines = _board_differences(ladder_id, season)
        Rating.objects.bulk_update(changed, list(BOARD_FIELDS), batch_size=1000)
    return lines
