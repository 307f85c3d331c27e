"""The worker-side seat factory: one referee `Seat` per seat row of a match.

A house bot (`Bot.is_house`) gets a `HouseSeat` running its `house_policy`, seeded from the match seed and
the seat index (`ladder.matches.house.house_seed`), so a house seat is reproducible from the row. A policy
that searches (`search`, `search-strong`, `mcts`) decides in this process's search pool (`PooledHouseSeat`), never in the match
thread, unless CARAVANSERAI_SEARCH_PROCESSES is 0. Any other bot gets the gateway's `RemoteSeat`, which finds the bot's stream in the session registry and
relays through the gateway holding it.

Layer: orchestration. The registry connection is per process and opened lazily, so a forked pool child never
uses its parent's (`reset_after_fork`); the gateway's `RemoteSeat` keeps its own per-process gRPC channels.
It must not write to the database.
"""

from __future__ import annotations

import os
import threading

from engine_service.gateway.config import GatewayConfig
from engine_service.gateway.registry import SessionRegistry, open_registry
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.policies import SEARCHING_POLICIES, make_policy
from engine_service.referee import HouseSeat, Seat
from engine_service.referee.search_pool import PooledHouseSeat, SearchPool
from ladder.matches.house import house_seed
from ladder.matches.models import Match
from workers.config import WorkerSettings

_registry: SessionRegistry | None = None
_registry_pid: int | None = None
_lock = threading.Lock()
_search_pool: SearchPool | None = None


def search_pool() -> SearchPool | None:
    """This process's pool for searching house bots (None: they decide in the match thread)."""
    global _search_pool
    with _lock:
        if _search_pool is None:
            processes = WorkerSettings.from_env().search_processes
            _search_pool = SearchPool(processes) if processes > 0 else None
        return _search_pool


def house_seat(policy_name: str, seed: int, name: str) -> HouseSeat:
    policy = make_policy(policy_name, seed=seed)
    pool = search_pool() if policy_name.partition(":")[0] in SEARCHING_POLICIES else None
    return HouseSeat(policy, name=name) if pool is None else PooledHouseSeat(policy, pool, name=name)


def registry() -> SessionRegistry:
    """This process's session registry (Redis when REDIS_URL is set, else the gateway's SQLite file)."""
    global _registry, _registry_pid
    with _lock:
        if _registry is None or _registry_pid != os.getpid():
            config = GatewayConfig.from_env()
            _registry = open_registry(
                redis_url=config.redis_url,
                path=config.registry_path,
                prefix=config.registry_prefix,
                ttl=config.session_ttl,
            )
            _registry_pid = os.getpid()
        return _registry


def reset_after_fork() -> None:
    global _registry
    with _lock:
        _registry = None


def build_seats(match: Match, *, reconnect_grace: float) -> list[Seat]:
    """The referee's seats for `match`, in seat order."""
    seats: list[Seat] = []
    for row in match.seats.select_related("bot").order_by("index"):
        bot = row.bot
        if bot.is_house:
            seat: Seat = house_seat(bot.house_policy, house_seed(match.seed, row.index), bot.name)
            seat.bot_id = str(bot.pk)
        else:
            seat = RemoteSeat(str(bot.pk), bot.name, registry(), reconnect_grace=reconnect_grace)
        seats.append(seat)
    return seats
