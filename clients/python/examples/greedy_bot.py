"""Example bot: the house `greedy` policy, run as an external process through the SDK.

It needs the engine package (`engine_service`) importable, because it reuses the house policy, which
samples a state consistent with its observation and keeps the action the game's heuristic likes best.
Run: python greedy_bot.py --token TOKEN [--target HOST:PORT] [--seed N].
"""

from __future__ import annotations

import argparse
import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

from caravanserai_bot import Bot, BotRefused, LegalAction, Match, Request, run

from engine_service.games import Action
from engine_service.policies import Policy, make_policy


class GreedyBot(Bot):
    name = "greedy-example"
    version = "1"

    def __init__(self, seed: int = 0, max_concurrent_matches: int = 1) -> None:
        self.seed = seed
        self.max_concurrent_matches = max_concurrent_matches
        self._policies: dict[str, Policy] = {}
        self._lock = threading.Lock()

    def on_match_start(self, match: Match) -> None:
        super().on_match_start(match)
        self._policy(match.match_id, match.game_id, match.seat)

    def _policy(self, match_id: str, game_id: str, seat: int) -> Policy:
        with self._lock:
            policy = self._policies.get(match_id)
            if policy is None:
                policy = self._policies[match_id] = make_policy("greedy", self.seed)
                policy.reset(game_id, seat)
            return policy

    def choose(self, request: Request) -> str:
        observation = request.observation
        policy = self._policy(request.match_id, str(observation["game_id"]), int(observation["seat"]))
        actions = [Action(a.id, a.kind, a.details) for a in request.legal_actions]
        return policy.choose(observation, actions)

    def decide(self, observation: dict[str, Any], legal_actions: Sequence[LegalAction]) -> str:
        actions = [Action(a.id, a.kind, a.details) for a in legal_actions]
        return make_policy("greedy", self.seed).choose(observation, actions)

    def on_match_end(self, match: Match | None, result: Any) -> None:
        super().on_match_end(match, result)
        with self._lock:
            self._policies.pop(result.match_id, None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", default=os.environ.get("CARAVANSERAI_TARGET", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("CARAVANSERAI_TOKEN", ""))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrent", type=int, default=1, help="matches at once")
    parser.add_argument("--matches", type=int, default=None, help="exit after this many matches")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        run(GreedyBot(args.seed, args.concurrent), args.target, args.token, max_matches=args.matches)
    except BotRefused as exc:
        logging.error("refused: %s", exc)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
