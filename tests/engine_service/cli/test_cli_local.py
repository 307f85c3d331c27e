"""`caravan local`: the local runner's arguments reach it, and bad ones get a message and exit 2."""

from __future__ import annotations

import pytest

from engine_service.cli import main


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--players", "9"], "2-5 players"),
        (["--option", "nope"], "--option takes name=value"),
        (["--seat", "2"], "--seat must be within 0-1"),
        (["--game", "chess-v9"], "chess-v9"),
    ],
)
def test_bad_local_arguments_exit_2_with_a_message(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["local", *args]) == 2
    assert words in capsys.readouterr().err


def test_local_help_lists_the_runner_switches(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["local", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for switch in ("--option", "--players", "--seat", "--parallel", "--restart-at-step", "--revoke-at-step"):
        assert switch in text
