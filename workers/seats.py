"""The worker-side seat factory: one referee `Seat` per seat row of a match.

A house bot (`Bot.is_house`) gets a `HouseSeat` running its `house_policy` in this process, seeded from the
match seed and the seat index (`ladder.matches.house.house_seed`), so a house seat is reproducible from the
row. Any other bot gets the gateway's `RemoteSeat`, which finds the bot's stream in the session registry and
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
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, Seat
from ladder.matches.house import house_seed
from ladder.matches.models import Match

_registry: SessionRegistry | None = None
_registry_pid: int | None = None
_lock = threading.Lock()


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
            seat: Seat = HouseSeat(
                make_policy(bot.house_policy, seed=house_seed(match.seed, row.index)), name=bot.name
            )
            seat.bot_id = str(bot.pk)
        else:
            seat = RemoteSeat(str(bot.pk), bot.name, registry(), reconnect_grace=reconnect_grace)
        seats.append(seat)
    return seats
