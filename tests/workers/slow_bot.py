"""A test bot through the Python SDK: a seeded random legal action after a fixed think time, so matches last
long enough to be interrupted. Run: python slow_bot.py --target HOST:PORT --token TOKEN --delay 0.01.
With --log, it logs at INFO what the SDK says (each stream's session id, each match started or resumed on
it), so the scale-out rehearsal can tell which gateway held the bot in each match."""

from __future__ import annotations

import argparse
import logging
import random
import time
from collections.abc import Sequence
from typing import Any

from caravanserai_bot import Bot, LegalAction, run


class SlowRandomBot(Bot):
    name = "slow-random"
    version = "1"

    def __init__(self, seed: int, delay: float, concurrent: int) -> None:
        self.rng = random.Random(seed)
        self.delay = delay
        self.max_concurrent_matches = concurrent

    def decide(self, observation: dict[str, Any], legal_actions: Sequence[LegalAction]) -> str:
        time.sleep(self.delay)
        return self.rng.choice(legal_actions).id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--delay", type=float, default=0.01)
    parser.add_argument("--concurrent", type=int, default=2)
    parser.add_argument("--log", action="store_true", help="log the SDK's INFO lines")
    args = parser.parse_args()
    if args.log:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    run(SlowRandomBot(args.seed, args.delay, args.concurrent), args.target, args.token)


if __name__ == "__main__":
    main()
