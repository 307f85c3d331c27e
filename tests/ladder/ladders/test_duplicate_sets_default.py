"""New ladders play duplicate sets by default exactly in the games where the committed luck measurement
(bench/results/luck.json, `python -m bench luck`) found that they pay; an explicit choice wins."""

from __future__ import annotations

import json

import pytest

from bench.common import RESULTS
from engine_service.games import list_games
from ladder.ladders import services
from ladder.ladders.services import (
    DUPLICATE_SETS_GAMES,
    duplicate_sets_default,
    ladder_create,
    ladder_ensure_defaults,
)

pytestmark = pytest.mark.django_db


def measured() -> dict[str, bool]:
    return dict(json.loads((RESULTS / "luck.json").read_text())["duplicate_pays"])


def test_the_defaults_follow_the_measurement():
    assert {g for g, yes in measured().items() if yes} == set(DUPLICATE_SETS_GAMES)
    assert set(DUPLICATE_SETS_GAMES) <= {spec.game_id for spec in list_games()}


def test_new_ladders_take_their_games_default():
    for ladder in ladder_ensure_defaults():
        assert ladder.duplicate_sets is duplicate_sets_default(ladder.game_id)


def test_the_default_is_per_game(monkeypatch):
    monkeypatch.setattr(services, "DUPLICATE_SETS_GAMES", frozenset({"voyages-v1"}))
    assert ladder_create(game_id="voyages-v1", num_players=3).duplicate_sets is True
    assert ladder_create(game_id="expedition-v1", num_players=3).duplicate_sets is False


@pytest.mark.parametrize("choice", [True, False])
def test_an_explicit_choice_wins(choice):
    game_id = next(iter(DUPLICATE_SETS_GAMES), "expedition-v1")
    ladder = ladder_create(game_id=game_id, num_players=3, duplicate_sets=choice)
    assert ladder.duplicate_sets is choice
