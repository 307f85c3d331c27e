"""Limits that hold: the client is REMOTE_ADDR unless the operator trusts proxies (LADDER_NUM_PROXIES), the
admin and web logins are throttled, every 429 says when to retry, anonymous reads are throttled, and the
leaderboard caches only normalised queries."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.ladder.conftest import clear_test_cache

pytestmark = pytest.mark.django_db

TOKEN = "/api/v1/auth/token/"


@pytest.fixture
def rates(settings):
    def put(num_proxies: int = 0, **rates: str) -> None:
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": rates,
            "NUM_PROXIES": num_proxies,
        }
        clear_test_cache()

    return put


def wrong_password(api, forwarded: str | None = None):
    extra = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {}
    return api.post(TOKEN, {"username": "alice", "password": "nope"}, format="json", **extra)


def test_forwarded_for_is_ignored_by_default(api, user, rates):
    rates(auth="3/min")
    codes = [wrong_password(api, forwarded=f"10.0.0.{i}").status_code for i in range(6)]
    assert codes[:3] == [403, 403, 403] and codes[3:] == [429, 429, 429]
    throttled = wrong_password(api, forwarded="10.9.9.9")
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) > 0
    assert set(throttled.json()) == {"detail", "errors"}


def test_a_trusted_proxy_names_the_client(api, user, rates):
    rates(num_proxies=1, auth="2/min")
    assert [wrong_password(api, forwarded="1.1.1.1").status_code for _ in range(3)] == [403, 403, 429]
    assert wrong_password(api, forwarded="2.2.2.2").status_code == 403  # another client behind the proxy
    assert wrong_password(api, forwarded="6.6.6.6, 1.1.1.1").status_code == 429  # spoofed hops are ignored


def test_admin_and_web_logins_are_throttled_with_retry_after(staff_user, rates, auth_window):
    rates(auth="3/min")
    client = Client()
    for address in ("/admin/login/", "/login/"):
        clear_test_cache()
        codes = [client.post(address, {"username": "olga", "password": "x"}).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429], address
        response = client.post(address, {"username": "olga", "password": "x"}, HTTP_X_FORWARDED_FOR="9.9.9.9")
        assert response.status_code == 429 and int(response["Retry-After"]) == 30


def test_anonymous_reads_are_throttled_per_client(api, alice_api, ladder2, rates):
    rates(reads="3/min")
    codes = [api.get("/api/v1/ladders/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert "Retry-After" in api.get("/api/v1/ladders/")
    assert alice_api.get("/api/v1/ladders/").status_code == 200  # signed-in readers are not limited


def test_the_leaderboard_caches_only_first_pages(api, ladder2):
    address = f"/api/v1/ladders/{ladder2.pk}/leaderboard/"
    assert api.get(address)["X-Cache"] == "miss" and api.get(address)["X-Cache"] == "hit"
    for query in ("?owner=someone", "?owner=other", "?cursor=cD0xNTAw"):
        assert api.get(address + query)["X-Cache"] == "off", query
    assert api.get(address + "?page_size=5&junk=1")["X-Cache"] == "miss"
    assert api.get(address + "?page_size=5&more-junk=2")["X-Cache"] == "hit"  # unknown parameters share it
