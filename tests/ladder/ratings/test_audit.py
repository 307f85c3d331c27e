"""The audit from the match records: `ratings_audit` (and `ratings_recompute --check`) rebuilds every rating
from the DONE rated matches' records (ranks, forfeits, seasons, versions, resets) and names each difference
with the ledger and the rating rows, where a check from the ledger alone cannot see one.

The played ladders are made once for the module (`module_db`); each test's edits roll back after it. The
test that makes a ladder of its own runs first, before the shared ones exist (the audit's own snapshot,
outside a caller's transaction, is checked in test_concurrency.py)."""

from __future__ import annotations

import zlib
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from ladder.bots.versions import bot_version_set
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.matches.services import match_create, match_mark_running, match_record_result
from ladder.ratings import elo
from ladder.ratings.audit import ratings_audit
from ladder.ratings.models import Rating, RatingLedger
from ladder.ratings.seasons import season_close
from ladder.ratings.services import ratings_recompute
from ladder.replays.models import Replay
from tests.ladder.conftest import Field, field, make_record, play

pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("ratings-audit")]


def play_versions(ladder, bots, seed, versions):
    """A real match whose record carries each seat's reported version."""
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=seed)
    assert match_mark_running(match_id=match.pk)
    record = make_record(match)
    for seat, version in zip(record.seats, versions, strict=True):
        seat.version = version
    assert match_record_result(match_id=match.pk, record=record)
    return match


@pytest.fixture(scope="module")
def played(module_db) -> Field:
    """Two ladders, a season close, versions (one with "reset rating"), a practice match and a queued one."""
    played = field(5)
    ladder2, ladder4, user, bots = played
    bot_version_set(bot_id=bots[0].pk, user=user, name="2.0", reset_rating=True)
    for seed in range(1, 9):
        four = [bots[(seed + i) % 5] for i in range(4)]
        play(ladder4, four, seed)
        pair = [bots[seed % 5], bots[(seed + 2) % 5]]
        play_versions(ladder2, pair, seed + 100, ["1.0" if seed < 5 else "2.0", ""])
        if seed == 4:
            season_close(ladder_id=ladder2.pk)
    practice = play(ladder2, [bots[1], bots[2]], 990)
    Match.objects.filter(pk=practice.pk).update(rated=False)  # as a practice match: no ledger rows
    RatingLedger.objects.filter(match=practice).delete()
    ratings_recompute(write=True)
    match_create(ladder_id=ladder2.pk, bot_ids=[bots[0].pk, bots[1].pk], seed=999)  # queued
    return played


def kinds(report):
    return {d.kind for d in report.differences}


def check(*args):
    out = StringIO()
    try:
        call_command("ratings_recompute", "--check", *args, stdout=out)
    except CommandError:
        return False, out.getvalue()
    return True, out.getvalue()


def test_a_new_bot_with_a_reset_version_in_a_later_season_agrees_with_the_services(ladder2, make_bot, user):
    """The audit takes a seat's start exactly as `ratings_apply_match` does, season and reset included."""
    old = [make_bot(), make_bot()]
    play(ladder2, old, 11)
    season_close(ladder_id=ladder2.pk)
    newcomer = make_bot()
    bot_version_set(bot_id=newcomer.pk, user=user, name="r1", reset_rating=True)
    play_versions(ladder2, [newcomer, old[0]], 12, ["r1", ""])
    play_versions(ladder2, [old[1], newcomer], 13, ["", "r1"])
    report = ratings_audit()
    assert report.identical, [d.line() for d in report.differences]
    assert report.matches == 3


def test_records_ledger_and_ratings_agree(played):
    ladder2 = played.ladder2
    report = ratings_audit()
    assert report.identical, [d.line() for d in report.differences]
    assert report.matches == 16 and report.ledger_rows == 8 * 4 + 8 * 2
    assert RatingLedger.objects.filter(ladder=ladder2).values("season").distinct().count() == 2
    assert RatingLedger.objects.filter(ladder=ladder2, version="2.0").exists()
    ok, out = check()
    assert (
        ok
        and "audit from the match records: 16 matches replayed" in out
        and out.rstrip().endswith("identical")
    )
    assert ratings_audit(ladder_id=ladder2.pk).matches == 8


def forge_last_match(ladder):
    """Swap two ranks of the ladder's last rated match in the ledger and rewrite that match's after values
    to agree with them: a ledger that is consistent with itself (its last rows chain into nothing)."""
    match_id = (
        RatingLedger.objects.filter(ladder=ladder).order_by("-id").values_list("match_id", flat=True)[0]
    )
    rows = list(RatingLedger.objects.filter(match_id=match_id).order_by("seat"))
    first = next(r for r in rows if r.rank == 1)
    other = next(r for r in rows if r.rank != 1)
    first.rank, other.rank = other.rank, 1
    before = [elo.SeatRating(r.elo_before, r.mu_before, r.sigma_before) for r in rows]
    after = elo.rate_match(before, [r.rank for r in rows], ladder.params)
    for row, new in zip(rows, after, strict=True):
        RatingLedger.objects.filter(pk=row.pk).update(  # behind the model's back
            rank=row.rank, elo_after=new.elo, mu_after=new.mu, sigma_after=new.sigma
        )
    return first


def test_an_edited_rank_is_caught_after_a_plain_recompute(played):
    ladder4 = played.ladder4
    row = forge_last_match(ladder4)
    call_command("ratings_recompute", stdout=StringIO())  # rebuilt from the edited ledger
    assert ratings_recompute(write=False).identical  # the ledger alone sees nothing
    ok, out = check()
    assert not ok
    where = f"ladder {ladder4.pk} match {row.match_id} bot {row.bot_id}"
    assert f"ledger_field: {where}: rank {row.rank} in the ledger, 1 in the record" in out
    assert f"ledger_value: {where}: ledger != rebuilt: elo_after" in out
    assert {"ledger_field", "ledger_value", "rating"} == kinds(ratings_audit())


def test_a_deleted_ledger_row_is_caught(played):
    ladder2 = played.ladder2
    row = RatingLedger.objects.filter(ladder=ladder2).order_by("-id").first()
    RatingLedger.objects.filter(pk=row.pk).delete()
    report = ratings_audit()
    missing = [d for d in report.differences if d.kind == "ledger_missing"]
    assert [(d.match_id, d.bot_id) for d in missing] == [(row.match_id, row.bot_id)]
    ok, out = check()  # the ledger alone cannot even be replayed: a 2-seat match with one row
    assert not ok and f"match {row.match_id}: its ledger rows cannot be replayed" in out
    assert f"ledger_missing: ladder {ladder2.pk} match {row.match_id} bot {row.bot_id}" in out


def test_a_match_with_no_ledger_rows_is_caught(played):
    ladder2 = played.ladder2
    match = Match.objects.filter(ladder=ladder2, status=MatchStatus.DONE, rated=True).order_by("id").first()
    RatingLedger.objects.filter(match=match).delete()
    report = ratings_audit()
    assert {(d.kind, d.match_id) for d in report.differences if d.kind == "ledger_missing"} == {
        ("ledger_missing", match.pk)
    }


def ledger_row(template, **changes):
    values = {f.attname: getattr(template, f.attname) for f in RatingLedger._meta.concrete_fields}
    values.pop("id")
    values.update(changes)
    return RatingLedger.objects.bulk_create([RatingLedger(**values)])[0]


def test_a_row_for_a_match_that_does_not_exist_is_caught(played):
    ladder2 = played.ladder2
    template = RatingLedger.objects.filter(ladder=ladder2).order_by("id").first()
    ghost = ledger_row(template, match_id=987654)  # foreign keys are checked at commit
    try:
        report = ratings_audit()
        ok, out = check()
    finally:
        RatingLedger.objects.filter(pk=ghost.pk).delete()
    orphans = [d for d in report.differences if d.kind == "ledger_orphan"]
    assert len(orphans) == 1 and orphans[0].match_id == 987654 and "does not exist" in orphans[0].detail
    assert not ok and "match 987654" in out


def test_rows_for_unfinished_and_unrated_matches_are_caught(played):
    ladder2 = played.ladder2
    template = RatingLedger.objects.filter(ladder=ladder2).order_by("id").first()
    queued = Match.objects.get(status=MatchStatus.QUEUED)
    practice = Match.objects.get(rated=False)
    ledger_row(template, match_id=queued.pk)
    ledger_row(template, match_id=practice.pk, created_at=timezone.now())
    details = {d.match_id: d.detail for d in ratings_audit().differences if d.kind == "ledger_orphan"}
    assert "QUEUED, not DONE" in details[queued.pk] and "unrated" in details[practice.pk]


def test_a_seat_row_that_disagrees_with_its_record_is_caught(played):
    ladder4 = played.ladder4
    seat = Seat.objects.filter(match__ladder=ladder4, rank=1).order_by("id").first()
    Seat.objects.filter(pk=seat.pk).update(rank=3)
    report = ratings_audit()
    assert [(d.kind, d.match_id, d.bot_id) for d in report.differences] == [
        ("record", seat.match_id, seat.bot_id)
    ]


def test_an_unreadable_record_falls_back_to_the_seat_rows(played):
    ladder4 = played.ladder4
    match = Match.objects.filter(ladder=ladder4, status=MatchStatus.DONE).order_by("id").first()
    Replay.objects.filter(match=match).update(data=zlib.compress(b"{not json"))
    report = ratings_audit()
    assert [(d.kind, d.match_id) for d in report.differences] == [("record", match.pk)]
    assert "cannot be read" in report.differences[0].detail


def test_an_edited_rating_row_is_named(played):
    ladder2 = played.ladder2
    rating = Rating.objects.filter(ladder=ladder2, games__gt=0).order_by("id").first()
    Rating.objects.filter(pk=rating.pk).update(wins=rating.games + 5)
    lines = [d.line() for d in ratings_audit().differences]
    assert lines == [
        f"rating: ladder {ladder2.pk} bot {rating.bot_id}: stored -> rebuilt: wins {rating.games + 5} -> {rating.wins}"
    ]


def test_check_refuses_an_unknown_ladder(played):
    with pytest.raises(CommandError, match="no ladder with id 424242"):
        call_command("ratings_recompute", "--check", "--ladder", "424242", stdout=StringIO())
    with pytest.raises(CommandError, match="--ladder goes with --check"):
        call_command("ratings_recompute", "--ladder", "1", stdout=StringIO())
