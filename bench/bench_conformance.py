"""The conformance suite's seeded checks over many seeds, and every seat's replay frames (the suite checks one
seed of each setting, and the frames of the spectator and one seat).

Every game, player count and option variant (`CONFIGS` of tests/engine_service/games/test_conformance.py),
seeds 1 to N each (CARAVANSERAI_BENCH_CONFORMANCE_SEEDS, default N = 20, which holds the seeds the suite
uses), each seed through every seeded check of the suite: the JSON round trip keeps the state and its future,
every legal action applies and ids are unique, illegal actions raise and change nothing, the random game
ends under the cap with a valid result, no hidden information leaks, states sampled from an observation
agree with it, acting on a clone leaves the original unchanged; the random game of the seed follows the
game's reference for bot authors (tests/engine_service/games/test_reference.py; no id of two kinds over
all the setting's seeds); and the random match of the seed, recorded, is told in the game's own words in
the frames of the spectator and of every seat. Reported per setting: seeds and checks passed; any failure is
printed and makes the run fail. Played on CARAVANSERAI_BENCH_CONFORMANCE_JOBS processes (default 2).
Results: bench/results/conformance.json.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from bench.common import check_settings
from tests.engine_service.games import test_conformance as conformance
from tests.engine_service.games.test_reference import check_random_game_against_reference

SEEDED_CHECKS: tuple[Callable[[conformance.Config, int], None], ...] = (
    conformance.test_json_round_trip_keeps_state_and_future,
    conformance.test_every_legal_action_applies_and_ids_are_unique,
    conformance.test_illegal_actions_raise_and_change_nothing,
    conformance.test_random_games_end_under_the_cap_with_valid_results,
    conformance.test_no_hidden_information_leaks,
    conformance.test_sampled_states_are_consistent_with_the_observation,
    conformance.test_acting_on_a_clone_leaves_the_original_unchanged,
)


def check_setting(game_id: str, players: int, options: dict[str, Any], seeds: int) -> dict[str, Any]:
    config = conformance.Config(game_id, players, options)
    kind_of_id: dict[str, str] = {}  # the ids of the setting's games: none may be of two kinds
    passed, failures = 0, []
    for seed in range(1, seeds + 1):
        checks = [(check.__name__, partial(check, config, seed)) for check in SEEDED_CHECKS]
        checks.append(("reference", partial(check_random_game_against_reference, config, seed, kind_of_id)))
        checks.append(
            ("frames", partial(conformance.check_replay_frames_in_words, config, seed, range(players)))
        )
        for name, check in checks:
            try:
                check()
            except (Exception, pytest.fail.Exception) as exc:
                failures.append(f"{conformance._config_id(*config)} seed {seed} {name}: {exc!r}"[:500])
            else:
                passed += 1
    return {
        "game": game_id,
        "players": players,
        "options": options,
        "seeds": seeds,
        "passed": passed,
        "failed": len(failures),
        "failures": failures[:5],
    }


def main() -> int:
    return check_settings(
        "conformance",
        check_setting,
        conformance.CONFIGS,
        int(os.environ.get("CARAVANSERAI_BENCH_CONFORMANCE_SEEDS", "20")),
        (
            ["game", "players", "options", "seeds", "checks passed", "failed"],
            ["game", "players", "options", "seeds", "passed", "failed"],
        ),
        jobs=int(os.environ.get("CARAVANSERAI_BENCH_CONFORMANCE_JOBS", "2")),
    )


if __name__ == "__main__":
    raise SystemExit(main())
