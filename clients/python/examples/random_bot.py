"""Example bot: a uniformly random legal action. Run: python random_bot.py --token TOKEN [--target HOST:PORT]."""

from __future__ import annotations

import argparse
import logging
import os
import random
from collections.abc import Sequence
from typing import Any

from caravanserai_bot import Bot, BotRefused, LegalAction, run


class RandomBot(Bot):
    name = "random-example"
    version = "1"

    def __init__(self, seed: int | None = None, max_concurrent_matches: int = 1) -> None:
        self.rng = random.Random(seed)
        self.max_concurrent_matches = max_concurrent_matches

    def decide(self, observation: dict[str, Any], legal_actions: Sequence[LegalAction]) -> str:
        return self.rng.choice(legal_actions).id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", default=os.environ.get("CARAVANSERAI_TARGET", "127.0.0.1:50051"))
    parser.add_argument("--token", default=os.environ.get("CARAVANSERAI_TOKEN", ""))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--concurrent", type=int, default=1, help="matches at once")
    parser.add_argument("--matches", type=int, default=None, help="exit after this many matches")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        run(RandomBot(args.seed, args.concurrent), args.target, args.token, max_matches=args.matches)
    except BotRefused as exc:
        logging.error("refused: %s", exc)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
