"""The `caravan` command line: games, play, series, replay verify/show, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine_service.cli import main, series_schedule


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_games_lists_expedition(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "games", "--json")
    assert code == 0
    games = {g["game_id"]: g for g in json.loads(out)}
    assert games["expedition-v1"]["min_players"] == 2 and games["expedition-v1"]["max_players"] == 5


def test_play_then_verify_and_show(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    record = tmp_path / "match.json"
    code, out, _ = run(
        capsys,
        "play",
        "expedition-v1",
        "--players",
        "4",
        "--bots",
        "mcts:8,greedy,random,random",
        "--seed",
        "7",
        "--out",
        str(record),
        "--quiet",
    )
    assert code == 0 and "rank" in out and record.exists()
    code, out, _ = run(capsys, "replay", "verify", str(record))
    assert code == 0 and "verified" in out
    code, out, _ = run(capsys, "replay", "show", str(record), "--step", "40", "--seat", "2")
    assert code == 0 and "hand (seat 2)" in out and "Kantshou" in out
    code, out, _ = run(capsys, "replay", "show", str(record), "--step", "3", "--json")
    assert code == 0 and json.loads(out)["step"] == 3

    data = json.loads(record.read_text())
    data["hashes"][str(max(int(k) for k in data["hashes"]))] = "f" * 32
    record.write_text(json.dumps(data))
    code, _, err = run(capsys, "replay", "verify", str(record))
    assert code == 1 and "diverges at step" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["play", "nope", "--players", "2", "--bots", "random,random"], "unknown game"),
        (["play", "expedition-v1", "--players", "7", "--bots", "random"], "2-5 players"),
        (["play", "expedition-v1", "--players", "2", "--bots", "random"], "names 1 bot"),
        (["play", "expedition-v1", "--players", "2", "--bots", "random,wizard"], "unknown house bot"),
        (
            ["play", "expedition-v1", "--players", "2", "--bots", "random,random", "--option", "x=1"],
            "unknown option",
        ),
        (
            ["play", "expedition-v1", "--players", "2", "--bots", "random,random", "--option", "oops"],
            "name=value",
        ),
        (["play", "expedition-v1", "--players", "two", "--bots", "random"], "invalid int"),
        (["replay", "verify", "/no/such/file.json"], "cannot read"),
        (["replay", "show", "/no/such/file.json"], "cannot read"),
        (
            ["series", "expedition-v1", "--players", "2", "--bots", "random,random", "--games", "0"],
            "at least 1",
        ),
    ],
)
def test_bad_arguments_get_a_message_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_series_rotates_seats_over_each_seed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    schedule = series_schedule(["a", "b", "c"], 6, 10)
    assert [seed for seed, _, _ in schedule] == [10, 10, 10, 11, 11, 11]
    assert [bots for _, bots, _ in schedule[:3]] == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    summary = tmp_path / "series.json"
    code, out, _ = run(
        capsys,
        "series",
        "expedition-v1",
        "--players",
        "3",
        "--bots",
        "greedy,random,random",
        "--games",
        "6",
        "--seed",
        "1",
        "--quiet",
        "--json-out",
        str(summary),
    )
    assert code == 0 and "win rate" in out
    data = json.loads(summary.read_text())
    assert [b["games"] for b in data["bots"]] == [6, 6, 6]
    assert sum(b["wins"] for b in data["bots"]) == pytest.approx(6)
