"""Dataset rows of a local record and `caravan dataset`: export to JSON Lines and Parquet, and fetch over
HTTP page after page (a throttled page waited out, resuming from a cursor), with clear errors."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from engine_service.cli import main
from engine_service.envs.dataset import COLUMNS, DatasetError, decision_rows, jsonl_line, read_rows
from engine_service.policies.base import make_policy
from engine_service.referee import HouseSeat, MatchRecord, replay, run_match


@pytest.fixture(scope="module")
def record() -> MatchRecord:
    seats = [HouseSeat(make_policy("random", seed=s)) for s in range(3)]
    return run_match("expedition-v1", 3, 77, seats, match_id="m77")


def test_rows_are_each_seats_view_of_the_record(record: MatchRecord) -> None:
    rows = list(decision_rows(record))
    assert [(r["seat"], r["action"]) for r in rows] == record.actions
    assert all(list(r) == list(COLUMNS) and r["match"] == "m77" for r in rows)
    for row in rows[::40]:
        state = replay(record, upto=row["step"], check=False)
        assert row["observation"] == state.observation(row["seat"])
    assert list(decision_rows(record, start=10, stop=13)) == rows[10:13]
    unfinished = MatchRecord.from_json({**record.to_json(), "result": None})
    with pytest.raises(DatasetError, match="not finished"):
        next(decision_rows(unfinished))


def test_export_writes_json_lines_and_parquet(record: MatchRecord, tmp_path: Path) -> None:
    record.dump(tmp_path / "a.json")
    expected = list(decision_rows(record))
    assert main(["dataset", "export", str(tmp_path), "--out", str(tmp_path / "rows.jsonl")]) == 0
    assert list(read_rows(str(tmp_path / "rows.jsonl"))) == expected
    assert main(["dataset", "export", str(tmp_path / "a.json"), "--out", str(tmp_path / "rows.parquet")]) == 0
    assert list(read_rows(str(tmp_path / "rows.parquet"))) == expected
    assert (
        main(["dataset", "export", str(tmp_path / "missing.json"), "--out", str(tmp_path / "x.jsonl")]) == 2
    )


class _Pages(BaseHTTPRequestHandler):
    rows: list[dict[str, object]] = []
    throttled_once: set[str] = set()
    seen: list[str] = []

    def do_GET(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        self.seen.append(self.path)
        start = int(query.get("cursor", ["0"])[0])
        limit = int(query["limit"][0])
        if start == limit and self.path not in self.throttled_once:  # the second page is throttled once
            self.throttled_once.add(self.path)
            self.send_response(429)
            self.send_header("Retry-After", "0")
            self.end_headers()
            return
        page = self.rows[start : start + limit]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        if start + limit < len(self.rows):
            self.send_header("X-Dataset-Next-Cursor", str(start + limit))
        self.end_headers()
        self.wfile.write("".join(jsonl_line(r) for r in page).encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server(record: MatchRecord) -> Iterator[str]:
    _Pages.rows = list(decision_rows(record))[:25]
    _Pages.throttled_once, _Pages.seen = set(), []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    thread.join()


def test_fetch_follows_the_cursor_waits_out_throttling_and_resumes(server: str, tmp_path: Path) -> None:
    out = tmp_path / "ladder.jsonl"
    base = ["dataset", "fetch", "--url", server, "--ladder", "3", "--limit", "10", "--bots", "4,5"]
    assert main([*base, "--out", str(out)]) == 0
    assert list(read_rows(str(out))) == _Pages.rows
    assert all(path.startswith("/api/v1/ladders/3/dataset/?limit=10&bots=4%2C5") for path in _Pages.seen)
    assert len(_Pages.seen) == 4  # three pages, the second asked twice
    resumed = tmp_path / "resumed.jsonl"
    resumed.write_text("".join(jsonl_line(r) for r in _Pages.rows[:20]))
    assert main([*base, "--cursor", "20", "--append", "--out", str(resumed)]) == 0
    assert list(read_rows(str(resumed))) == _Pages.rows
    assert main([*base, "--out", str(tmp_path / "ladder.parquet")]) == 0
    assert list(read_rows(str(tmp_path / "ladder.parquet"))) == _Pages.rows
    assert json.loads(out.read_text().splitlines()[0])["step"] == 0


def test_fetch_reports_a_refused_page(tmp_path: Path) -> None:
    args = [
        "dataset",
        "fetch",
        "--url",
        "http://127.0.0.1:9",
        "--ladder",
        "1",
        "--out",
        str(tmp_path / "x.jsonl"),
    ]
    assert main(args) == 2
