"""The stable action space checked over thousands of seeded random games (the suite checks 34).

Every game, player count and option variant (`engine_service.envs.space_check.settings`), GAMES_PER_SETTING
games each (CARAVANSERAI_BENCH_SPACE_GAMES, default 120: 2,040 games), played with uniformly random legal
actions from seeds 10,000 + i, every decision checked by `check_random_game`: each legal action maps to a
distinct index in the game's `Discrete(n)` and back, the mask marks exactly the legal ones, and a fixed id
keeps its index in every state and game. Reported per setting: games, decisions and actions checked, the
most legal actions of one decision; any failure is printed and makes the run fail. Played on
CARAVANSERAI_BENCH_SPACE_JOBS processes (default 2). Results: bench/results/action_space.json.
"""

from __future__ import annotations

import os
from typing import Any

from bench.common import check_settings
from engine_service.envs.action_space import ActionSpaceError, action_space
from engine_service.envs.space_check import check_random_game, settings

FIRST_SEED = 10_000


def check_setting(game_id: str, players: int, options: dict[str, object], games: int) -> dict[str, Any]:
    space, fixed_seen = action_space(game_id), {}
    decisions = actions = 0
    failures: list[str] = []
    for seed in range(FIRST_SEED, FIRST_SEED + games):
        try:
            d, a = check_random_game(space, game_id, players, options, seed, fixed_seen)
        except ActionSpaceError as exc:
            failures.append(str(exc))
            continue
        decisions, actions = decisions + d, actions + a
    return {
        "game": game_id,
        "players": players,
        "options": options,
        "games": games,
        "decisions": decisions,
        "actions": actions,
        "space": space.size,
        "failures": failures[:5],
        "failed_games": len(failures),
    }


def main() -> int:
    return check_settings(
        "action_space",
        check_setting,
        list(settings()),
        int(os.environ.get("CARAVANSERAI_BENCH_SPACE_GAMES", "120")),
        (
            ["game", "players", "options", "games", "decisions", "actions", "failed"],
            ["game", "players", "options", "games", "decisions", "actions", "failed_games"],
        ),
        jobs=int(os.environ.get("CARAVANSERAI_BENCH_SPACE_JOBS", "2")),
    )


if __name__ == "__main__":
    raise SystemExit(main())
