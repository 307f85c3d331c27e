"""Match services: creation rules, the status machine, recording a result exactly once, failures."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import override_settings

from ladder.matches.house import house_match_play
from ladder.matches.incidents import SERVER_INCIDENT, Incident, match_incident_summary, match_incidents
from ladder.matches.models import Match, MatchStatus
from ladder.matches.services import (
    match_cancel,
    match_create,
    match_mark_running,
    match_record_infrastructure_failure,
    match_record_result,
)
from ladder.ratings.models import Rating, RatingLedger
from ladder.replays.models import Replay
from tests.ladder.conftest import make_record

pytestmark = pytest.mark.django_db


def test_create_queues_with_seats_in_order(ladder4, make_bot):
    bots = [make_bot() for _ in range(4)]
    match = match_create(ladder_id=ladder4.pk, bot_ids=[b.pk for b in reversed(bots)], seed=42)
    assert match.status == MatchStatus.QUEUED and match.seed == 42 and match.queued_at
    assert [s.bot_id for s in match.seats.order_by("index")] == [b.pk for b in reversed(bots)]
    assert Rating.objects.filter(ladder=ladder4).count() == 4


def test_create_draws_a_seed(ladder2, make_bot):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk])
    assert 0 <= match.seed < 2**63


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("wrong_count", "seats 2 bots, got 3"),
        ("duplicate", "only one seat"),
        ("unknown_bot", "no bot with id 999999"),
        ("bad_seed", "seed must be"),
        ("unknown_ladder", "no ladder with id"),
        ("retired", "is retired"),
        ("wrong_game", "does not play expedition-v1"),
    ],
)
def test_create_rejects(case, message, ladder2, make_bot, user):
    from ladder.bots.services import bot_retire

    a, b = make_bot(), make_bot()
    kwargs = {"ladder_id": ladder2.pk, "bot_ids": [a.pk, b.pk], "seed": 1}
    if case == "wrong_count":
        kwargs["bot_ids"] = [a.pk, b.pk, make_bot().pk]
    elif case == "duplicate":
        kwargs["bot_ids"] = [a.pk, a.pk]
    elif case == "unknown_bot":
        kwargs["bot_ids"] = [a.pk, 999999]
    elif case == "bad_seed":
        kwargs["seed"] = -5
    elif case == "unknown_ladder":
        kwargs["ladder_id"] = 999999
    elif case == "retired":
        bot_retire(bot_id=b.pk, user=user)
    elif case == "wrong_game":
        b.games = ["some-other-v1"]
        b.save()
    with pytest.raises(ValidationError, match=message):
        match_create(**kwargs)
    assert not Match.objects.exists()


def test_house_bots_only_where_allowed(ladder2, house_bots, make_bot):
    ladder2.house_bots_allowed = False
    ladder2.save()
    with pytest.raises(ValidationError, match="does not seat house bots"):
        match_create(ladder_id=ladder2.pk, bot_ids=[house_bots[0].pk, make_bot().pk], seed=1)


def test_mark_running_transitions(ladder2, make_bot):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=3)
    assert match_mark_running(match_id=match.pk)
    assert match_mark_running(match_id=match.pk)  # a redelivered task after a lost worker may restart it
    match.refresh_from_db()
    assert (match.status, match.attempts) == (MatchStatus.RUNNING, 2)
    assert match_record_result(match_id=match.pk, record=make_record(match))
    assert not match_mark_running(match_id=match.pk)
    match.refresh_from_db()
    assert (match.status, match.attempts) == (MatchStatus.DONE, 2)


@override_settings(LADDER_MATCH_MAX_ATTEMPTS=2)
def test_mark_running_gives_up_after_max_attempts(ladder2, make_bot):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=3)
    assert match_mark_running(match_id=match.pk)
    assert match_mark_running(match_id=match.pk)
    assert not match_mark_running(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == MatchStatus.ERROR and "gave up after 2 attempts" in match.error


def test_record_result_writes_everything_once(ladder4, make_bot):
    bots = [make_bot() for _ in range(4)]
    match = match_create(ladder_id=ladder4.pk, bot_ids=[b.pk for b in bots], seed=11)
    match_mark_running(match_id=match.pk)
    record = make_record(match)
    assert match_record_result(match_id=match.pk, record=record)
    match.refresh_from_db()
    assert match.status == MatchStatus.DONE and match.steps == record.steps and match.finished_at
    seats = list(match.seats.order_by("index"))
    assert [s.rank for s in seats] == record.result["ranks"]
    assert [s.score for s in seats] == record.result["game"]["scores"]
    replay = Replay.objects.get(match=match)
    assert replay.record().to_json() == record.to_json()
    assert replay.compressed_size < replay.raw_size
    assert RatingLedger.objects.filter(match=match).count() == 4
    snapshot = list(Rating.objects.order_by("id").values())
    # Redelivery: no change at all.
    assert not match_record_result(match_id=match.pk, record=record)
    assert RatingLedger.objects.filter(match=match).count() == 4
    assert list(Rating.objects.order_by("id").values()) == snapshot
    winner = Rating.objects.get(bot_id=seats[record.result["ranks"].index(1)].bot_id)
    assert winner.games == 1 and winner.wins == 1 and winner.elo > ladder4.elo_start


def test_record_result_stores_faults_and_forfeits(ladder2, make_bot):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=5)
    record = make_record(match)
    from engine_service.referee import Fault

    # A record whose seat 1 faulted is still verifiable: faults do not change the action log.
    record.faults = [
        Fault(1, 3, "timeout", "answered after 7.00s with the time bank spent", fallback_action="pass")
    ]
    assert match_record_result(match_id=match.pk, record=record)
    seat = match.seats.get(index=1)
    assert seat.faults == [
        {
            "step": 3,
            "kind": "timeout",
            "reason": "answered after 7.00s with the time bank spent",
            "action_id": None,
            "fallback_action": "pass",
            "forfeit": False,
        }
    ]


@pytest.mark.parametrize("tamper", ["seed", "game", "players", "no_result", "actions", "ranks"])
def test_record_that_does_not_fit_changes_nothing(tamper, ladder2, make_bot):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=8)
    match_mark_running(match_id=match.pk)
    record = make_record(match)
    if tamper == "seed":
        record.seed += 1
    elif tamper == "game":
        record.game_id = "voyages-v1"
    elif tamper == "players":
        record.num_players = 3
    elif tamper == "no_result":
        record.result = None
    elif tamper == "actions":
        record.actions = record.actions[:-5]
    elif tamper == "ranks":
        record.result = {**record.result, "ranks": [1, 7]}
    with pytest.raises(ValidationError):
        match_record_result(match_id=match.pk, record=record)
    match.refresh_from_db()
    assert match.status == MatchStatus.RUNNING
    assert not RatingLedger.objects.exists() and not Replay.objects.exists()
    assert match.seats.filter(rank__isnull=False).count() == 0


def test_a_malformed_result_is_refused_with_the_field_named(ladder2, make_bot):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=8)
    match_mark_running(match_id=match.pk)
    record = make_record(match)
    record.result = {**record.result, "end_reasons": ["completed"]}
    with pytest.raises(ValidationError, match="unusable result: result end_reasons"):
        match_record_result(match_id=match.pk, record=record)
    match.refresh_from_db()
    assert match.status == MatchStatus.RUNNING and not Replay.objects.exists()


def test_infrastructure_failure_retries_then_errors(ladder2, make_bot, settings):
    settings.LADDER_MATCH_MAX_ATTEMPTS = 2
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=9)
    match_mark_running(match_id=match.pk)
    match_record_infrastructure_failure(match_id=match.pk, reason="worker lost", retry=True)
    match.refresh_from_db()
    assert match.status == MatchStatus.QUEUED and "worker lost" in match.error
    assert "played again from the start" in match_incident_summary(match=match)
    match_mark_running(match_id=match.pk)
    match_record_infrastructure_failure(match_id=match.pk, reason="gateway restarted", retry=True)
    match.refresh_from_db()
    assert match.status == MatchStatus.ERROR and "gateway restarted" in match.error
    assert match.end_reason == SERVER_INCIDENT
    assert match_incidents(match=match) == [Incident(1, "worker lost"), Incident(2, "gateway restarted")]
    assert match_incident_summary(match=match).startswith(
        "Server incident: stopped by our infrastructure 2 times"
    )
    assert not RatingLedger.objects.exists()
    assert not match_record_result(match_id=match.pk, record=make_record(match))


def test_infrastructure_failure_leaves_finished_matches_alone(ladder2, make_bot):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=9)
    match_record_result(match_id=match.pk, record=make_record(match))
    match_record_infrastructure_failure(match_id=match.pk, reason="late failure", retry=False)
    match.refresh_from_db()
    assert match.status == MatchStatus.DONE and match.error == ""
    with pytest.raises(ValidationError, match="needs a reason"):
        match_record_infrastructure_failure(match_id=match.pk, reason=" ", retry=False)


def test_cancel(ladder2, make_bot):
    match = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=9)
    assert match_cancel(match_id=match.pk)
    assert not match_mark_running(match_id=match.pk)
    assert not match_record_result(match_id=match.pk, record=make_record(match))
    assert not match_cancel(match_id=match.pk)


def test_house_match_play(ladder4, quick_house_bots):
    match = match_create(ladder_id=ladder4.pk, bot_ids=[b.pk for b in quick_house_bots[:4]], seed=21)
    assert house_match_play(match_id=match.pk)
    assert not house_match_play(match_id=match.pk)
    match.refresh_from_db()
    assert match.status == MatchStatus.DONE and match.replay.steps == match.steps
