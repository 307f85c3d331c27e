"""Why a match ended is stored as the referee says it: the match's reason (forfeit, resigned, disconnect,
else how the game ended) and each seat's, so a forfeited match no longer reads "turn_cap"; records made
before per-seat reasons fall back to the game's reason. A bot revoked has its matches not yet started
cancelled, never forfeited."""

from __future__ import annotations

import pytest

from engine_service.policies import make_policy
from engine_service.referee import DecisionRequest, HouseSeat, MatchRecord, Seat, SeatFault, run_match
from ladder.bots.services import bot_token_rotate
from ladder.matches.models import MatchStatus
from ladder.matches.services import match_create, match_mark_running, match_record_result

pytestmark = pytest.mark.django_db


class Silent(Seat):
    """A bot that never answers in time."""

    name = "silent"
    kind = "remote"

    def decide(self, request: DecisionRequest) -> str:
        raise SeatFault("timeout", "no answer within the deadline")


def _played(ladder, bots, seats) -> tuple:
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=21)
    assert match_mark_running(match_id=match.pk)
    record = run_match(ladder.game_id, ladder.num_players, match.seed, seats, ladder.options)
    record.match_id = str(match.pk)
    return match, record


def test_a_forfeit_is_stored_as_the_matchs_and_the_seats_end(ladder2, make_bot, api):
    bots = [make_bot(name="Marco"), make_bot(name="Silent")]
    match, record = _played(ladder2, bots, [HouseSeat(make_policy("greedy", seed=1)), Silent()])
    assert match_record_result(match_id=match.pk, record=record)
    match.refresh_from_db()
    assert match.end_reason == "forfeit"
    assert [s.end_reason for s in match.seats.order_by("index")] == [
        record.result["game"]["reason"],
        "forfeit",
    ]
    body = api.get(f"/api/v1/matches/{match.pk}/").json()
    assert [s["end_reason"] for s in body["seats"]][1] == "forfeit"


def test_an_old_record_without_per_seat_reasons_keeps_the_games_reason(ladder2, make_bot):
    bots = [make_bot(name="Marco"), make_bot(name="Maffeo")]
    seats = [HouseSeat(make_policy("random", seed=i)) for i in range(2)]
    match, record = _played(ladder2, bots, seats)
    old = MatchRecord.from_json(record.to_json())
    assert old.result is not None
    for key in ("reason", "end_seat", "end_reasons"):
        old.result.pop(key, None)
    assert match_record_result(match_id=match.pk, record=old)
    match.refresh_from_db()
    assert match.end_reason == record.result["game"]["reason"]
    assert {s.end_reason for s in match.seats.all()} == {record.result["game"]["reason"]}


@pytest.mark.django_db(transaction=True)  # the signal is sent on commit
def test_revoking_a_bot_cancels_its_matches_not_yet_started(ladder2, make_bot, user):
    marco, maffeo = make_bot(name="Marco"), make_bot(name="Maffeo")
    queued = match_create(ladder_id=ladder2.pk, bot_ids=[marco.pk, maffeo.pk], seed=1)
    running = match_create(ladder_id=ladder2.pk, bot_ids=[maffeo.pk, marco.pk], seed=2)
    assert match_mark_running(match_id=running.pk)
    bot_token_rotate(bot_id=marco.pk, user=user)
    queued.refresh_from_db()
    running.refresh_from_db()
    assert queued.status == MatchStatus.CANCELLED and "token was revoked" in queued.error
    assert running.status == MatchStatus.RUNNING  # a running match deals with the disconnect itself


def test_the_version_a_seat_reported_reaches_its_rating(ladder2, make_bot):
    from ladder.bots.models import BotVersion
    from ladder.ratings.models import RatingLedger

    bots = [make_bot(name="Marco"), make_bot(name="Maffeo")]
    seats = [HouseSeat(make_policy("random", seed=i)) for i in range(2)]
    match, record = _played(ladder2, bots, seats)
    record.seats[0].version = "v3.1"
    assert match_record_result(match_id=match.pk, record=record)
    assert RatingLedger.objects.get(match=match, bot=bots[0]).version == "v3.1"
    assert RatingLedger.objects.get(match=match, bot=bots[1]).version == ""
    assert BotVersion.objects.filter(bot=bots[0], name="v3.1").exists()
