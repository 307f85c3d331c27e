"""Matchmaking over a real session registry (the embedded SQLite one): only connected bots with free
capacity are seated, house bots fill seats only where a ladder allows it, capacity is shared across ladders
and counts matches already queued, and every match is queued with `run_match` on commit."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest

from engine_service.gateway.registry import SessionInfo, SqliteRegistry
from ladder.bots.services import bot_retire
from ladder.ladders.services import ladder_create
from ladder.matches.models import Match, MatchStatus
from ladder.matches.practice import practice_match_request
from ladder.ratings.models import Rating
from workers import matchmaking

pytestmark = pytest.mark.django_db(transaction=True)


def connect(registry: SqliteRegistry, bot, capacity: int = 1, games=("expedition-v1",)) -> None:
    now = time.time()
    session = SessionInfo(
        session_id=f"s-{bot.pk}",
        bot_id=str(bot.pk),
        bot_name=bot.name,
        gateway_id="gw-1",
        relay_address="127.0.0.1:1",
        games=tuple(games),
        capacity=capacity,
        matches=0,
        connected_at=now,
        heartbeat_at=now,
    )
    registry.register(session)
    registry.heartbeat("gw-1", "127.0.0.1:1", [session.session_id])


def seats_of(match_ids):
    return [
        list(Match.objects.get(pk=m).seats.order_by("index").values_list("bot_id", flat=True))
        for m in match_ids
    ]


def test_online_bots_with_capacity_are_paired(registry, sent, make_bot):
    ladder = ladder_create(game_id="expedition-v1", num_players=2, house_bots_allowed=False)
    a, b, c, offline = make_bot(), make_bot(), make_bot(), make_bot()
    for bot in (a, b, c):
        connect(registry, bot, capacity=1)
    created = matchmaking.matchmake(rng=random.Random(1))
    assert list(created) == [ladder.slug] and len(created[ladder.slug]) == 1  # the third bot has nobody left
    assert sent == created[ladder.slug]
    (seats,) = seats_of(sent)
    assert set(seats) < {a.pk, b.pk, c.pk} and offline.pk not in seats
    # the two seated bots are busy now (QUEUED counts): nothing more until a match ends
    assert matchmaking.matchmake(rng=random.Random(2)) == {}


def test_house_bots_fill_seats_only_where_allowed(registry, sent, make_bot, house_bots):
    with_house = ladder_create(game_id="expedition-v1", num_players=3, slug="with-house")
    ladder_create(game_id="expedition-v1", num_players=3, slug="no-house", house_bots_allowed=False)
    lone = make_bot(max_concurrent=2)
    connect(registry, lone, capacity=2)
    created = matchmaking.matchmake(rng=random.Random(3))
    assert list(created) == [with_house.slug] and len(created[with_house.slug]) == 2
    house_ids = {b.pk for b in house_bots}
    for seats in seats_of(created[with_house.slug]):
        assert lone.pk in seats and set(seats) - {lone.pk} <= house_ids


def test_bots_that_do_not_fit_are_left_out(registry, sent, make_bot):
    ladder_create(game_id="expedition-v1", num_players=2, house_bots_allowed=False)
    a, b = make_bot(), make_bot()
    connect(registry, a)
    connect(registry, b)
    bot_retire(bot_id=b.pk)
    assert matchmaking.matchmake(rng=random.Random(4)) == {}
    c = make_bot()
    connect(registry, c, games=("dragonda-v1",))  # connected, but not for this ladder's game
    assert matchmaking.matchmake(rng=random.Random(5)) == {}


def test_capacity_is_shared_across_ladders_and_queued_matches_count(registry, sent, make_bot):
    ladder_create(game_id="expedition-v1", num_players=2, house_bots_allowed=False)
    ladder_create(game_id="expedition-v1", num_players=3, house_bots_allowed=False)
    bots = [make_bot(max_concurrent=2) for _ in range(3)]
    for bot in bots:
        connect(registry, bot, capacity=5)  # more than registered: the bot's max_concurrent wins
    created = matchmaking.matchmake(rng=random.Random(6))
    assert (
        Match.objects.filter(status=MatchStatus.QUEUED).count()
        == len(sent)
        == sum(map(len, created.values()))
    )
    in_flight = matchmaking.in_flight([b.pk for b in bots])
    assert all(1 <= in_flight[b.pk] <= 2 for b in bots)  # within the bot's max_concurrent, not the stream's
    assert 2 in in_flight.values()  # a bot playing both ladders has a match on each
    assert matchmaking.matchmake(rng=random.Random(7)) == {}


def test_a_ladder_with_duplicate_sets_plays_one_seed_per_rotation(registry, sent, make_bot):
    ladder_create(game_id="expedition-v1", num_players=2, house_bots_allowed=False, duplicate_sets=True)
    a, b = make_bot(max_concurrent=2), make_bot(max_concurrent=2)
    connect(registry, a, capacity=2)
    connect(registry, b, capacity=2)
    created = matchmaking.matchmake(rng=random.Random(8))
    (ids,) = created.values()
    matches = [Match.objects.get(pk=m) for m in ids]
    assert len(matches) == 2 and matches[0].seed == matches[1].seed
    assert seats_of(ids)[0] == list(reversed(seats_of(ids)[1]))


def test_practice_matches_are_sent_once_each_when_their_bot_has_room(registry, sent, make_bot, user):
    bot = make_bot(owner=user, name="Marco", max_concurrent=2)
    first, second = (
        practice_match_request(user=user, bot_id=bot.pk, game_id="expedition-v1", options={}, opponents=[p])
        for p in ("greedy", "random")
    )
    assert matchmaking.send_practice_matches() == []  # its bot is not connected: they wait, NEW
    connect(registry, bot, capacity=2)
    assert matchmaking.send_practice_matches() == [first.pk, second.pk]
    assert matchmaking.send_practice_matches() == []  # sent: the next pass leaves them alone
    assert sent == [first.pk, second.pk]
    assert set(Match.objects.values_list("status", flat=True)) == {MatchStatus.QUEUED}


def test_a_ladder_never_matched_holds_its_bots_free_seats_until_it_fills_a_table(registry, sent, make_bot):
    pairs = ladder_create(game_id="expedition-v1", num_players=2, house_bots_allowed=False, slug="pairs")
    triples = ladder_create(game_id="expedition-v1", num_players=3, house_bots_allowed=False, slug="triples")
    a, b, c, d = (make_bot() for _ in range(4))
    connect(registry, a, capacity=1)
    connect(registry, b, capacity=1)
    assert list(matchmaking.matchmake(rng=random.Random(9))) == [pairs.slug]  # triples cannot seat 3 yet
    connect(registry, c, capacity=1)
    connect(registry, d, capacity=1)
    # c and d are free, enough for `pairs`, but `triples` was never matched: it keeps them for itself
    assert matchmaking.matchmake(rng=random.Random(10)) == {}
    Match.objects.filter(ladder=pairs).update(status=MatchStatus.DONE)
    created = matchmaking.matchmake(rng=random.Random(11))
    assert list(created) == [triples.slug] and len(created[triples.slug]) == 1


def test_a_bot_playing_several_ladders_never_has_all_its_slots_on_one(registry, sent, make_bot, house_bots):
    slow = ladder_create(game_id="expedition-v1", num_players=2, slug="slow")
    ladder_create(game_id="voyages-v1", num_players=3, slug="long")
    bot = make_bot(max_concurrent=3, games=["expedition-v1", "voyages-v1"])
    connect(registry, bot, capacity=3, games=("expedition-v1", "voyages-v1"))
    for seed in range(4):
        matchmaking.matchmake(rng=random.Random(seed))
    on_ladder = matchmaking.in_flight_by_ladder([bot.pk])
    assert on_ladder[(bot.pk, slow.pk)] == 2  # capacity 3 less the one slot kept for its other ladder
    assert sum(on_ladder.values()) == 3


def test_searching_house_seats_wait_for_room_in_the_search_pools(
    registry, sent, make_bot, house_bots, monkeypatch
):
    monkeypatch.setattr(matchmaking, "SETTINGS", replace(matchmaking.SETTINGS, search_seats=2))
    ladder = ladder_create(game_id="expedition-v1", num_players=4, slug="fours")
    searching = matchmaking.searching_house_bots()
    assert searching == {b.pk for b in house_bots if b.house_policy.startswith("mcts")}
    bots = [make_bot(max_concurrent=4) for _ in range(3)]
    for bot in bots:
        Rating.objects.create(ladder=ladder, bot=bot, elo=1500, mu=25, sigma=2, games=50)  # settled
        connect(registry, bot, capacity=4)
    for seed in range(3):
        matchmaking.matchmake(rng=random.Random(seed))
    assert matchmaking.search_seats_in_flight(searching) <= 2
    assert Match.objects.count() > 0  # tables went on with the house bots that do not search
    Match.objects.update(status=MatchStatus.DONE)  # the pools have room again
    matchmaking.matchmake(rng=random.Random(9))
    assert 0 < matchmaking.search_seats_in_flight(searching) <= 2


def test_a_newcomer_meets_fast_opponents_and_a_settled_bot_any(registry, sent, make_bot, house_bots):
    ladder = ladder_create(game_id="expedition-v1", num_players=2, slug="duels")
    settled, newcomer = make_bot(max_concurrent=1), make_bot(max_concurrent=1)
    Rating.objects.create(ladder=ladder, bot=settled, elo=1500, mu=25, sigma=2, games=50)
    searching = matchmaking.searching_house_bots()
    met: dict[int, set[int]] = {}
    for bot in (newcomer, settled):
        connect(registry, bot, capacity=1)
        for seed in range(12):
            matchmaking.matchmake(rng=random.Random(seed))
            match = Match.objects.filter(seats__bot=bot).latest("id")
            met.setdefault(bot.pk, set()).update(s.bot_id for s in match.seats.exclude(bot=bot))
            Match.objects.update(status=MatchStatus.DONE)
        registry.unregister(f"s-{bot.pk}")
    assert met[newcomer.pk] and not met[newcomer.pk] & searching  # no house bot that searches
    assert met[settled.pk] & searching  # a settled bot meets every level
