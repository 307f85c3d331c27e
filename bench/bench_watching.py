"""What watching a match costs the web process per poll, at the start and at the end of a long match: the
frame served from the states `engine_service.referee.snapshots` keeps against the same frame re-simulated
from the start (what every poll cost before), side by side in this run.

Per game, the longest of SEEDS seeded matches of random bots (random play makes the longest games) is the
match watched. Three polls are timed, in CPU seconds of this process, one at each of the match's first
WINDOW steps and one at each of its last WINDOW steps (a window spans every offset from the kept states):
- "replay poll": one spectator frame of the finished match (`frames(record, start=step, count=1)`), as
  the viewer's frames endpoint computes it, with the states kept by earlier polls;
- "live poll": the spectator frame after the actions so far of a match being played, a new record of the
  actions each time (as `ladder.replays.selectors._live` builds it), the states kept by the earlier polls;
- "from the start": the same frame with no kept state (the cache cleared before each call).
"spectators" is how many spectators, each watching a different match at one poll per 2 seconds, one web
process's CPU serves at the live poll's cost near the end (watchers of one match share its frame).

Engine only (no Django, no HTTP: the request stack adds the same few milliseconds at any step). Each
figure is the mean over its window. Run: `python -m bench watching`; writes
bench/results/watching.json with the load average it ran at.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from functools import partial

from bench.common import print_table, write_results
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, run_match
from engine_service.referee.frames import frames
from engine_service.referee.snapshots import snapshots_clear

GAMES = (("expedition-v1", 3, {}), ("voyages-v1", 3, {}), ("mp2-v1", 3, {}), ("dragonda-v1", 3, {}))
SEEDS = range(1, 6)
WINDOW = 100  # polls at each step of the first and of the last WINDOW steps
POLL_SECONDS = 2.0
HEADERS = ["game", "steps", "poll", "CPU ms, steps 1-100", "CPU ms, last 100", "last / first"]


def longest_match(game_id: str, players: int, options: dict) -> MatchRecord:
    records = [
        run_match(
            game_id,
            players,
            seed,
            [HouseSeat(make_policy("random", seed=seed + i)) for i in range(players)],
            options=options,
        )
        for seed in SEEDS
    ]
    return max(records, key=lambda r: r.steps)


def live_record(record: MatchRecord, step: int) -> MatchRecord:
    return MatchRecord(
        game_id=record.game_id,
        num_players=record.num_players,
        options=record.options,
        seed=record.seed,
        seats=[],
        actions=list(record.actions[:step]),
    )


def cpu_ms(polls: Sequence[Callable[[], object]], *, before: Callable[[], None] = lambda: None) -> float:
    """The mean CPU milliseconds of one call of each of `polls`."""
    total = 0.0
    for poll in polls:
        before()
        started = time.process_time()
        poll()
        total += time.process_time() - started
    return total * 1000 / len(polls)


def replay_poll(record: MatchRecord, step: int) -> object:
    return frames(record, start=step, count=1)


def live_poll(record: MatchRecord, step: int) -> object:
    return frames(live_record(record, step), start=step, count=1)


def measure(record: MatchRecord) -> dict[str, dict[str, float]]:
    polls: dict[str, dict[str, float]] = {"replay poll": {}, "live poll": {}, "from the start": {}}
    snapshots_clear()
    frames(record, start=0, count=record.steps + 1)  # earlier polls kept their states on the way
    windows = {"early": range(1, WINDOW + 1), "end": range(record.steps - WINDOW + 1, record.steps + 1)}
    for label, steps in windows.items():
        polls["replay poll"][label] = cpu_ms([partial(replay_poll, record, step) for step in steps])
        polls["live poll"][label] = cpu_ms([partial(live_poll, record, step) for step in steps])
        scratch = [partial(replay_poll, record, step) for step in steps]
        polls["from the start"][label] = cpu_ms(scratch, before=snapshots_clear)
    return polls


def main() -> int:
    load = [round(v, 2) for v in os.getloadavg()]
    rows, figures = [], {}
    for game_id, players, options in GAMES:
        record = longest_match(game_id, players, options)
        polls = measure(record)
        spectators = int(POLL_SECONDS * 1000 / polls["live poll"]["end"])
        figures[game_id] = {"steps": record.steps, "seed": record.seed, **polls, "spectators": spectators}
        for poll, at in polls.items():
            ratio = at["end"] / at["early"]
            rows.append(
                [game_id, record.steps, poll, f"{at['early']:.2f}", f"{at['end']:.2f}", f"{ratio:.2f}"]
            )
        print(f"{game_id}: {spectators} spectators of different matches per web process at one poll per 2 s")
    print(f"mean CPU per poll over each window of {WINDOW} steps, load average {load} at the start")
    print_table(HEADERS, rows)
    write_results("watching", {"load_average": load, "window_steps": WINDOW, "games": figures})
    return 0
