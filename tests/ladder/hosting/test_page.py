"""The hosted bot page: the owner uploads a version and sees the status, last exit and log; anyone else
sees the versions and the state, never the log; a bad archive stores nothing and says why."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from ladder.bots.models import Bot
from ladder.hosting.models import HostedBot, HostedVersion
from ladder.hosting.services import hosted_claim, hosted_report
from tests.ladder.hosting.test_uploads import good

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def bob(other_user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(other_user)
    return client


def test_the_owner_uploads_on_the_page_and_sees_the_log(
    alice: Client, bob: Client, make_bot: Callable[..., Bot]
) -> None:
    bot = make_bot()
    page = alice.get(f"/bots/{bot.pk}/hosted/").content.decode()
    assert 'name="archive"' in page and "Not hosted" in page
    assert "Uploading does not change" in page and "a credential of its own" in page
    response = alice.post(
        f"/bots/{bot.pk}/hosted/upload/", {"archive": SimpleUploadedFile("b.tar.gz", good("3.0"))}
    )
    assert response.status_code == 302
    assert HostedVersion.objects.get(bot=bot).name == "3.0"
    [claimed] = hosted_claim(host_id="h", limit=1, lease_seconds=30)
    hosted_report(
        host_id="h", bot_id=bot.pk, version_id=claimed.version_id, state="backoff",
        detail="exited with status 1", starts=1, crashes=1, log="Traceback: secret-ish detail",
    )  # fmt: skip
    owner_page = alice.get(f"/bots/{bot.pk}/hosted/").content.decode()
    assert "Version 3.0 stored" in owner_page and "Traceback: secret-ish detail" in owner_page
    assert "exited with status 1" in owner_page
    other_page = bob.get(f"/bots/{bot.pk}/hosted/").content.decode()
    assert "backoff" in other_page and "3.0" in other_page
    assert (
        "Traceback" not in other_page and 'name="archive"' not in other_page and "status 1" not in other_page
    )


def test_the_bot_page_links_its_owner_to_hosting(
    alice: Client, bob: Client, make_bot: Callable[..., Bot]
) -> None:
    bot = make_bot()
    link = f'href="/bots/{bot.pk}/hosted/"'
    assert link in alice.get(f"/bots/{bot.pk}/").content.decode()
    assert link not in bob.get(f"/bots/{bot.pk}/").content.decode()


def test_a_bad_archive_on_the_page_stores_nothing(
    alice: Client, bob: Client, make_bot: Callable[..., Bot]
) -> None:
    bot = make_bot()
    response = alice.post(
        f"/bots/{bot.pk}/hosted/upload/", {"archive": SimpleUploadedFile("b.tar.gz", b"junk")}, follow=True
    )
    assert "Nothing was stored: not a readable" in response.content.decode()
    assert (
        bob.post(
            f"/bots/{bot.pk}/hosted/upload/", {"archive": SimpleUploadedFile("b.tar.gz", good())}
        ).status_code
        == 403
    )
    assert not HostedVersion.objects.exists()


def test_the_owner_switches_hosting_off_and_on(alice: Client, make_bot: Callable[..., Bot]) -> None:
    bot = make_bot()
    alice.post(f"/bots/{bot.pk}/hosted/upload/", {"archive": SimpleUploadedFile("b.tar.gz", good())})
    alice.post(f"/bots/{bot.pk}/hosted/switch/", {"enabled": "0"})
    assert HostedBot.objects.get(bot=bot).enabled is False
    alice.post(f"/bots/{bot.pk}/hosted/switch/", {"enabled": "1"})
    assert HostedBot.objects.get(bot=bot).enabled is True
