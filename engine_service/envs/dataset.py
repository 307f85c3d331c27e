"""A finished match as per-decision dataset rows, and the rows written as JSON Lines or Parquet.

Engine layer, pure but for the writers' output stream: imports the games, the referee's records and this
package's action space (no numpy, no pettingzoo: the ladder's export imports this module); `pyarrow` is
imported only by `write_parquet`. A row holds what its seat saw when it decided, and nothing more: the
observation is `GameState.observation(seat)` re-simulated from the record (as the replays do), the legal
actions are that seat's, and the chosen action is its own. The final rank and score are the match's public
result. Never a hidden item of another seat, never the state itself.

A row (format `ROW_FORMAT`), in this key order:
- `match`: the match's id (the ladder's integer id, or a record's `match_id`); `game_id`, `num_players`;
- `step` (0-based decision number in the match), `seat`, `bot` (the seat's bot name);
- `observation`: the seat's JSON observation at that step; `legal_actions`: `[{"id", "kind", "details"}]`;
- `action`: the chosen id; `action_index`: its index in the game's stable action space
  (`engine_service.envs.action_space`), or null where that space cannot place it;
- `seconds`: the seat's measured decision time (null for an unclocked house seat or an old record);
- `final_rank`, `final_score`: the seat's result in the match (rank 1 best; a forfeit ranks last).
In Parquet, `observation` and `legal_actions` are JSON text columns (their shape varies by game).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from engine_service.envs.action_space import ActionSpaceError, action_space
from engine_service.games import get_game
from engine_service.referee import MatchRecord
from engine_service.referee.replay import apply_recorded
from engine_service.referee.result import MatchResult

ROW_FORMAT = "caravanserai-decisions/1"
COLUMNS = (
    "match",
    "game_id",
    "num_players",
    "step",
    "seat",
    "bot",
    "observation",
    "legal_actions",
    "action",
    "action_index",
    "seconds",
    "final_rank",
    "final_score",
)
Row = dict[str, Any]


class DatasetError(ValueError):
    """A record that is unfinished or does not replay, or a writer that is not available; says which."""


def decision_rows(
    record: MatchRecord, *, match: int | str | None = None, start: int = 0, stop: int | None = None
) -> Iterator[Row]:
    """The rows of steps `start` to `stop` (exclusive; default: to the end) of a finished match."""
    if record.result is None:
        raise DatasetError(f"match {match or record.match_id} is not finished: it has no result")
    result = MatchResult.of(record)
    spec = get_game(record.game_id)
    state = spec.new_state(record.num_players, record.seed, record.options, revision=record.revision)
    try:
        space = action_space(record.game_id)
    except ActionSpaceError:
        space = None
    names = {info.seat: info.name for info in record.seats}
    last = record.steps if stop is None else min(stop, record.steps)
    for step, (seat, recorded) in enumerate(record.actions[:last]):
        if step >= start:
            legal = state.legal_actions(seat)
            chosen = (
                recorded if any(a.id == recorded for a in legal) else state.upgrade_action_id(seat, recorded)
            )
            row: Row = {
                "match": match if match is not None else record.match_id,
                "game_id": record.game_id,
                "num_players": record.num_players,
                "step": step,
                "seat": seat,
                "bot": names.get(seat, ""),
                "observation": state.observation(seat),
                "legal_actions": [a.to_json() for a in legal],
                "action": chosen,
                "action_index": _index(space, legal, chosen),
                "seconds": (record.clocks.get(step) or [None])[0],
                "final_rank": result.seats[seat].rank,
                "final_score": result.seats[seat].score,
            }
            yield row
        apply_recorded(state, seat, recorded)


def _index(space: Any, legal: Any, chosen: str) -> int | None:
    if space is None:
        return None
    try:
        index: int = space.index(legal, chosen)
    except ActionSpaceError:
        return None
    return index


def jsonl_line(row: Row) -> str:
    """One row as a line of JSON Lines (keys in `COLUMNS` order, UTF-8 text, newline-terminated)."""
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_jsonl(rows: Iterable[Row], out: IO[str]) -> int:
    """Write rows as JSON Lines; the number written."""
    count = 0
    for row in rows:
        out.write(jsonl_line(row))
        count += 1
    return count


def parquet_table(rows: Iterable[Row]) -> Any:
    """The rows as a `pyarrow.Table` (observation and legal actions as JSON text)."""
    try:
        import pyarrow as pa
    except ImportError as exc:  # the ladder does not depend on pyarrow
        raise DatasetError("Parquet needs pyarrow: pip install 'caravanserai[envs]'") from exc
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    for row in rows:
        for name in COLUMNS:
            value = row[name]
            columns[name].append(json.dumps(value, separators=(",", ":")) if name in _JSON_COLUMNS else value)
    schema = pa.schema([(name, _ARROW_TYPES[name](pa)) for name in COLUMNS], metadata={"format": ROW_FORMAT})
    columns["match"] = [str(value) for value in columns["match"]]
    return pa.table(columns, schema=schema)


def write_parquet(rows: Iterable[Row], out: IO[bytes]) -> int:
    """Write rows as one Parquet file; the number written."""
    import pyarrow.parquet as pq

    table = parquet_table(rows)
    pq.write_table(table, out)
    return int(table.num_rows)


def read_rows(path: str) -> Iterator[Row]:
    """The rows of a JSON Lines or Parquet file written here (Parquet's JSON columns parsed back)."""
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        for row in pq.read_table(path).to_pylist():
            for name in _JSON_COLUMNS:
                row[name] = json.loads(row[name])
            yield row
        return
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


_JSON_COLUMNS = ("observation", "legal_actions")
_ARROW_TYPES: dict[str, Any] = {
    "match": lambda pa: pa.string(),
    "game_id": lambda pa: pa.string(),
    "num_players": lambda pa: pa.int8(),
    "step": lambda pa: pa.int32(),
    "seat": lambda pa: pa.int8(),
    "bot": lambda pa: pa.string(),
    "observation": lambda pa: pa.string(),
    "legal_actions": lambda pa: pa.string(),
    "action": lambda pa: pa.string(),
    "action_index": lambda pa: pa.int32(),
    "seconds": lambda pa: pa.float64(),
    "final_rank": lambda pa: pa.int8(),
    "final_score": lambda pa: pa.int32(),
}
