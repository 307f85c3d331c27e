"""Worker configuration: the Celery settings derived from the environment and the Django settings, and the
match timing knobs.

Layer: configuration. Reads the environment (through `engine_service.settings_env`, each default written
once: a `WorkerSettings` field, the decision time and bank the referee's `TimeControl`) and
`django.conf.settings`; no I/O.

Broker: Redis when REDIS_URL is set, through `workers.broker.RedisTransport` for a redis:// URL (kombu's, with
the guard that lets a worker survive a Redis restart with tasks in flight); a worker that loses its broker
retries for as long as it is away. Otherwise the embedded default (`workers.broker`): kombu's SQLAlchemy
transport on a SQLite file under var/ (`celery-broker.sqlite3`), which needs no server, takes a write lock per
fetch (BEGIN IMMEDIATE) so several worker processes and beat share it safely, and keeps results (for chords) in
`celery-results.sqlite3` through Celery's database backend. Any `CELERY_<NAME>` Django setting overrides the
computed value of `<name>` (for example CELERY_BROKER_URL).

Pool: every worker runs Celery's threads pool. A match spends nearly all its time waiting on bots, so one
process keeps CARAVANSERAI_MATCHES_PER_WORKER matches in flight (one thread each, idle while it waits); house
bots that search decide in a separate pool of CARAVANSERAI_SEARCH_PROCESSES processes
(`engine_service.referee.search_pool`). Worker count follows CPU, not the bots' think time.

| Variable | Default | Meaning |
|---|---|---|
| REDIS_URL | unset | broker and result backend; unset: SQLite files under var/ |
| CARAVANSERAI_MATCHES_PER_WORKER | 64 | matches one worker process plays at once (its threads) |
| CARAVANSERAI_SEARCH_PROCESSES | cores | processes per worker for house bots that search (mcts); 0: in the match thread |
| CARAVANSERAI_DB_CONNECTIONS | 8 | database connections one worker process's matches use at once |
| CARAVANSERAI_TASK_MAX_RETRIES | 30 | retries of one `run_match` message before it is dropped (the sweep re-sends the match) |
| CARAVANSERAI_DECISION_SECONDS | 5 | decision time per move in ladder matches |
| CARAVANSERAI_TIME_BANK_SECONDS | 30 | time bank per seat and match |
| CARAVANSERAI_MATCH_SOFT_LIMIT | 1800 | seconds before a match is stopped between decisions (infrastructure failure, retried) |
| CARAVANSERAI_RECONNECT_GRACE | 10 | seconds a remote seat waits, excused, for its bot after a gateway loss |
| CARAVANSERAI_RETRY_BACKOFF | 5 | first retry delay after an infrastructure failure (doubles, max 300) |
| CARAVANSERAI_RECORD_RETRIES | 6 | pauses of 1, 2, 4, ... s in which a played match waits for its database before it is played again |
| CARAVANSERAI_LEASE_SECONDS | 15 | a running match's lease; a lost worker's match is free again after it |
| CARAVANSERAI_MATCHMAKING_SECONDS | 5 | beat period of matchmaking |
| CARAVANSERAI_SWEEP_SECONDS | 20 | beat period of the stale-match sweep and the tournament sweep |
| CARAVANSERAI_QUEUED_RESEND_SECONDS | 300 | a QUEUED match older than this with no task is sent again |
| CARAVANSERAI_MAX_QUEUED_PER_LADDER | 8 | matchmaking stops adding to a ladder with this many QUEUED matches |
| CARAVANSERAI_BROKER_PREFIX | unset | a prefix for every broker key on Redis (several deployments on one Redis) |
| CARAVANSERAI_LEASE_PREFIX | cvs:lease: | the Redis key prefix of leases |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from engine_service.referee import TimeControl
from engine_service.settings_env import env_float, env_int, env_str

QUEUE_MATCHES = "matches"
QUEUE_MATCHMAKING = "matchmaking"
QUEUE_TOURNAMENTS = "tournaments"
QUEUE_ANALYSIS = "analysis"  # match analyses: CPU-bound, on a worker of their own (`workers.analysis`)
QUEUES = (QUEUE_MATCHES, QUEUE_MATCHMAKING, QUEUE_TOURNAMENTS, QUEUE_ANALYSIS)


# A search decision keeps one pool process busy; a house seat decides only on its turns, so one process
# keeps about three seats' clocks when they share tables with other bots. A configured default, not a
# measurement: CARAVANSERAI_SEARCH_SEATS sets the limit for a deployment's total of search processes.
SEARCH_SEATS_PER_PROCESS = 3
_TIME_CONTROL = TimeControl()  # the referee's defaults: decision time and bank are written there only


@dataclass(frozen=True)
class WorkerSettings:
    decision_seconds: float = _TIME_CONTROL.decision_seconds
    time_bank_seconds: float = _TIME_CONTROL.time_bank_seconds
    match_soft_limit: float = 1800.0
    reconnect_grace: float = 10.0
    retry_backoff: float = 5.0
    record_retries: int = 6
    lease_seconds: float = 15.0
    matchmaking_seconds: float = 5.0
    sweep_seconds: float = 20.0
    queued_resend_seconds: float = 300.0
    max_queued_per_ladder: int = 8
    matches_per_worker: int = 64
    search_processes: int = field(default_factory=lambda: os.cpu_count() or 2)
    # house-bot seats that search, in flight at once across the deployment (matchmaking's admission limit)
    search_seats: int = field(default_factory=lambda: SEARCH_SEATS_PER_PROCESS * (os.cpu_count() or 2))
    task_max_retries: int = 30
    database_connections: int = 8
    live_seconds: float = 2.0

    @property
    def visibility_timeout(self) -> int:
        """Redis redelivers an unacknowledged task after this: longer than any match may run."""
        return int(self.match_soft_limit * 2 + 600)

    @staticmethod
    def from_env(env: Mapping[str, str] | None = None) -> WorkerSettings:
        """The settings from `env` (default `os.environ`); an unset variable keeps the field's default, a
        malformed one raises `EnvError` naming it."""
        env = os.environ if env is None else env
        d = WorkerSettings()
        search_processes = env_int(env, "CARAVANSERAI_SEARCH_PROCESSES", d.search_processes, minimum=0)
        return WorkerSettings(
            decision_seconds=env_float(
                env, "CARAVANSERAI_DECISION_SECONDS", d.decision_seconds, minimum=0.01
            ),
            time_bank_seconds=env_float(
                env, "CARAVANSERAI_TIME_BANK_SECONDS", d.time_bank_seconds, minimum=0
            ),
            match_soft_limit=env_float(env, "CARAVANSERAI_MATCH_SOFT_LIMIT", d.match_soft_limit, minimum=5),
            reconnect_grace=env_float(env, "CARAVANSERAI_RECONNECT_GRACE", d.reconnect_grace, minimum=0),
            retry_backoff=env_float(env, "CARAVANSERAI_RETRY_BACKOFF", d.retry_backoff, minimum=0.1),
            record_retries=env_int(env, "CARAVANSERAI_RECORD_RETRIES", d.record_retries, minimum=0),
            lease_seconds=env_float(env, "CARAVANSERAI_LEASE_SECONDS", d.lease_seconds, minimum=1),
            matchmaking_seconds=env_float(
                env, "CARAVANSERAI_MATCHMAKING_SECONDS", d.matchmaking_seconds, minimum=0.5
            ),
            sweep_seconds=env_float(env, "CARAVANSERAI_SWEEP_SECONDS", d.sweep_seconds, minimum=1),
            queued_resend_seconds=env_float(
                env, "CARAVANSERAI_QUEUED_RESEND_SECONDS", d.queued_resend_seconds, minimum=5
            ),
            max_queued_per_ladder=env_int(
                env, "CARAVANSERAI_MAX_QUEUED_PER_LADDER", d.max_queued_per_ladder, minimum=1
            ),
            matches_per_worker=env_int(
                env, "CARAVANSERAI_MATCHES_PER_WORKER", d.matches_per_worker, minimum=1
            ),
            search_processes=search_processes,
            search_seats=env_int(
                env,
                "CARAVANSERAI_SEARCH_SEATS",
                SEARCH_SEATS_PER_PROCESS * max(1, search_processes),
                minimum=1,
            ),
            task_max_retries=env_int(env, "CARAVANSERAI_TASK_MAX_RETRIES", d.task_max_retries, minimum=0),
            database_connections=env_int(
                env, "CARAVANSERAI_DB_CONNECTIONS", d.database_connections, minimum=1
            ),
            live_seconds=env_float(env, "CARAVANSERAI_LIVE_SECONDS", d.live_seconds, minimum=0),
        )


def var_dir() -> Path:
    from django.conf import settings

    path = Path(getattr(settings, "VAR_DIR", Path(__file__).resolve().parents[1] / "var"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def broker_transport(broker_url: str) -> str | None:
    """Celery's `broker_transport` for `broker_url`: `workers.broker.RedisTransport` for a redis:// URL (kombu's
    Redis transport, guarded so a worker survives a Redis restart with tasks in flight), else None (the
    transport the URL's scheme names). A transport named here wins over the URL's scheme, so it must follow
    the final URL."""
    if urlsplit(broker_url).scheme != "redis":
        return None
    from workers.broker import REDIS_TRANSPORT

    return REDIS_TRANSPORT


def celery_settings(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Celery's configuration (lower-case names), before `CELERY_*` Django overrides."""
    env = os.environ if env is None else env
    ws = WorkerSettings.from_env(env)
    redis_url = env_str(env, "REDIS_URL", "")
    if redis_url:
        broker = backend = redis_url
        transport_options: dict[str, Any] = {"visibility_timeout": ws.visibility_timeout}
        prefix = env_str(env, "CARAVANSERAI_BROKER_PREFIX", "")
        if prefix:
            transport_options["global_keyprefix"] = prefix
    else:
        from workers.broker import ALIAS, register

        register()
        var = var_dir()
        broker = f"{ALIAS}+sqlite:///{var / 'celery-broker.sqlite3'}"
        backend = f"db+sqlite:///{var / 'celery-results.sqlite3'}"
        transport_options = {"connect_args": {"timeout": 30}}
    return {
        "broker_url": broker,
        "result_backend": backend,
        "broker_transport": broker_transport(broker),
        "broker_transport_options": transport_options,
        "result_backend_transport_options": {"visibility_timeout": ws.visibility_timeout},
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,  # a worker waits for its broker as long as it is away
        "result_expires": 24 * 3600,
        "result_extended": False,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "timezone": "UTC",
        "enable_utc": True,
        "task_default_queue": QUEUE_MATCHES,
        "task_routes": {
            "matches.run_match": {"queue": QUEUE_MATCHES},
            "matches.sweep_stale": {"queue": QUEUE_MATCHMAKING},
            "matchmaking.*": {"queue": QUEUE_MATCHMAKING},
            "tournaments.*": {"queue": QUEUE_TOURNAMENTS},
            "analysis.*": {"queue": QUEUE_ANALYSIS},
        },
        "task_create_missing_queues": True,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "worker_pool": "threads",
        "worker_concurrency": ws.matches_per_worker,
        "worker_send_task_events": True,
        "task_send_sent_event": True,
        "task_track_started": True,
        "beat_schedule_filename": str(var_dir() / "celerybeat-schedule"),
        "beat_schedule": {
            "matchmaking": {
                "task": "matchmaking.schedule",
                "schedule": ws.matchmaking_seconds,
                "options": {"queue": QUEUE_MATCHMAKING, "expires": ws.matchmaking_seconds * 2},
            },
            "stale-matches": {
                "task": "matches.sweep_stale",
                "schedule": ws.sweep_seconds,
                "options": {"queue": QUEUE_MATCHMAKING, "expires": ws.sweep_seconds * 2},
            },
            "tournaments": {
                "task": "tournaments.sweep",
                "schedule": ws.sweep_seconds,
                "options": {"queue": QUEUE_TOURNAMENTS, "expires": ws.sweep_seconds * 2},
            },
        },
    }
