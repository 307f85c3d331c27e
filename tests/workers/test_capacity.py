"""The workers' measured room: reports through the registry, the headroom read from them, and matchmaking
holding tables back (never starting them at a clock the server cannot keep) when the workers' threads are
taken, a search pool is behind, or a bot's gateway is not admitting at normal speed."""

from __future__ import annotations

import random
import time

import pytest
from prometheus_client import generate_latest

from engine_service.gateway.registry import CapacityReport, SqliteRegistry
from engine_service.referee.search_pool import SearchPool
from ladder.core import metrics
from ladder.ladders.capacity import held_tables
from ladder.ladders.services import ladder_create
from ladder.matches.models import Match
from tests.workers.test_matchmaking import connect
from workers import capacity, matchmaking


def report(threads: int, busy: int, *, waiting: int = 0, longest: float = 0.0) -> dict[str, float]:
    return {
        "threads": threads,
        "busy": busy,
        "search_processes": 2,
        "search_waiting": waiting,
        "search_longest_wait": longest,
    }


def live(payload: dict[str, float]) -> CapacityReport:
    return CapacityReport("w", payload, time.time() + 5, time.time())


def test_headroom_sums_free_threads_less_queued_and_names_a_search_pool_behind() -> None:
    assert not capacity.headroom({}, queued=3).known  # no worker reports: unknown, configured limits only
    room = capacity.headroom({"a": live(report(4, 1)), "b": live(report(2, 2))}, queued=1)
    ahead = capacity.QUEUE_AHEAD_PER_WORKER
    assert room.free_threads == 3 + 2 * ahead - 1 and room.search_behind is None
    assert capacity.headroom({"a": live(report(1, 0))}, queued=1 + ahead + 4).free_threads == 0
    slow = capacity.headroom({"a": live(report(4, 0, longest=2.5))}, queued=0)
    assert slow.search_behind is not None and "2.5s" in slow.search_behind
    deep = capacity.headroom({"a": live(report(4, 0, waiting=3))}, queued=0)
    assert deep.search_behind is not None and "3 decisions waiting" in deep.search_behind


def test_a_worker_reports_its_room_and_the_report_lapses_when_it_stops(tmp_path) -> None:
    reg = SqliteRegistry(tmp_path / "r.sqlite3")
    with capacity.occupied():
        payload = capacity.report(8, SearchPool(2))
    assert payload["threads"] == 8 and payload["busy"] == 1 and payload["search_processes"] == 2
    assert capacity.busy_threads() == 0
    reg.report_capacity(capacity.KIND, "w1", payload, time.time() + 5)
    reg.report_capacity(capacity.KIND, "w2", payload, time.time() - 1)  # a claim that lapsed
    assert list(reg.capacity_reports(capacity.KIND)) == ["w1"]
    assert reg.capacity_reports("other") == {}


@pytest.mark.django_db(transaction=True)
def test_tables_past_the_workers_free_threads_wait_and_are_shown_waiting(
    registry, sent, make_bot, monkeypatch
):
    monkeypatch.setattr("ladder.ladders.capacity.registry", lambda: registry)
    monkeypatch.setattr(metrics, "registry", lambda: registry)
    ladder_create(game_id="expedition-v1", num_players=2, slug="duels", house_bots_allowed=False)
    ahead = capacity.QUEUE_AHEAD_PER_WORKER
    for _ in range(2 * (ahead + 1)):
        connect(registry, make_bot(max_concurrent=1), capacity=1)
    registry.report_capacity(capacity.KIND, "w1", report(1, 1), time.time() + 5)  # its one thread busy
    created = matchmaking.matchmake(rng=random.Random(1))
    assert len(created["duels"]) == ahead  # tables planned for every bot; room for the queue ahead only
    held = held_tables()
    assert held.per_ladder == {"duels": 1} and "every worker thread is busy or promised" in held.reasons
    scraped = generate_latest(metrics.REGISTRY).decode()
    assert 'caravanserai_tables_waiting_for_capacity{ladder="duels"} 1.0' in scraped
    assert 'caravanserai_worker_free_threads{worker="w1"} 0.0' in scraped
    registry.report_capacity(capacity.KIND, "w1", report(8, 1), time.time() + 5)
    assert len(matchmaking.matchmake(rng=random.Random(2))["duels"]) == 1  # the last table, now
    assert held_tables().per_ladder == {}


@pytest.mark.django_db(transaction=True)
def test_no_search_seat_while_a_search_pool_is_behind(registry, sent, make_bot, house_bots):
    ladder_create(game_id="expedition-v1", num_players=4, slug="fours")
    searching = matchmaking.searching_house_bots()
    for _ in range(2):
        connect(registry, make_bot(max_concurrent=2), capacity=2)
    registry.report_capacity(capacity.KIND, "w1", report(32, 0, longest=3.0), time.time() + 5)
    for seed in range(4):
        matchmaking.matchmake(rng=random.Random(seed))
    assert Match.objects.exists()  # tables went on with house bots that do not search
    assert matchmaking.search_seats_in_flight(searching) == 0


@pytest.mark.django_db(transaction=True)
def test_a_bot_whose_gateway_is_not_admitting_gets_no_table_until_it_is(
    registry, sent, make_bot, monkeypatch
):
    ladder_create(game_id="expedition-v1", num_players=2, slug="duels", house_bots_allowed=False)
    for _ in range(2):
        connect(registry, make_bot(max_concurrent=1), capacity=1)
    monkeypatch.setattr(matchmaking, "_not_admitting_since", {})
    clock = [time.time()]
    monkeypatch.setattr(matchmaking.time, "time", lambda: clock[0])
    registry.report_admission("gw-1", "127.0.0.1:1", 0.0)  # its loop stalled, or it is draining
    assert matchmaking.gateways_not_admitting() == set()  # seen once: a moment's stall is not slow
    clock[0] += matchmaking.SLOW_GATEWAY_SECONDS
    assert matchmaking.matchmake(rng=random.Random(1)) == {}  # still not admitting a run later
    assert not Match.objects.exists()
    registry.report_admission("gw-1", "127.0.0.1:1", clock[0] + 1)
    assert len(matchmaking.matchmake(rng=random.Random(1))["duels"]) == 1


@pytest.mark.django_db(transaction=True)
def test_when_threads_are_scarce_a_newcomers_ladder_is_served_first(registry, sent, make_bot, monkeypatch):
    from ladder.matches.models import MatchStatus
    from ladder.matches.services import match_create
    from ladder.ratings.models import Rating

    monkeypatch.setattr(capacity, "QUEUE_AHEAD_PER_WORKER", 1)
    settled_ladder = ladder_create(
        game_id="expedition-v1", num_players=2, slug="settled", house_bots_allowed=False
    )
    fresh_ladder = ladder_create(game_id="voyages-v1", num_players=2, slug="fresh", house_bots_allowed=False)
    settled = [make_bot(max_concurrent=1) for _ in range(2)]
    fresh = [make_bot(max_concurrent=1, games=("voyages-v1",)) for _ in range(2)]
    for bot in settled:
        Rating.objects.create(ladder=settled_ladder, bot=bot, elo=1500, mu=25, sigma=2, games=50)
    # the settled ladder waited longest (its latest match is older): without newcomers it would go first
    for ladder, bots in ((settled_ladder, settled), (fresh_ladder, fresh)):
        match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots])
    Match.objects.update(status=MatchStatus.DONE)
    for bot in settled:
        connect(registry, bot, capacity=1)
    for bot in fresh:
        connect(registry, bot, capacity=1, games=("voyages-v1",))
    registry.report_capacity(capacity.KIND, "w1", report(1, 1), time.time() + 5)  # room for one table
    assert list(matchmaking.matchmake(rng=random.Random(3))) == ["fresh"]
    assert registry.capacity_reports("matchmaking")["matchmaking"].payload["held"] == {"settled": 1}
