"""Local test runner for bot authors: a gateway on this machine, the server's own referee, house opponents.

Layer: developer tool over the gateway and the referee (`python -m engine_service.gateway.local`). It starts
an embedded gateway (in-memory dev token, a private SQLite registry under var/), waits for your bot to
connect with that token, plays `--matches` matches of your bot against house bots (rotating your seat),
and prints each result and every fault with its step and reason; records go to `--out` and are re-checked
with `verify` (the same replay check the ladder runs). Nothing here is used by the production path.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from pathlib import Path

from engine_service.games import get_game
from engine_service.gateway.auth import BotIdentity, InMemoryVerifier
from engine_service.gateway.config import PROJECT_ROOT, GatewayConfig
from engine_service.gateway.registry import SqliteRegistry, sessions_for_bot
from engine_service.gateway.remote_seat import RemoteSeat
from engine_service.gateway.server import GatewayThread
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, Seat, TimeControl, run_match, verify

LOCAL_BOT_ID = "local"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="expedition-v1")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument(
        "--house", default="greedy", help="house bot for the other seats: random, greedy, mcts"
    )
    parser.add_argument("--matches", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--port", type=int, default=50051, help="where your bot connects")
    parser.add_argument("--token", default=None, help="the dev token your bot uses (default: a fresh one)")
    parser.add_argument("--decision-seconds", type=float, default=5.0)
    parser.add_argument("--bank-seconds", type=float, default=30.0)
    parser.add_argument("--wait", type=float, default=120.0, help="seconds to wait for your bot to connect")
    parser.add_argument("--out", default=str(PROJECT_ROOT / "var" / "local-matches"))
    args = parser.parse_args(argv)
    try:
        get_game(args.game)
        make_policy(args.house, 0)
    except ValueError as exc:
        print(f"local: {exc}", file=sys.stderr)
        return 2

    token = args.token or secrets.token_urlsafe(18)
    verifier = InMemoryVerifier()
    verifier.add(token, BotIdentity(LOCAL_BOT_ID, "your-bot", "you", (args.game,), max_concurrent=4))
    registry_path = PROJECT_ROOT / "var" / f"local-registry-{args.port}.sqlite3"
    registry_path.unlink(missing_ok=True)
    registry = SqliteRegistry(registry_path)
    config = GatewayConfig(
        bot_address=f"127.0.0.1:{args.port}",
        relay_address="127.0.0.1:0",
        auth="memory",
        registry_path=registry_path,
    )
    gateway = GatewayThread(config, verifier, SqliteRegistry(registry_path)).start()
    print(f"gateway listening on {gateway.bot_target}; connect your bot with token: {token}", flush=True)
    try:
        deadline = time.monotonic() + args.wait
        while not sessions_for_bot(registry, LOCAL_BOT_ID, args.game):
            if time.monotonic() > deadline:
                print(f"local: no bot connected within {args.wait:g}s", file=sys.stderr)
                return 1
            time.sleep(0.1)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        control = TimeControl(args.decision_seconds, args.bank_seconds)
        for i in range(args.matches):
            seat_index = i % args.players
            seats: list[Seat] = [
                HouseSeat(make_policy(args.house, args.seed + i * 10 + s), f"house-{args.house}-{s}")
                for s in range(args.players)
            ]
            seats[seat_index] = RemoteSeat(LOCAL_BOT_ID, "your-bot", registry)
            record = run_match(args.game, args.players, args.seed + i, seats, time_control=control)
            verify(record)
            path = out / f"{record.match_id}.json"
            record.dump(path)
            assert record.result is not None
            print(
                f"match {i + 1}/{args.matches} seat {seat_index}: rank {record.result['ranks'][seat_index]} "
                f"scores {record.result['game']['scores']} ({record.steps} steps) -> {path}"
            )
            for fault in record.faults:
                if fault.seat == seat_index:
                    print(
                        f"  fault at step {fault.step}: {fault.kind}: {fault.reason}"
                        + (" (forfeit)" if fault.forfeit else "")
                    )
            for incident in record.incidents:
                print(f"  incident: {json.dumps(incident)}")
    finally:
        gateway.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
