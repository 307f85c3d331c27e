"""`caravan schema <game>`: the reference bundle offline, the same object the ladder serves at
/api/v1/games/<game>/schema/ for every game, one member alone with `--member`, and clear errors."""

from __future__ import annotations

import json

import pytest

from engine_service.cli import main
from engine_service.cli_schema import MEMBERS
from engine_service.games import list_games


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("game_id", [spec.game_id for spec in list_games()])
def test_the_bundle_is_what_the_ladder_serves(capsys, client, game_id):
    code, out, _ = run(capsys, "schema", game_id)
    assert code == 0
    bundle = json.loads(out)
    served = client.get(f"/api/v1/games/{game_id}/schema/")
    assert served.status_code == 200
    assert bundle == served.json()
    assert tuple(bundle) == MEMBERS and bundle["game_id"] == game_id


def test_one_member_alone_and_compact(capsys):
    code, out, _ = run(capsys, "schema", "expedition-v1", "--member", "observation", "--compact")
    assert code == 0 and len(out.splitlines()) == 1
    observation = json.loads(out)
    assert observation["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert {"game_id", "seat", "step"} <= set(observation["properties"])
    code, out, _ = run(capsys, "schema", "expedition-v1", "--member", "actions.move.details")
    assert code == 0 and json.loads(out)["required"] == ["pay", "piece", "requirement", "to"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("schema", "chess-v1"), "unknown game 'chess-v1'; known games: dragonda-v1"),
        (("schema", "expedition-v1", "--member", "actions.sail"), "actions has no member 'sail'"),
        (("schema", "expedition-v1", "--member", "game_id.x"), "none (not an object)"),
    ],
)
def test_bad_arguments_say_what_is_known(capsys, args, words):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert words in " ".join(err.split())
