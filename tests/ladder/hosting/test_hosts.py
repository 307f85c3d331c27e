"""The bot hosts' side of hosting: leases on hosted bots, reports only from the holder, the status with the
log for the owner only, hosting turned off."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ladder.bots.models import Bot
from ladder.hosting.models import HostedBot
from ladder.hosting.services import hosted_claim, hosted_release, hosted_report, hosted_version_upload
from tests.ladder.hosting.test_uploads import good

pytestmark = pytest.mark.django_db


@pytest.fixture
def hosted(make_bot: Callable[..., Bot], user) -> list[Bot]:  # type: ignore[no-untyped-def]
    bots = [make_bot() for _ in range(3)]
    for bot in bots:
        hosted_version_upload(bot_id=bot.pk, user=user, data=good())
    return bots


def test_a_host_holds_its_bots_until_its_lease_ends(hosted: list[Bot]) -> None:
    now = timezone.now()
    a = hosted_claim(host_id="a", limit=2, lease_seconds=30, now=now)
    assert [h.bot_id for h in a] == [hosted[0].pk, hosted[1].pk]
    b = hosted_claim(host_id="b", limit=5, lease_seconds=30, now=now)
    assert [h.bot_id for h in b] == [hosted[2].pk]
    assert [h.bot_id for h in hosted_claim(host_id="a", limit=2, lease_seconds=30, now=now)] == [
        hosted[0].pk,
        hosted[1].pk,
    ]
    later = now + timedelta(seconds=31)  # a stopped renewing: b takes its bots
    assert len(hosted_claim(host_id="b", limit=5, lease_seconds=30, now=later)) == 3
    assert hosted_claim(host_id="a", limit=2, lease_seconds=30, now=later) == []
    assert hosted_release(host_id="b") == 3
    assert len(hosted_claim(host_id="a", limit=5, lease_seconds=30, now=later)) == 3


def test_reports_count_only_from_the_holder_and_the_log_is_the_owners(
    hosted: list[Bot], alice_api: APIClient, bob_api: APIClient
) -> None:
    bot = hosted[0]
    [claimed, *_] = hosted_claim(host_id="a", limit=3, lease_seconds=30)
    report = dict(state="backoff", detail="the CPU time limit was reached (SIGXCPU)", starts=2, crashes=1)
    assert not hosted_report(host_id="b", bot_id=bot.pk, version_id=claimed.version_id, log="x", **report)
    assert hosted_report(
        host_id="a", bot_id=bot.pk, version_id=claimed.version_id, log="Traceback ...", **report
    )
    owner = alice_api.get(f"/api/v1/bots/{bot.pk}/hosted/").json()
    assert owner["state"] == "backoff" and owner["log"] == "Traceback ..." and "SIGXCPU" in owner["detail"]
    other = bob_api.get(f"/api/v1/bots/{bot.pk}/hosted/").json()
    assert other["state"] == "backoff" and "log" not in other and other["detail"] == ""


def test_the_owner_turns_hosting_off(hosted: list[Bot], alice_api: APIClient, bob_api: APIClient) -> None:
    bot = hosted[0]
    assert (
        bob_api.post(f"/api/v1/bots/{bot.pk}/hosted/", {"enabled": False}, format="json").status_code == 403
    )
    response = alice_api.post(f"/api/v1/bots/{bot.pk}/hosted/", {"enabled": False}, format="json")
    assert response.status_code == 200 and response.json()["enabled"] is False
    assert bot.pk not in [h.bot_id for h in hosted_claim(host_id="a", limit=5, lease_seconds=30)]
    assert (
        alice_api.post(f"/api/v1/bots/{bot.pk}/hosted/", {"enabled": "no"}, format="json").status_code == 400
    )
    assert HostedBot.objects.get(bot=bot).enabled is False


def test_a_log_with_nul_and_invalid_text_is_stored_cleaned(hosted: list[Bot], alice_api: APIClient) -> None:
    """PostgreSQL refuses a NUL in text (DataError) and no encoder takes a lone surrogate: the report of a
    bot that printed them is stored with U+FFFD in their place, the rest kept, and shown to its owner."""
    bot = hosted[0]
    [claimed, *_] = hosted_claim(host_id="a", limit=1, lease_seconds=30)
    printed = b"nul\x00here \xff\xfe end \x1b[31mred\x1b[0m".decode("utf-8", "surrogateescape") + " \ud800!"
    assert hosted_report(
        host_id="a",
        bot_id=bot.pk,
        version_id=claimed.version_id,
        state="backoff",
        detail="exited \x00 with status 1",
        starts=1,
        crashes=1,
        log=printed,
    )
    hosting = HostedBot.objects.get(bot=bot)
    assert hosting.log == "nul\ufffdhere \ufffd\ufffd end \x1b[31mred\x1b[0m \ufffd!"
    assert hosting.detail == "exited \ufffd with status 1"
    assert alice_api.get(f"/api/v1/bots/{bot.pk}/hosted/").json()["log"] == hosting.log
