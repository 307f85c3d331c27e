"""The token page on a phone, in real headless Chromium: its connect commands ask for the bot's
max_concurrent and wrap inside their boxes (none is cut off or needs a sideways scroll)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from tests.ladder.web.conftest import PHONE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long pass phrase"


@pytest.fixture
def wide_bot(make_bot, django_user_model):
    owner = django_user_model.objects.create_user(username="polo", password=PASSWORD)
    return make_bot(owner=owner, name="Wide", max_concurrent=4)


@override_settings(LADDER_GATEWAY_PUBLIC_ADDR="gateway.bots.caravanserai.example.org:50051")
def test_long_commands_wrap_on_a_phone(wide_bot, live_server, page):
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/login/?next=/bots/{wide_bot.pk}/token/")
    page.fill("#id_username", "polo")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("#connect")
    commands = page.locator("#connect pre")
    assert commands.count() == 3
    for i in range(commands.count()):
        box = commands.nth(i)
        assert "--concurrent 4" in box.inner_text()
        width = box.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert width[0] <= width[1], f"command {i} is cut off: {box.inner_text()!r}"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.wait_for_load_state("networkidle")
