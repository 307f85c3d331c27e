"""Record the replay corpus: seeded house matches of every game and option variant, as the referee writes them.

Each entry of `ENTRIES` is one match (game, player count, options, seed, the house bot of each seat); its
record is written to `<entry name>.json.gz` beside this file with a state hash after every step
(`hash_every=1`), so `test_replay_corpus.py` can name the first step at which a refactor changes a game.

Regenerate only when a game's behaviour changes on purpose, and then bump its version or rules revision
(`GameSpec.revision`) so the old records keep verifying under theirs, and add entries recorded under the new
one (`Entry.revision`; the file name then says `-r<revision>`). An existing file is left as it is unless
`--force` is given, and an entry of an earlier revision is never re-recorded (play is under the current one).

    .venv/bin/python -m tests.engine_service.games.corpus.record_corpus            # the missing files only
    .venv/bin/python -m tests.engine_service.games.corpus.record_corpus --only 'expedition-*' --force

A test helper, not part of the engine: it imports the referee and the house bots, which the games never do.
"""

from __future__ import annotations

import argparse
import fnmatch
import gzip
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine_service.games import get_game
from engine_service.policies import make_policy
from engine_service.referee import HouseSeat, MatchRecord, run_match

CORPUS_DIR = Path(__file__).parent


@dataclass(frozen=True)
class Entry:
    """One recorded match of the corpus."""

    game_id: str
    num_players: int
    seed: int
    bots: tuple[str, ...]  # the house bot of each seat
    options: dict[str, Any] = field(default_factory=dict)
    label: str = "default"  # names the option variant in the file name
    revision: int = 1  # the game's rules revision the match is recorded under

    @property
    def name(self) -> str:
        game = self.game_id.rsplit("-v", 1)[0]
        kinds = set(self.bots)
        bots = kinds.pop() if len(kinds) == 1 else "mixed"
        revision = f"-r{self.revision}" if self.revision != 1 else ""
        return f"{game}-{self.num_players}p-{self.label}{revision}-seed{self.seed}-{bots}"

    @property
    def path(self) -> Path:
        return CORPUS_DIR / f"{self.name}.json.gz"


def _bot_sets(n: int) -> list[tuple[str, ...]]:
    """All random, greedy against random (alternating seats), all greedy."""
    return [
        ("random",) * n,
        tuple("greedy" if seat % 2 == 0 else "random" for seat in range(n)),
        ("greedy",) * n,
    ]


# (game id, player counts, [(label, options)], revision); every game at 2 and at its maximum, each option
# variant the conformance suite covers, one set of every non-default option per game, and each later rules
# revision's variant that plays differently from the one before.
_PLAN: list[tuple[str, tuple[int, ...], list[tuple[str, dict[str, Any]]], int]] = [
    ("expedition-v1", (2,), [("default", {}), ("strategic", {"strategic_two_player": True})], 1),
    ("expedition-v1", (3, 4, 5), [("default", {})], 1),
    ("expedition-v1", (2,), [("strategic", {"strategic_two_player": True})], 2),  # Daidu ends the movement
    (
        "voyages-v1",
        (2, 4),
        [
            ("default", {}),
            (
                "options",
                {
                    "characters": "draft",
                    "random_city_bonuses": True,
                    "goal_draft": True,
                    "johannes_jump_cost": "printed",
                    "city_card_timing": "immediate",
                    "exchange_direction": "each",
                },
            ),
        ],
        1,
    ),
    ("voyages-v1", (4,), [("default", {})], 2),  # special_to_board logs a copy of the contracts laid out
    (
        "mp2-v1",
        (2, 4),
        [
            ("base", {}),
            ("caravans", {"caravans": True}),
            (
                "options",
                {
                    "caravans": True,
                    "special_city_repeat": "by_space",
                    "bonus_copy_scope": "with_special",
                    "extra_post_bonus": False,
                    "caravan_capacity": 3,
                    "caravan_oasis_completion": False,
                },
            ),
        ],
        1,
    ),
    ("dragonda-v1", (2, 4), [("default", {}), ("cap50", {"round_cap": 50})], 1),
]


def _entries() -> list[Entry]:
    entries = []
    for game_id, counts, variants, revision in _PLAN:
        for n in counts:
            for v, (label, options) in enumerate(variants):
                for b, bots in enumerate(_bot_sets(n)):
                    seed = 1000 * (revision - 1) + 100 * n + 10 * v + b + 1
                    entries.append(Entry(game_id, n, seed, bots, options, label, revision))
    return entries


ENTRIES = _entries()


def record(entry: Entry) -> MatchRecord:
    """Play the entry's match with house bots (each seeded from the match seed and its seat)."""
    current = get_game(entry.game_id).revision
    if entry.revision != current:
        raise ValueError(
            f"{entry.name} is of rules revision {entry.revision}; matches are played under {current}"
        )
    seats = [HouseSeat(make_policy(bot, entry.seed * 10 + seat)) for seat, bot in enumerate(entry.bots)]
    return run_match(
        entry.game_id,
        entry.num_players,
        entry.seed,
        seats,
        entry.options,
        match_id=entry.name,
        hash_every=1,
    )


def write(record_: MatchRecord, path: Path) -> None:
    # mtime=0: the same record gives the same bytes
    path.write_bytes(gzip.compress(record_.dumps().encode(), mtime=0))


def load(path: Path) -> MatchRecord:
    """A corpus file (`.json.gz`) or a plain JSON record (`.json`)."""
    data = path.read_bytes()
    return MatchRecord.loads(gzip.decompress(data).decode() if path.suffix == ".gz" else data.decode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="*", help="record only the entries whose name matches this glob")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    args = parser.parse_args(argv)
    chosen = [e for e in ENTRIES if fnmatch.fnmatch(e.name, args.only)]
    if not chosen:
        parser.error(f"no corpus entry matches {args.only!r}")
    for entry in chosen:
        if entry.path.exists() and not args.force:
            continue
        rec = record(entry)
        write(rec, entry.path)
        print(f"{entry.path.name}: {rec.steps} steps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
