"""User API tokens: shown once and stored as a sha256, expiring, rotated and revoked by their holder; the
response of `/api/v1/auth/token/` keeps its `token` field."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from ladder.accounts.models import UserToken
from ladder.accounts.services import token_hash

pytestmark = pytest.mark.django_db

API = "/api/v1/"


def login(api) -> dict:
    response = api.post(
        f"{API}auth/token/", {"username": "alice", "password": "correct-horse-battery"}, format="json"
    )
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    return response.json()


def holder(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_token_is_stored_only_as_its_hash(api, user):
    body = login(api)
    assert set(body) == {"token", "expires_at"}
    row = UserToken.objects.get(user=user)
    assert row.key_hash == token_hash(body["token"]) and body["token"] not in str(vars(row))
    assert holder(body["token"]).get(f"{API}auth/me/").json()["username"] == "alice"
    assert login(api)["token"] != body["token"]  # each login is a new token


def test_an_expired_token_is_refused(api, user):
    key = login(api)["token"]
    UserToken.objects.filter(user=user).update(expires_at=UserToken.objects.get().created_at - timedelta(1))
    assert holder(key).get(f"{API}auth/me/").status_code == 401


def test_rotate_replaces_the_presented_token(api, user):
    old = login(api)["token"]
    rotated = holder(old).post(f"{API}auth/token/rotate/")
    new = rotated.json()["token"]
    assert rotated.status_code == 200 and new != old
    assert holder(old).get(f"{API}auth/me/").status_code == 401
    assert holder(new).get(f"{API}auth/me/").status_code == 200


def test_revoke_one_or_all(api, user):
    first, second, third = (login(api)["token"] for _ in range(3))
    assert holder(first).post(f"{API}auth/token/revoke/").json() == {"revoked": 1}
    assert holder(first).get(f"{API}auth/me/").status_code == 401
    assert holder(second).get(f"{API}auth/me/").status_code == 200
    assert holder(second).post(f"{API}auth/token/revoke/", {"all": True}, format="json").json() == {
        "revoked": 2
    }
    assert holder(third).get(f"{API}auth/me/").status_code == 401


def test_rotate_and_revoke_need_the_token_itself(alice_api, api):
    assert alice_api.post(f"{API}auth/token/rotate/").status_code in (400, 401)
    assert api.post(f"{API}auth/token/revoke/").status_code == 401


def test_live_tokens_per_user_are_bounded(api, user, settings):
    settings.LADDER_TOKENS_PER_USER = 2
    keys = [login(api)["token"] for _ in range(3)]
    assert holder(keys[0]).get(f"{API}auth/me/").status_code == 401
    assert all(holder(k).get(f"{API}auth/me/").status_code == 200 for k in keys[1:])
