"""Local test runner for bot authors: a gateway on this machine, the server's own referee, house opponents.

Layer: developer tool over the gateway and the referee (`caravan local ...` or
`python -m engine_service.gateway.local ...`). It starts an embedded gateway (in-memory dev token, a private
SQLite registry under var/), waits for your bot to connect with that token, and plays `--matches` matches
of your bot against house bots, as the server would:
- any game, player count and options (`--game`, `--players`, `--option k=v`), your seat rotating or fixed
  (`--seat`), several matches at once on your one stream (`--parallel N`, up to the capacity your Hello asks);
- before each match it waits for your bot to have a stream with room (up to `--wait` seconds), so a bot that
  dropped and is coming back is never forfeited at step 0; within a match, `--grace` is the reconnect grace
  after a gateway restart (the server's is 10 s);
- at the end it says `Goodbye` (the stream ends OK), which the SDKs treat as final: they stop, they do not
  reconnect;
- rehearsals: `--restart-at-step S` restarts the gateway when the first match reaches step S (your bot gets
  UNAVAILABLE, must reconnect, and the match resumes); `--revoke-at-step S` revokes your token then (your bot
  gets UNAUTHENTICATED; its match is forfeited by disconnect and no further match is played).
It prints each result and every fault with its step and reason; records go to `--out` and are re-checked
with `verify` (the same replay check the ladder runs). Nothing here is used by the production path.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine_service.games import GameError, GameState, get_game
from engine_service.gateway.auth import BotIdentity, InMemoryVerifier
from engine_service.gateway.config import PROJECT_ROOT, GatewayConfig
from engine_service.gateway.registry import SessionInfo, SqliteRegistry, sessions_for_bot
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.gateway.server import GatewayThread
from engine_service.policies import make_policy
from engine_service.referee import (
    HouseSeat,
    MatchRecord,
    MatchResult,
    Seat,
    SeatUnavailable,
    TimeControl,
    run_match,
    verify,
)

LOCAL_BOT_ID = "local"
LOCAL_TOKEN_PREFIX = "cvl_"


class LocalError(ValueError):
    """A bad setting; the message says which and why."""


@dataclass
class LocalSettings:
    game: str = "expedition-v1"
    players: int = 2
    house: str = "greedy"
    matches: int = 1
    seed: int = 1
    port: int = 50051
    token: str | None = None
    decision_seconds: float = TimeControl.decision_seconds  # the referee's defaults, written there only
    bank_seconds: float = TimeControl.time_bank_seconds
    max_faults: int = TimeControl.max_faults
    wait: float = 120.0
    grace: float = 10.0
    out: Path = field(default_factory=lambda: PROJECT_ROOT / "var" / "local-matches")
    options: dict[str, Any] = field(default_factory=dict)
    seat: int | None = None
    parallel: int = 1
    restart_at_step: int | None = None
    revoke_at_step: int | None = None

    def check(self) -> None:
        """Refuse a bad setting with a clear message (nothing is started)."""
        try:
            spec = get_game(self.game)
            spec.resolve_options(dict(self.options), self.players)
            make_policy(self.house, 0)
        except (GameError, ValueError) as exc:
            raise LocalError(str(exc)) from None
        if self.seat is not None and not 0 <= self.seat < self.players:
            raise LocalError(f"--seat must be within 0-{self.players - 1} for {self.players} players")
        for name in ("matches", "parallel", "max_faults"):
            if getattr(self, name) < 1:
                raise LocalError(f"--{name.replace('_', '-')} must be at least 1")
        for name in ("restart_at_step", "revoke_at_step"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise LocalError(f"--{name.replace('_', '-')} must be at least 1")


class LocalRunner:
    """The embedded gateway and the matches against house bots. `start()`, then `run()`, then `close()`."""

    def __init__(self, settings: LocalSettings, say: Callable[[str], None] = print) -> None:
        settings.check()
        self.settings = settings
        self.say = say
        # a prefix, as the ladder's tokens have: a bare token_urlsafe begins with '-' one time in 64, and
        # `--token -x...` is then read as an option by the bot's argument parser
        self.token = settings.token or LOCAL_TOKEN_PREFIX + secrets.token_urlsafe(18)
        self.verifier = InMemoryVerifier()
        self.verifier.add(
            self.token,
            BotIdentity(
                LOCAL_BOT_ID, "your-bot", "you", (settings.game,), max_concurrent=max(4, settings.parallel)
            ),
        )
        # port 0 (tests, several runners at once): a registry of its own
        name = settings.port or f"0-{secrets.token_hex(4)}"
        self.registry_path = PROJECT_ROOT / "var" / f"local-registry-{name}.sqlite3"
        self.registry_path.parent.mkdir(parents=True, exist_ok=True)
        self.registry_path.unlink(missing_ok=True)
        self.registry = SqliteRegistry(self.registry_path)
        self.gateway: GatewayThread | None = None
        self.records: list[MatchRecord] = []
        self.revoked = False
        self._rehearsed = False
        self._lock = threading.Lock()

    # --- the gateway ---------------------------------------------------------------------------------
    def _new_gateway(self, port: int) -> GatewayThread:
        config = GatewayConfig(
            bot_address=f"127.0.0.1:{port}",
            relay_address="127.0.0.1:0",
            auth="memory",
            registry_path=self.registry_path,
            max_matches_per_stream=max(16, self.settings.parallel),
        )
        return GatewayThread(config, self.verifier, SqliteRegistry(self.registry_path)).start()

    def start(self) -> LocalRunner:
        self.gateway = self._new_gateway(self.settings.port)
        self.say(f"gateway listening on {self.target}; connect your bot with token: {self.token}")
        return self

    @property
    def target(self) -> str:
        assert self.gateway is not None
        return self.gateway.bot_target

    def close(self, final: str | None = None) -> None:
        """Stop the gateway: with `final`, telling the bot `Goodbye` (do not reconnect)."""
        if self.gateway is not None:
            self.gateway.stop(final=final)
            self.gateway = None
        if self.settings.port == 0:
            self.registry_path.unlink(missing_ok=True)

    def _restart(self) -> None:
        assert self.gateway is not None
        port = int(self.target.rsplit(":", 1)[1])
        self.say(
            f"rehearsal: restarting the gateway; your bot gets UNAVAILABLE and has {self.settings.grace:g}s "
            "to reconnect once it is back"
        )
        self.gateway.stop()
        self.gateway = self._new_gateway(port)
        self.say("rehearsal: the gateway is back")

    def _revoke(self) -> None:
        self.say("rehearsal: revoking your token; your bot gets UNAUTHENTICATED, no further match is played")
        self.revoked = True
        self.verifier.revoke(LOCAL_BOT_ID)

    # --- the matches ---------------------------------------------------------------------------------
    def _sessions(self) -> list[SessionInfo]:
        return sessions_for_bot(self.registry, LOCAL_BOT_ID, self.settings.game)

    def wait_for_bot(self, why: str) -> SessionInfo | None:
        """The bot's stream with the most room, waiting up to `--wait` seconds for one; None if none came."""
        deadline = time.monotonic() + self.settings.wait
        told = False
        while not self.revoked:
            roomy = [s for s in self._sessions() if s.matches < s.capacity]
            if roomy:
                return max(roomy, key=lambda s: s.capacity - s.matches)
            if time.monotonic() > deadline:
                return None
            if not told:
                self.say(f"waiting up to {self.settings.wait:g}s for your bot {why}")
                told = True
            time.sleep(0.1)
        return None

    def run(self) -> list[MatchRecord]:
        s = self.settings
        first = self.wait_for_bot("to connect")
        if first is None:
            raise TimeoutError(f"no bot connected within {s.wait:g}s")
        parallel = s.parallel
        if first.capacity < parallel:
            self.say(
                f"your bot asked for {first.capacity} match(es) at once (Hello.max_concurrent_matches); "
                f"playing {first.capacity} at once, not {parallel}"
            )
            parallel = first.capacity
        s.out.mkdir(parents=True, exist_ok=True)
        slots = threading.Semaphore(parallel)
        with ThreadPoolExecutor(parallel, thread_name_prefix="local-match") as pool:
            futures = []
            for i in range(s.matches):
                slots.acquire()
                if self.revoked:
                    slots.release()
                    self.say(f"match {i + 1}/{s.matches}: not played (the token was revoked)")
                    continue
                if i and self.wait_for_bot("to (re)connect before the next match") is None:
                    slots.release()
                    self.say(f"match {i + 1}/{s.matches}: not played (no bot with room within {s.wait:g}s)")
                    break
                future = pool.submit(self._play, i)
                future.add_done_callback(lambda _: slots.release())
                futures.append(future)
            for future in futures:
                future.result()
        return self.records

    def _play(self, i: int) -> MatchRecord | None:
        s = self.settings
        seat_index = s.seat if s.seat is not None else i % s.players
        seats: list[Seat] = [
            HouseSeat(make_policy(s.house, s.seed + i * 10 + n), f"house-{s.house}-{n}")
            for n in range(s.players)
        ]
        seats[seat_index] = RemoteSeat(
            LOCAL_BOT_ID, "your-bot", self.registry, reconnect_grace=s.grace, start_grace=s.wait
        )
        control = TimeControl(s.decision_seconds, s.bank_seconds, s.max_faults)
        try:
            record = run_match(
                s.game,
                s.players,
                s.seed + i,
                seats,
                dict(s.options),
                match_id=f"local-{s.seed + i}-{secrets.token_hex(4)}",
                time_control=control,
                on_step=self._rehearse if i == 0 else None,
            )
        except SeatUnavailable as exc:
            self.say(f"match {i + 1}/{s.matches}: called off, unrated ({exc})")
            return None
        verify(record)
        path = s.out / f"{record.match_id}.json"
        record.dump(path)
        with self._lock:
            self.records.append(record)
            self._report(i, seat_index, record, path)
        return record

    def _rehearse(self, state: GameState, record: MatchRecord) -> None:
        s = self.settings
        with self._lock:
            if self._rehearsed:
                return
            if s.restart_at_step is not None and state.step == s.restart_at_step:
                self._rehearsed = s.revoke_at_step is None
                self._restart()
            if s.revoke_at_step is not None and state.step == s.revoke_at_step:
                self._rehearsed = True
                self._revoke()

    def _report(self, i: int, seat: int, record: MatchRecord, path: Path) -> None:
        result = MatchResult.of(record)
        why = result.reason + (f" by seat {result.end_seat}" if result.end_seat is not None else "")
        self.say(
            f"match {i + 1}/{self.settings.matches} seat {seat}: rank {result.seats[seat].rank} "
            f"scores {result.scores} ({record.steps} steps, {why}) -> {path}"
        )
        for fault in result.seats[seat].faults:
            self.say(
                f"  fault at step {fault.step}: {fault.kind}: {fault.reason}"
                + (" (forfeit)" if fault.forfeit else "")
            )
        for incident in record.incidents:
            self.say(f"  incident: {json.dumps(incident)}")


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """`--option name=value` pairs; values are JSON when they parse (true, 3, "x"), else plain strings."""
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise LocalError(f"--option takes name=value, not {pair!r}")
        try:
            options[name] = json.loads(raw)
        except json.JSONDecodeError:
            options[name] = raw
    return options


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="expedition-v1")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="a game option")
    parser.add_argument(
        "--house",
        default="greedy",
        help="house bot for the other seats: random, greedy, search, search-strong, mcts[:N]",
    )
    parser.add_argument("--matches", type=int, default=1)
    parser.add_argument("--seat", type=int, default=None, help="your seat in every match (default: rotating)")
    parser.add_argument("--parallel", type=int, default=1, help="matches at once on your stream")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--port", type=int, default=50051, help="where your bot connects (0: any free port)")
    parser.add_argument("--token", default=None, help="the dev token your bot uses (default: a fresh one)")
    parser.add_argument("--decision-seconds", type=float, default=LocalSettings.decision_seconds)
    parser.add_argument("--bank-seconds", type=float, default=LocalSettings.bank_seconds)
    parser.add_argument("--max-faults", type=int, default=LocalSettings.max_faults)
    parser.add_argument(
        "--wait", type=float, default=120.0, help="seconds to wait for your bot before each match"
    )
    parser.add_argument("--grace", type=float, default=10.0, help="reconnect grace after a gateway restart")
    parser.add_argument("--restart-at-step", type=int, default=None, help="rehearse a gateway restart")
    parser.add_argument("--revoke-at-step", type=int, default=None, help="rehearse a token revocation")
    parser.add_argument("--out", default=str(PROJECT_ROOT / "var" / "local-matches"))
    return parser


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        settings = LocalSettings(
            game=args.game,
            players=args.players,
            house=args.house,
            matches=args.matches,
            seed=args.seed,
            port=args.port,
            token=args.token,
            decision_seconds=args.decision_seconds,
            bank_seconds=args.bank_seconds,
            max_faults=args.max_faults,
            wait=args.wait,
            grace=args.grace,
            out=Path(args.out),
            options=parse_options(args.option),
            seat=args.seat,
            parallel=args.parallel,
            restart_at_step=args.restart_at_step,
            revoke_at_step=args.revoke_at_step,
        )
        runner = LocalRunner(settings, say=lambda line: print(line, flush=True))
    except LocalError as exc:
        print(f"local: {exc}", file=sys.stderr)
        return 2
    runner.start()
    final = None
    try:
        records = runner.run()
        final = f"the local runner played its {len(records)} match(es)"
    except TimeoutError as exc:
        print(f"local: {exc}", file=sys.stderr)
        return 1
    finally:
        runner.close(final=final or "the local runner stopped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
