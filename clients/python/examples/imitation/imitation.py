"""Imitation learning end to end: house `search` games -> dataset -> a numpy policy -> an SDK bot that
beats `random` over a seeded series.

    python imitation.py data   --games 60 --out search.jsonl       # play house `search` games, export rows
    python imitation.py train  --data search.jsonl --out model.npz # fit policy.LinearPolicy
    python imitation.py series --model model.npz --games 200       # the SDK bot against `random`, seeded
    python imitation.py bot    --model model.npz --token TOKEN     # play on a ladder through the SDK

`data` plays Marco Polo Expedition (2 players, `expedition-v1`: the fastest game) between two house
`search` bots with the referee and writes the records' rows with `caravan dataset export`'s code (a
ladder's rows come the same way from `caravan dataset fetch`). `series` seats the trained bot (the SDK's
`Bot.decide`, nothing else) against the house `random` bot, both seats in turn, one seed per game, and
prints the win rate with a 95% Wilson interval and the mean score difference with a 95% normal interval.

Needs the engine (`pip install -e '.[envs]'` at the repository root) and, for `bot`, the SDK.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caravanserai_bot import Bot, LegalAction, run
from policy import LinearPolicy, TrainSettings, accuracy, decisions_of, train

from engine_service.cli_dataset import record_rows, write_rows
from engine_service.envs.dataset import read_rows
from engine_service.policies.base import make_policy
from engine_service.referee import DecisionRequest, HouseSeat, Seat, run_match

GAME = "expedition-v1"


class ImitationBot(Bot):
    """The trained policy as an SDK bot: it sees what every bot sees, the observation and legal actions."""

    name = "imitation-example"
    version = "1"

    def __init__(self, policy: LinearPolicy) -> None:
        self.policy = policy

    def decide(self, observation: dict[str, Any], legal_actions: Sequence[LegalAction]) -> str:
        actions = [{"id": a.id, "kind": a.kind, "details": a.details} for a in legal_actions]
        return self.policy.choose(observation, actions)


class SdkSeat(Seat):
    """A referee seat that asks an SDK bot's `decide` in-process (the series needs no gateway)."""

    kind = "house"
    clocked = False

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.name = bot.name

    def decide(self, request: DecisionRequest) -> str:
        legal = [LegalAction(a.id, a.kind, dict(a.details)) for a in request.legal_actions]
        return self.bot.decide(request.observation, legal)


def play_search_games(games: int, first_seed: int, records: Path, level: str = "search") -> list[Path]:
    """Play `games` house-vs-house games (seeds first_seed...) and write their records."""
    records.mkdir(parents=True, exist_ok=True)
    paths = []
    for seed in range(first_seed, first_seed + games):
        path = records / f"{level}-{seed}.json"
        if not path.exists():  # a stopped run resumes where it was
            seats = [
                HouseSeat(make_policy(level, seed=seed * 10 + s), name=f"house-{level}") for s in range(2)
            ]
            run_match(GAME, 2, seed, seats, match_id=f"{level}-{seed}").dump(path)
        paths.append(path)
    return paths


@dataclass(frozen=True)
class SeriesResult:
    games: int
    wins: float  # a shared first place counts half
    score_diffs: tuple[int, ...]  # the bot's score minus random's, per game

    def win_interval(self) -> tuple[float, float, float]:
        """The win rate and its 95% Wilson interval."""
        n, p, z = self.games, self.wins / self.games, 1.96
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return p, centre - half, centre + half

    def score_interval(self) -> tuple[float, float, float]:
        """The mean score difference and its 95% normal interval."""
        n = len(self.score_diffs)
        mean = sum(self.score_diffs) / n
        var = sum((d - mean) ** 2 for d in self.score_diffs) / max(1, n - 1)
        half = 1.96 * math.sqrt(var / n)
        return mean, mean - half, mean + half


def series(
    policy: LinearPolicy, games: int, first_seed: int = 10_000, opponent: str = "random"
) -> SeriesResult:
    """The bot against a house level, seats alternating, seed `first_seed + k` for game k."""
    wins, diffs = 0.0, []
    for k in range(games):
        seed, bot_seat = first_seed + k, k % 2
        seats: list[Seat] = [HouseSeat(make_policy(opponent, seed=seed))]
        seats.insert(bot_seat, SdkSeat(ImitationBot(policy)))
        record = run_match(GAME, 2, seed, seats, match_id=f"series-{seed}")
        assert record.result is not None
        ranks, scores = record.result["ranks"], record.result["game"]["scores"]
        wins += 1.0 if ranks[bot_seat] < ranks[1 - bot_seat] else 0.5 if ranks[0] == ranks[1] else 0.0
        diffs.append(scores[bot_seat] - scores[1 - bot_seat])
    return SeriesResult(games, wins, tuple(diffs))


def fit(data: str, settings: TrainSettings, holdout: float = 0.1) -> tuple[LinearPolicy, dict[str, float]]:
    """Train on a dataset file; the policy and its figures (held-out matches are the last ones)."""
    rows = list(read_rows(data))
    matches = sorted({str(r["match"]) for r in rows})
    held = set(matches[len(matches) - max(1, int(len(matches) * holdout)) :]) if len(matches) > 1 else set()
    train_set = decisions_of(r for r in rows if str(r["match"]) not in held)
    test_set = decisions_of(r for r in rows if str(r["match"]) in held)
    policy, losses = train(train_set, settings)
    figures = {
        "rows": len(rows),
        "decisions": len(train_set),
        "final_loss": losses[-1],
        "train_accuracy": accuracy(policy, train_set),
        "held_out_accuracy": accuracy(policy, test_set),
    }
    return policy, figures


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "data":
        paths = play_search_games(args.games, args.seed, Path(args.records), args.level)
        print(f"{write_rows(record_rows(paths), args.out, 'jsonl')} rows of {len(paths)} games in {args.out}")
    elif args.command == "train":
        policy, figures = fit(args.data, TrainSettings(epochs=args.epochs, seed=args.seed))
        policy.save(args.out)
        print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()))
    elif args.command == "series":
        result = series(LinearPolicy.load(args.model), args.games, args.seed, args.opponent)
        rate, low, high = result.win_interval()
        mean, mlow, mhigh = result.score_interval()
        print(f"{result.games} games vs {args.opponent}: win rate {rate:.3f} [95% {low:.3f}-{high:.3f}], "
              f"score difference {mean:+.2f} [95% {mlow:+.2f} to {mhigh:+.2f}]")  # fmt: skip
    else:
        run(ImitationBot(LinearPolicy.load(args.model)), token=args.token, target=args.target)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    data = sub.add_parser("data", help="play house search games and export their rows")
    data.add_argument("--games", type=int, default=60)
    data.add_argument("--seed", type=int, default=1000)
    data.add_argument("--level", default="search", help="the house level that plays (default search)")
    data.add_argument("--records", default="records", help="where the match records go")
    data.add_argument("--out", default="search.jsonl")
    fitting = sub.add_parser("train", help="fit the policy on a dataset (JSON Lines or Parquet)")
    fitting.add_argument("--data", required=True)
    fitting.add_argument("--epochs", type=int, default=8)
    fitting.add_argument("--seed", type=int, default=0)
    fitting.add_argument("--out", default="model.npz")
    play = sub.add_parser("series", help="the trained bot against a house level over a seeded series")
    play.add_argument("--model", default="model.npz")
    play.add_argument("--games", type=int, default=200)
    play.add_argument("--seed", type=int, default=10_000)
    play.add_argument("--opponent", default="random")
    bot = sub.add_parser("bot", help="play through the SDK (a ladder or caravan local)")
    bot.add_argument("--model", default="model.npz")
    bot.add_argument("--token", required=True)
    bot.add_argument("--target", default="127.0.0.1:50051")
    return parser


if __name__ == "__main__":
    sys.exit(main())
