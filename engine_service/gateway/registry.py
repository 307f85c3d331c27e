"""The session registry: which gateway holds which bot's streams, with what capacity, playing how many matches.

Layer: gateway state shared between processes. Gateways write it (register, heartbeat, match counts,
unregister); workers' remote seats and matchmaking read it. Each session names its gateway's two internal
addresses, the relay (gRPC control calls) and the decision port (framed TCP). Two backends behind one
interface, same code paths: `RedisRegistry` when REDIS_URL is set, `SqliteRegistry` (a file under var/, no
server) otherwise.
Liveness is by heartbeat: a gateway refreshes its sessions every few seconds, and readers ignore sessions
of gateways silent for longer than the TTL, so a killed gateway's sessions vanish by themselves. A
registry object remembers the sessions registered through it, and every heartbeat writes them whole, so
a store that lost its data (Redis restarted empty) holds every open session again one heartbeat later,
without any bot reconnecting.
Admission: besides its heartbeat, a gateway reports a few times a second whether it is admitting bots at
normal speed (`report_admission`: a claim that lapses by itself, so a stalled gateway stops claiming);
`gateway_states` gives readers both. A gateway that reports no admission state (an older one) counts as
admitting while it is alive, as before. Each bot's sessions are also indexed by bot (`sessions_of_bot`), so
a seat waiting for its bot and a gateway admitting one do not read every session of the ladder.
Bot hosts: each bot host reports every step which bots it runs and until when it says it is up
(`report_host`: a claim that lapses by itself, withdrawn at once when the host stops); `host_states` gives
readers every host's last report, so a seat whose hosted bot dropped can tell its host's restart (ours)
from the bot's own disconnect.
Capacity: match workers report their measured room (threads, search-pool queue and wait) and matchmaking
reports the tables it held back for want of it (`report_capacity(kind, reporter, payload, until)`: a claim
that lapses by itself); `capacity_reports(kind)` gives readers the live ones.
It also carries bot revocations between processes (the ladder publishes, gateways poll).
Synchronous on purpose (workers are synchronous); the gateway calls it through `asyncio.to_thread`.
It must not import gRPC or Django.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class SessionInfo:
    """One bot stream on one gateway."""

    session_id: str
    bot_id: str
    bot_name: str
    gateway_id: str
    relay_address: str
    games: tuple[str, ...]
    capacity: int
    matches: int
    connected_at: float
    heartbeat_at: float
    asked: int = 0  # the capacity the bot's Hello asked for (`capacity` is what it was granted)
    bot_version: str = ""  # the version string of the bot's Hello
    decisions_address: str = ""  # where workers send this gateway decisions (framed TCP, `relay_frames`)

    @property
    def free(self) -> int:
        return max(0, self.capacity - self.matches)

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "bot_id": self.bot_id,
            "bot_name": self.bot_name,
            "gateway_id": self.gateway_id,
            "relay_address": self.relay_address,
            "games": list(self.games),
            "capacity": self.capacity,
            "matches": self.matches,
            "connected_at": self.connected_at,
            "heartbeat_at": self.heartbeat_at,
            "asked": self.asked,
            "bot_version": self.bot_version,
            "decisions_address": self.decisions_address,
        }


@dataclass(frozen=True)
class OnlineBot:
    """A bot as matchmaking sees it: every live session summed."""

    bot_id: str
    bot_name: str
    games: tuple[str, ...]
    capacity: int
    matches: int
    sessions: tuple[SessionInfo, ...] = field(default=())

    @property
    def free(self) -> int:
        return max(0, self.capacity - self.matches)

    @property
    def gateways(self) -> tuple[str, ...]:
        return tuple(sorted({s.relay_address for s in self.sessions}))

    def to_json(self) -> dict[str, Any]:
        return {
            "bot_id": self.bot_id,
            "bot_name": self.bot_name,
            "games": list(self.games),
            "capacity": self.capacity,
            "matches": self.matches,
            "free": self.free,
            "gateways": list(self.gateways),
            "sessions": [s.to_json() for s in self.sessions],
        }


@dataclass(frozen=True)
class GatewayState:
    """A live gateway as readers see it: its relay address, its last heartbeat, and until when it last said
    it admits bots at normal speed (`admitting_until`, wall time; None: it reports no admission state)."""

    gateway_id: str
    relay_address: str
    heartbeat_at: float
    admitting_until: float | None = None

    def admitting(self, now: float) -> bool:
        """Admitting bots at normal speed at wall time `now` (one that never reports it: while alive)."""
        return self.admitting_until is None or self.admitting_until >= now


@dataclass(frozen=True)
class HostState:
    """A bot host's last report: the bots it runs and until when (wall time) it says it is up; 0 when it
    stopped on purpose."""

    host_id: str
    bot_ids: tuple[str, ...]
    ready_until: float
    reported_at: float

    def ready(self, now: float) -> bool:
        return self.ready_until >= now


@dataclass(frozen=True)
class CapacityReport:
    """One process's last capacity report: what it measured (`payload`, JSON numbers and strings) and until
    when (wall time) it holds."""

    reporter_id: str
    payload: dict[str, Any]
    until: float
    reported_at: float

    def live(self, now: float) -> bool:
        return self.until >= now


CAPACITY_KEPT_SECONDS = 60.0  # a capacity report older than this is deleted by its readers


class SessionRegistry(Protocol):
    ttl: float

    def register(self, session: SessionInfo) -> None: ...
    def unregister(self, session_id: str) -> None: ...
    def set_matches(self, session_id: str, matches: int) -> None: ...
    def heartbeat(self, gateway_id: str, relay_address: str, session_ids: list[str]) -> None: ...
    def drop_gateway(self, *, gateway_id: str | None = None, relay_address: str | None = None) -> None: ...
    def live_gateways(self) -> dict[str, str]: ...
    def report_admission(self, gateway_id: str, relay_address: str, admitting_until: float) -> None: ...
    def gateway_states(self) -> dict[str, GatewayState]: ...
    def report_host(self, host_id: str, bot_ids: list[str], ready_until: float) -> None: ...
    def host_states(self) -> dict[str, HostState]: ...
    def report_capacity(self, kind: str, reporter_id: str, payload: dict[str, Any], until: float) -> None: ...
    def capacity_reports(self, kind: str) -> dict[str, CapacityReport]: ...
    def sessions(self) -> list[SessionInfo]: ...
    def sessions_of_bot(self, bot_id: str) -> list[SessionInfo]: ...
    def publish_revocation(self, bot_id: str) -> None: ...
    def revocations_since(self, cursor: int) -> tuple[list[str], int]: ...
    def close(self) -> None: ...


HOST_KEPT_SECONDS = 600.0  # a host silent this long is forgotten: its bots are no longer waited for


def bot_host_states(registry: SessionRegistry, bot_id: str) -> list[HostState]:
    """The reports of the bot hosts that run (or last ran) `bot_id`."""
    return [h for h in registry.host_states().values() if bot_id in h.bot_ids]


def sessions_for_bot(registry: SessionRegistry, bot_id: str, game_id: str | None = None) -> list[SessionInfo]:
    """Live sessions of a bot (playing `game_id` if given), most free capacity first."""
    found = [s for s in registry.sessions_of_bot(bot_id) if game_id is None or game_id in s.games]
    return sorted(found, key=lambda s: (-s.free, s.connected_at))


def online_bots(registry: SessionRegistry, game_id: str | None = None) -> list[OnlineBot]:
    """For matchmaking: every connected bot with its games, capacity, matches in progress and gateways."""
    by_bot: dict[str, list[SessionInfo]] = {}
    for s in registry.sessions():
        if game_id is None or game_id in s.games:
            by_bot.setdefault(s.bot_id, []).append(s)
    bots = []
    for bot_id, sessions in sorted(by_bot.items()):
        games = sorted({g for s in sessions for g in s.games})
        bots.append(
            OnlineBot(
                bot_id=bot_id,
                bot_name=sessions[0].bot_name,
                games=tuple(games),
                capacity=sum(s.capacity for s in sessions),
                matches=sum(s.matches for s in sessions),
                sessions=tuple(sorted(sessions, key=lambda s: s.connected_at)),
            )
        )
    return bots


class _RememberedSessions:
    """The sessions registered through this registry object, as last written (the gateway's own)."""

    def __init__(self) -> None:
        self._mine: dict[str, SessionInfo] = {}

    def _remember(self, session: SessionInfo) -> None:
        self._mine[session.session_id] = session

    def _forget(self, session_id: str) -> None:
        self._mine.pop(session_id, None)

    def _remember_matches(self, session_id: str, matches: int) -> None:
        known = self._mine.get(session_id)
        if known is not None:
            self._mine[session_id] = replace(known, matches=matches)

    def _beating(self, gateway_id: str, session_ids: list[str], now: float) -> list[SessionInfo]:
        """This gateway's remembered sessions among `session_ids`, stamped with this heartbeat (a heartbeat
        refreshes only sessions registered through the same registry object: the gateway's own)."""
        found = [self._mine[sid] for sid in session_ids if sid in self._mine]
        return [replace(s, heartbeat_at=now) for s in found if s.gateway_id == gateway_id]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS gateways (
    gateway_id TEXT PRIMARY KEY, relay_address TEXT NOT NULL, heartbeat_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY, bot_id TEXT NOT NULL, bot_name TEXT NOT NULL, gateway_id TEXT NOT NULL,
    relay_address TEXT NOT NULL, games TEXT NOT NULL, capacity INTEGER NOT NULL, matches INTEGER NOT NULL,
    connected_at REAL NOT NULL, heartbeat_at REAL NOT NULL, asked INTEGER NOT NULL DEFAULT 0,
    bot_version TEXT NOT NULL DEFAULT '', decisions_address TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS sessions_bot ON sessions (bot_id);
CREATE TABLE IF NOT EXISTS admission (
    gateway_id TEXT PRIMARY KEY, relay_address TEXT NOT NULL, admitting_until REAL NOT NULL,
    reported_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS hosts (
    host_id TEXT PRIMARY KEY, bot_ids TEXT NOT NULL, ready_until REAL NOT NULL, reported_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS capacity (
    kind TEXT NOT NULL, reporter_id TEXT NOT NULL, payload TEXT NOT NULL, until REAL NOT NULL,
    reported_at REAL NOT NULL, PRIMARY KEY (kind, reporter_id));
CREATE TABLE IF NOT EXISTS revocations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, bot_id TEXT NOT NULL, at REAL NOT NULL);
"""


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    """A registry file made before `asked`, `bot_version` and `decisions_address` existed gets them (with
    their defaults)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(sessions)")}
    for column, declaration in (
        ("asked", "INTEGER NOT NULL DEFAULT 0"),
        ("bot_version", "TEXT NOT NULL DEFAULT ''"),
        ("decisions_address", "TEXT NOT NULL DEFAULT ''"),
    ):
        if column not in have:
            conn.execute(f"ALTER TABLE sessions ADD COLUMN {column} {declaration}")


class SqliteRegistry(_RememberedSessions):
    """The embedded default: one SQLite file (WAL) shared by every gateway and worker on this machine."""

    def __init__(self, path: str | Path, *, ttl: float = 10.0) -> None:
        super().__init__()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.ttl = ttl
        self._local = threading.local()
        with self._conn() as conn:
            conn.executescript(_SCHEMA)
            _add_missing_columns(conn)

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=True)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    @staticmethod
    def _row(session: SessionInfo) -> tuple[Any, ...]:
        return (
            session.session_id,
            session.bot_id,
            session.bot_name,
            session.gateway_id,
            session.relay_address,
            json.dumps(list(session.games)),
            session.capacity,
            session.matches,
            session.connected_at,
            session.heartbeat_at,
            session.asked,
            session.bot_version,
            session.decisions_address,
        )

    def register(self, session: SessionInfo) -> None:
        self._remember(session)
        self._conn().execute(
            "INSERT OR REPLACE INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", self._row(session)
        )

    def unregister(self, session_id: str) -> None:
        self._forget(session_id)
        self._conn().execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))

    def set_matches(self, session_id: str, matches: int) -> None:
        self._remember_matches(session_id, matches)
        self._conn().execute("UPDATE sessions SET matches = ? WHERE session_id = ?", (matches, session_id))

    def heartbeat(self, gateway_id: str, relay_address: str, session_ids: list[str]) -> None:
        now = time.time()
        mine = self._beating(gateway_id, session_ids, now)
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT OR REPLACE INTO gateways VALUES (?,?,?)", (gateway_id, relay_address, now))
            conn.executemany(
                "INSERT OR REPLACE INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [self._row(s) for s in mine],
            )
            conn.execute("DELETE FROM sessions WHERE heartbeat_at < ?", (now - 6 * self.ttl,))
            conn.execute("DELETE FROM gateways WHERE heartbeat_at < ?", (now - 6 * self.ttl,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def drop_gateway(self, *, gateway_id: str | None = None, relay_address: str | None = None) -> None:
        conn = self._conn()
        if gateway_id is not None:
            conn.execute("DELETE FROM sessions WHERE gateway_id = ?", (gateway_id,))
            conn.execute("DELETE FROM gateways WHERE gateway_id = ?", (gateway_id,))
            conn.execute("DELETE FROM admission WHERE gateway_id = ?", (gateway_id,))
        if relay_address is not None:
            conn.execute("DELETE FROM sessions WHERE relay_address = ?", (relay_address,))
            conn.execute("DELETE FROM gateways WHERE relay_address = ?", (relay_address,))
            conn.execute("DELETE FROM admission WHERE relay_address = ?", (relay_address,))

    def live_gateways(self) -> dict[str, str]:
        rows = self._conn().execute(
            "SELECT gateway_id, relay_address FROM gateways WHERE heartbeat_at >= ?",
            (time.time() - self.ttl,),
        )
        return dict(rows.fetchall())

    def report_admission(self, gateway_id: str, relay_address: str, admitting_until: float) -> None:
        now = time.time()
        conn = self._conn()
        conn.execute(
            "INSERT OR REPLACE INTO admission VALUES (?,?,?,?)",
            (gateway_id, relay_address, admitting_until, now),
        )
        conn.execute("DELETE FROM admission WHERE reported_at < ?", (now - 6 * self.ttl,))

    def gateway_states(self) -> dict[str, GatewayState]:
        rows = self._conn().execute(
            "SELECT g.gateway_id, g.relay_address, g.heartbeat_at, a.admitting_until FROM gateways g "
            "LEFT JOIN admission a ON a.gateway_id = g.gateway_id WHERE g.heartbeat_at >= ?",
            (time.time() - self.ttl,),
        )
        return {r[0]: GatewayState(r[0], r[1], r[2], r[3]) for r in rows.fetchall()}

    def report_host(self, host_id: str, bot_ids: list[str], ready_until: float) -> None:
        now = time.time()
        conn = self._conn()
        row = (host_id, json.dumps(bot_ids), ready_until, now)
        conn.execute("INSERT OR REPLACE INTO hosts VALUES (?,?,?,?)", row)
        conn.execute("DELETE FROM hosts WHERE reported_at < ?", (now - HOST_KEPT_SECONDS,))

    def host_states(self) -> dict[str, HostState]:
        rows = self._conn().execute(
            "SELECT host_id, bot_ids, ready_until, reported_at FROM hosts WHERE reported_at >= ?",
            (time.time() - HOST_KEPT_SECONDS,),
        )
        return {r[0]: HostState(r[0], tuple(json.loads(r[1])), r[2], r[3]) for r in rows.fetchall()}

    def report_capacity(self, kind: str, reporter_id: str, payload: dict[str, Any], until: float) -> None:
        now = time.time()
        conn = self._conn()
        row = (kind, reporter_id, json.dumps(payload), until, now)
        conn.execute("INSERT OR REPLACE INTO capacity VALUES (?,?,?,?,?)", row)

    def capacity_reports(self, kind: str) -> dict[str, CapacityReport]:
        now = time.time()
        conn = self._conn()
        conn.execute("DELETE FROM capacity WHERE reported_at < ?", (now - CAPACITY_KEPT_SECONDS,))
        rows = conn.execute(
            "SELECT reporter_id, payload, until, reported_at FROM capacity WHERE kind = ? AND until >= ?",
            (kind, now),
        )
        return {r[0]: CapacityReport(r[0], json.loads(r[1]), r[2], r[3]) for r in rows.fetchall()}

    _SESSION_COLUMNS = (
        "session_id, bot_id, bot_name, gateway_id, relay_address, games, capacity, matches, "
        "connected_at, heartbeat_at, asked, bot_version, decisions_address"
    )

    def sessions(self) -> list[SessionInfo]:
        rows = self._conn().execute(
            f"SELECT {self._SESSION_COLUMNS} FROM sessions WHERE heartbeat_at >= ?", (time.time() - self.ttl,)
        )
        return self._sessions(rows.fetchall())

    def sessions_of_bot(self, bot_id: str) -> list[SessionInfo]:
        rows = self._conn().execute(
            f"SELECT {self._SESSION_COLUMNS} FROM sessions WHERE bot_id = ? AND heartbeat_at >= ?",
            (bot_id, time.time() - self.ttl),
        )
        return self._sessions(rows.fetchall())

    @staticmethod
    def _sessions(rows: list[Any]) -> list[SessionInfo]:
        return [
            SessionInfo(
                session_id=r[0],
                bot_id=r[1],
                bot_name=r[2],
                gateway_id=r[3],
                relay_address=r[4],
                games=tuple(json.loads(r[5])),
                capacity=r[6],
                matches=r[7],
                connected_at=r[8],
                heartbeat_at=r[9],
                asked=r[10],
                bot_version=r[11],
                decisions_address=r[12],
            )
            for r in rows
        ]

    def publish_revocation(self, bot_id: str) -> None:
        self._conn().execute("INSERT INTO revocations (bot_id, at) VALUES (?, ?)", (bot_id, time.time()))

    def revocations_since(self, cursor: int) -> tuple[list[str], int]:
        """Bot ids revoked after `cursor` (-1: none, just return the current cursor)."""
        conn = self._conn()
        if cursor < 0:
            row = conn.execute("SELECT COALESCE(MAX(id), 0) FROM revocations").fetchone()
            return [], int(row[0])
        rows = conn.execute(
            "SELECT id, bot_id FROM revocations WHERE id > ? ORDER BY id", (cursor,)
        ).fetchall()
        return [r[1] for r in rows], (int(rows[-1][0]) if rows else cursor)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class RedisRegistry(_RememberedSessions):
    """Sessions as Redis hashes with a TTL refreshed by the heartbeat; sets index them by bot."""

    def __init__(self, url: str, *, prefix: str = "cvs:gw", ttl: float = 10.0) -> None:
        import redis

        super().__init__()
        self.client = redis.Redis.from_url(url, decode_responses=True)
        self.prefix = prefix
        self.ttl = ttl

    def _k(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def _ttl_ms(self) -> int:
        return int(self.ttl * 1000)

    def _write(self, pipe: Any, session: SessionInfo) -> None:
        data = session.to_json()
        data["games"] = json.dumps(data["games"])
        pipe.hset(self._k("s", session.session_id), mapping=data)
        pipe.pexpire(self._k("s", session.session_id), self._ttl_ms())
        pipe.sadd(self._k("sessions"), session.session_id)
        pipe.sadd(self._k("gw", session.gateway_id), session.session_id)
        pipe.sadd(self._k("bot", session.bot_id), session.session_id)

    def register(self, session: SessionInfo) -> None:
        self._remember(session)
        pipe = self.client.pipeline()
        self._write(pipe, session)
        pipe.execute()

    def unregister(self, session_id: str) -> None:
        self._forget(session_id)
        gateway_id, bot_id = self.client.hmget(self._k("s", session_id), ["gateway_id", "bot_id"])
        pipe = self.client.pipeline()
        pipe.delete(self._k("s", session_id))
        pipe.srem(self._k("sessions"), session_id)
        if gateway_id:
            pipe.srem(self._k("gw", str(gateway_id)), session_id)
        if bot_id:
            pipe.srem(self._k("bot", str(bot_id)), session_id)
        pipe.execute()

    def set_matches(self, session_id: str, matches: int) -> None:
        self._remember_matches(session_id, matches)
        key = self._k("s", session_id)
        if self.client.exists(key):
            self.client.hset(key, "matches", matches)

    def heartbeat(self, gateway_id: str, relay_address: str, session_ids: list[str]) -> None:
        now = time.time()
        mine = self._beating(gateway_id, session_ids, now)
        pipe = self.client.pipeline()
        pipe.hset(self._k("gateways"), gateway_id, json.dumps([relay_address, now]))
        for session in mine:  # written whole: a store that lost them has them again
            self._write(pipe, session)
        pipe.execute()

    def drop_gateway(self, *, gateway_id: str | None = None, relay_address: str | None = None) -> None:
        gateways = {str(k): json.loads(v) for k, v in self.client.hgetall(self._k("gateways")).items()}
        doomed = {g for g, (addr, _) in gateways.items() if g == gateway_id or addr == relay_address}
        if gateway_id:
            doomed.add(gateway_id)
        for g in doomed:
            for sid in self.client.smembers(self._k("gw", g)):
                self.unregister(str(sid))
            self.client.delete(self._k("gw", g))
            self.client.hdel(self._k("gateways"), g)
            self.client.hdel(self._k("admission"), g)
        if relay_address is not None:
            for s in self.sessions():
                if s.relay_address == relay_address:
                    self.unregister(s.session_id)

    def live_gateways(self) -> dict[str, str]:
        cutoff = time.time() - self.ttl
        live: dict[str, str] = {}
        for g, raw in self.client.hgetall(self._k("gateways")).items():
            address, at = json.loads(raw)
            if at >= cutoff:
                live[str(g)] = str(address)
        return live

    def report_admission(self, gateway_id: str, relay_address: str, admitting_until: float) -> None:
        self.client.hset(
            self._k("admission"), gateway_id, json.dumps([relay_address, admitting_until, time.time()])
        )

    def gateway_states(self) -> dict[str, GatewayState]:
        pipe = self.client.pipeline()
        pipe.hgetall(self._k("gateways"))
        pipe.hgetall(self._k("admission"))
        gateways, admission = pipe.execute()
        cutoff = time.time() - self.ttl
        states: dict[str, GatewayState] = {}
        for g, raw in gateways.items():
            address, at = json.loads(raw)
            if at >= cutoff:
                claim = json.loads(admission[g])[1] if g in admission else None
                states[str(g)] = GatewayState(str(g), str(address), float(at), claim)
        stale = [g for g, raw in admission.items() if g not in gateways and json.loads(raw)[2] < cutoff]
        if stale:
            self.client.hdel(self._k("admission"), *stale)
        return states

    def report_host(self, host_id: str, bot_ids: list[str], ready_until: float) -> None:
        self.client.hset(self._k("hosts"), host_id, json.dumps([bot_ids, ready_until, time.time()]))

    def host_states(self) -> dict[str, HostState]:
        cutoff = time.time() - HOST_KEPT_SECONDS
        states, stale = {}, []
        for host_id, raw in self.client.hgetall(self._k("hosts")).items():
            bot_ids, ready_until, reported_at = json.loads(raw)
            if reported_at < cutoff:
                stale.append(host_id)
            else:
                states[str(host_id)] = HostState(
                    str(host_id), tuple(bot_ids), float(ready_until), reported_at
                )
        if stale:
            self.client.hdel(self._k("hosts"), *stale)
        return states

    def report_capacity(self, kind: str, reporter_id: str, payload: dict[str, Any], until: float) -> None:
        self.client.hset(self._k("capacity", kind), reporter_id, json.dumps([payload, until, time.time()]))

    def capacity_reports(self, kind: str) -> dict[str, CapacityReport]:
        now = time.time()
        reports, stale = {}, []
        for reporter_id, raw in self.client.hgetall(self._k("capacity", kind)).items():
            payload, until, reported_at = json.loads(raw)
            if reported_at < now - CAPACITY_KEPT_SECONDS:
                stale.append(reporter_id)
            elif until >= now:
                reports[str(reporter_id)] = CapacityReport(
                    str(reporter_id), payload, float(until), reported_at
                )
        if stale:
            self.client.hdel(self._k("capacity", kind), *stale)
        return reports

    def sessions(self) -> list[SessionInfo]:
        return self._read(self._k("sessions"))

    def sessions_of_bot(self, bot_id: str) -> list[SessionInfo]:
        return self._read(self._k("bot", bot_id))

    def _read(self, index: str) -> list[SessionInfo]:
        """The live sessions whose ids the set `index` holds (ids of expired sessions leave the set)."""
        ids = sorted(str(sid) for sid in self.client.smembers(index))
        if not ids:
            return []
        pipe = self.client.pipeline()
        for sid in ids:
            pipe.hgetall(self._k("s", sid))
        cutoff = time.time() - self.ttl
        found, gone = [], []
        for sid, data in zip(ids, pipe.execute(), strict=True):
            if not data:
                gone.append(sid)
                continue
            info = SessionInfo(
                session_id=data["session_id"],
                bot_id=data["bot_id"],
                bot_name=data["bot_name"],
                gateway_id=data["gateway_id"],
                relay_address=data["relay_address"],
                games=tuple(json.loads(data["games"])),
                capacity=int(data["capacity"]),
                matches=int(data["matches"]),
                connected_at=float(data["connected_at"]),
                heartbeat_at=float(data["heartbeat_at"]),
                asked=int(data.get("asked", 0)),
                bot_version=str(data.get("bot_version", "")),
                decisions_address=str(data.get("decisions_address", "")),
            )
            if info.heartbeat_at >= cutoff:
                found.append(info)
        if gone:
            self.client.srem(index, *gone)
        return found

    def publish_revocation(self, bot_id: str) -> None:
        self.client.rpush(self._k("revocations"), bot_id)

    def revocations_since(self, cursor: int) -> tuple[list[str], int]:
        length = int(self.client.llen(self._k("revocations")))
        if cursor < 0:
            return [], length
        if length <= cursor:
            return [], length
        return [str(b) for b in self.client.lrange(self._k("revocations"), cursor, length - 1)], length

    def close(self) -> None:
        self.client.close()


def open_registry(*, redis_url: str | None, path: str | Path, prefix: str = "cvs:gw", ttl: float = 10.0):  # type: ignore[no-untyped-def]
    """Redis when a URL is given, else the SQLite file at `path`."""
    if redis_url:
        return RedisRegistry(redis_url, prefix=prefix, ttl=ttl)
    return SqliteRegistry(path, ttl=ttl)
