"""`caravan dataset`: per-decision rows from match records, as JSON Lines or Parquet.

- `caravan dataset export RECORD... --out FILE`: rows of local match records (`caravan play --out`, the
  ladder's `/api/v1/matches/<id>/replay/`); a directory stands for its `*.json` records.
- `caravan dataset fetch --url URL --ladder ID --out FILE`: a ladder's export over REST
  (`/api/v1/ladders/<id>/dataset/`, filters `--bots`, `--since`, `--until`, `--min-rating`), page after
  page; each page is appended as it arrives and its cursor printed, so `--cursor C --append` resumes an
  export that stopped. A throttled page (429) is asked again after its Retry-After, a bounded number of times.
The rows and the formats are `engine_service.envs.dataset`'s (Parquet needs the `envs` extra's pyarrow).

Layer: a command-line front over engine_service.envs.dataset and the referee's records; no Django. Its only
I/O: the files named, stdout/stderr and, for `fetch`, HTTP to the URL given.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine_service.envs.dataset import (
    DatasetError,
    Row,
    decision_rows,
    read_rows,
    write_jsonl,
    write_parquet,
)
from engine_service.referee import MatchRecord
from engine_service.referee.record import RecordError

MAX_THROTTLED_RETRIES = 5
PAGE_ROWS = 1000


class FetchError(Exception):
    """A page the server refused (its status and reason), or one that could not be reached."""


def record_paths(sources: list[str]) -> list[Path]:
    """The record files named, a directory standing for its `*.json` files (sorted)."""
    paths: list[Path] = []
    for source in sources:
        path = Path(source)
        if path.is_dir():
            paths.extend(sorted(path.glob("*.json")))
        elif path.is_file():
            paths.append(path)
        else:
            raise DatasetError(f"{source}: no such record file or directory")
    return paths


def record_rows(paths: list[Path]) -> Iterator[Row]:
    for path in paths:
        record = MatchRecord.load(path)
        yield from decision_rows(record, match=record.match_id or path.stem)


def write_rows(rows: Iterator[Row], out: str, fmt: str, *, append: bool = False) -> int:
    if fmt == "parquet":
        if append:
            raise DatasetError("--append is for JSON Lines; a Parquet file is written whole")
        with open(out, "wb") as binary:
            return write_parquet(rows, binary)
    with open(out, "a" if append else "w", encoding="utf-8") as text:
        return write_jsonl(rows, text)


def cmd_export(args: argparse.Namespace) -> int:
    count = write_rows(record_rows(record_paths(args.records)), args.out, _format(args))
    print(f"{count} rows written to {args.out}", file=sys.stderr)
    return 0


def page_url(args: argparse.Namespace, cursor: str | None) -> str:
    query: dict[str, Any] = {"limit": args.limit}
    for name in ("bots", "since", "until", "min_rating"):
        if getattr(args, name) is not None:
            query[name] = getattr(args, name)
    if cursor:
        query["cursor"] = cursor
    base = args.url.rstrip("/")
    return f"{base}/api/v1/ladders/{args.ladder}/dataset/?{urllib.parse.urlencode(query)}"


def fetch_page(url: str, *, sleep: Callable[[float], None] = time.sleep) -> tuple[list[Row], str | None]:
    """One page's rows and the next cursor (None on the last page), waiting out throttling."""
    for _attempt in range(MAX_THROTTLED_RETRIES + 1):
        try:
            with urllib.request.urlopen(url, timeout=120) as response:
                rows = [json.loads(line) for line in response.read().decode().splitlines() if line.strip()]
                return rows, response.headers.get("X-Dataset-Next-Cursor")
        except urllib.error.HTTPError as exc:
            if exc.code != 429:
                raise FetchError(f"{url}: {exc.code} {exc.read().decode(errors='replace')[:300]}") from exc
            sleep(float(exc.headers.get("Retry-After") or 1))
        except urllib.error.URLError as exc:
            raise FetchError(f"{url}: {exc.reason}") from exc
    raise FetchError(f"{url}: still throttled after {MAX_THROTTLED_RETRIES} waits")


def cmd_fetch(args: argparse.Namespace) -> int:
    fmt = _format(args)
    target = args.out if fmt == "jsonl" else args.out + ".partial.jsonl"
    cursor, total, append = args.cursor, 0, args.append or (fmt == "parquet" and args.cursor is not None)
    while True:
        rows, cursor = fetch_page(page_url(args, cursor))
        total += write_rows(iter(rows), target, "jsonl", append=append)
        append = True
        print(f"{total} rows; next cursor: {cursor or 'none (complete)'}", file=sys.stderr)
        if cursor is None:
            break
    if fmt == "parquet":
        write_rows(read_rows(target), args.out, "parquet")
        Path(target).unlink()
    print(f"{total} rows written to {args.out}", file=sys.stderr)
    return 0


def _format(args: argparse.Namespace) -> str:
    return str(args.format or ("parquet" if args.out.endswith(".parquet") else "jsonl"))


def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (DatasetError, FetchError, RecordError, OSError) as exc:
            print(f"caravan dataset: {exc}", file=sys.stderr)
            return 2

    return run


def add_parser(sub: Any) -> None:
    """`dataset`, added to `caravan`'s subcommands."""
    dataset = sub.add_parser("dataset", help="per-decision rows of recorded matches (JSON Lines or Parquet)")
    commands = dataset.add_subparsers(dest="dataset_command", required=True)
    export = commands.add_parser("export", help="rows of local match records")
    export.add_argument("records", nargs="+", help="record files (JSON) or directories of them")
    fetch = commands.add_parser("fetch", help="a ladder's export over REST, page by page (resumable)")
    fetch.add_argument("--url", required=True, help="the ladder's base URL, e.g. https://ladder.example")
    fetch.add_argument("--ladder", required=True, type=int, help="the ladder's id")
    fetch.add_argument("--bots", help="comma-separated bot ids: matches where one of them played")
    fetch.add_argument("--since", help="finished at or after (ISO 8601)")
    fetch.add_argument("--until", help="finished before (ISO 8601)")
    fetch.add_argument(
        "--min-rating", dest="min_rating", type=float, help="every seat's Elo before the match"
    )
    fetch.add_argument("--limit", type=int, default=PAGE_ROWS, help=f"rows per page (default {PAGE_ROWS})")
    fetch.add_argument("--cursor", help="resume from this cursor (printed after each page)")
    fetch.add_argument("--append", action="store_true", help="append to --out (JSON Lines) when resuming")
    for command, func in ((export, cmd_export), (fetch, cmd_fetch)):
        command.add_argument("--out", required=True, help="the file to write (.jsonl or .parquet)")
        command.add_argument("--format", choices=["jsonl", "parquet"], help="default: from --out's suffix")
        command.set_defaults(func=_guarded(func))
