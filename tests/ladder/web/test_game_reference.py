"""A game's reference for bot authors over REST (/api/v1/games/<id>/schema/) and as a page (/games/<id>/):
every action kind with its grammar and examples, every observation field with its meaning."""

from __future__ import annotations

import pytest

from engine_service.games import get_game, list_games

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("game_id", [spec.game_id for spec in list_games()])
def test_reference_is_served_and_readable(client, game_id):
    reference = get_game(game_id).reference()
    body = client.get(f"/api/v1/games/{game_id}/schema/").json()
    assert body == reference
    page = client.get(f"/games/{game_id}/")
    assert page.status_code == 200
    html = page.content.decode()
    for kind, doc in reference["actions"].items():
        assert f'id="action-{kind}"' in html and doc["examples"][0] in html
    for name in reference["observation"]["properties"]:
        assert f"<code>{name}</code>" in html


def test_unknown_game_is_a_clear_404(client):
    response = client.get("/api/v1/games/chess-v1/schema/")
    assert response.status_code == 404 and "expedition-v1" in response.json()["detail"]
    assert client.get("/games/chess-v1/").status_code == 404
