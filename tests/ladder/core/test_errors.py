"""Every bad input is a 4xx in the API's JSON error format, never a 500; the 404 page shows no URL map or
file path (DEBUG on or off); the API root lists the endpoints; the docs load only installed assets."""

from __future__ import annotations

import base64
import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

API = "/api/v1/"


def cursor(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def assert_json_error(response, status: int) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"detail", "errors"} and body["detail"]
    return body


@pytest.mark.parametrize("position", ["abc", "1e999", "nan", str(2**70)])
def test_a_bad_cursor_position_is_a_404(api, ladder2, position):
    for address in (f"{API}matches/", f"{API}ladders/{ladder2.pk}/leaderboard/", f"{API}tournaments/"):
        assert_json_error(api.get(address, {"cursor": cursor(f"p={position}")}), 404)


def test_deeply_nested_json_is_a_400_on_every_json_endpoint(alice_api, api, staff_user):
    staff = APIClient()
    staff.force_authenticate(staff_user)
    deep = "[" * 2000 + "]" * 2000
    for client, address in ((api, "auth/token/"), (alice_api, "bots/"), (staff, "matches/")):
        response = client.generic("POST", API + address, deep, content_type="application/json")
        assert "nested too deeply" in assert_json_error(response, 400)["detail"]
    nested: list = []
    for _ in range(100):  # parses, but deeper than any of our inputs: refused before a validator recurses
        nested = [nested]
    moderately = json.dumps({"name": "x", "games": nested})
    assert_json_error(
        alice_api.generic("POST", f"{API}bots/", moderately, content_type="application/json"), 400
    )


@pytest.mark.parametrize(
    "value", ["2025-01-01T00:00:00+16:00", "2025-01-01T00:00:00-23:59", "9999-12-31T23:00-05:00"]
)
def test_far_utc_offsets_are_converted_or_refused(api, value):
    response = api.get(f"{API}matches/", {"since": value})
    assert response.status_code in (200, 400)
    if response.status_code == 400:
        assert_json_error(response, 400)
    assert api.get(f"{API}matches/", {"until": value}).status_code in (200, 400)


def test_a_body_over_the_limit_is_a_json_413(alice_api, api):
    body = json.dumps({"name": "x" * (3 * 1024 * 1024)})
    assert_json_error(alice_api.generic("POST", f"{API}bots/", body, content_type="application/json"), 413)
    assert_json_error(api.generic("POST", f"{API}auth/token/", body, content_type="application/json"), 413)


def test_unknown_api_addresses_are_json_404s(api):
    assert_json_error(api.get(f"{API}no-such-thing/"), 404)


@pytest.mark.parametrize("debug", [False, True])
def test_the_404_page_shows_no_url_map_or_path(settings, debug):
    settings.DEBUG = debug
    for address in ("/no/such/page/", "/api/v1/nothing-here/", "/admin-nope/"):
        response = Client().get(address)
        text = response.content.decode()
        assert response.status_code == 404
        for leak in ("api_urls", "URLconf", "urlpatterns", "/work/", ".py", "<URLResolver", "tried"):
            assert leak not in text, (address, leak)


def test_the_api_root_lists_the_endpoints(api):
    root = api.get(API)
    assert root.status_code == 200
    endpoints = root.json()["endpoints"]
    assert endpoints["match-list"] == "/api/v1/matches/" and endpoints["docs"] == "/api/v1/docs/"
    assert endpoints["leaderboard"] == "/api/v1/ladders/{ladder_id}/leaderboard/"
    assert endpoints["tournament-list"] == "/api/v1/tournaments/"
    assert "text/html" in api.get(API, HTTP_ACCEPT="text/html")["Content-Type"]  # browsable


@pytest.mark.parametrize("page", ["docs/", "redoc/"])
def test_the_docs_load_only_installed_assets(api, page):
    html = api.get(API + page).content.decode()
    assert "cdn.jsdelivr" not in html and "unpkg" not in html and "@latest" not in html
    assets = [part.split('"')[0] for part in html.split('src="')[1:]]
    assert assets and all(a.startswith("/") for a in assets), assets
    client = Client()
    for asset in assets:
        response = client.get(asset)
        assert response.status_code == 200, asset
