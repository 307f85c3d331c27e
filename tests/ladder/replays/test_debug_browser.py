"""The match page's debug panel in real headless Chromium (Debian's, through Playwright) against a live server:
the owner sees their bot's texts by step, each a link to the replay at that step, a text shown as text (never
as HTML); the opponent's page shows no panel and none of them."""

from __future__ import annotations

import pytest
from django.test import Client

from ladder.matches.services import match_create, match_mark_running, match_record_result
from tests.ladder.conftest import make_record
from tests.ladder.web.conftest import ARTIFACTS, launched, open_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HTML = "<b id='injected'>bold</b>"  # a bot's text is shown as text: this must not become an element


@pytest.fixture
def finished(ladder2, make_bot, user, other_user):
    bots = [make_bot(name="Owned"), make_bot(owner=other_user, name="Theirs")]
    match = match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in bots], seed=515_151)
    assert match_mark_running(match_id=match.pk)
    record = make_record(match)
    steps = [step for step, (seat, _) in enumerate(record.actions) if seat == 0]
    for step in steps:
        record.debug[step] = f"owner-text {step} {HTML}"
    record.debug[next(s for s, (seat, _) in enumerate(record.actions) if seat == 1)] = "opponent-text"
    assert match_record_result(match_id=match.pk, record=record)
    cookies = {}
    for name, who in (("owner", user), ("opponent", other_user)):
        client = Client()
        client.force_login(who)
        cookies[name] = client.cookies["sessionid"].value
    return match, steps, cookies


def test_the_owner_sees_each_steps_text_linked_to_the_replay(finished, live_server) -> None:
    match, steps, cookies = finished
    with launched() as browser:
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        open_as(page, live_server, cookies["owner"], f"/matches/{match.pk}/")
        page.locator("#debug li").first.wait_for()
        assert page.locator("#debug").is_visible()
        items = page.locator("#debug li")
        assert items.count() == len(steps)
        first = items.first
        assert first.locator("pre").inner_text() == f"owner-text {steps[0]} {HTML}"
        assert page.locator("#injected").count() == 0
        href = first.locator("a").get_attribute("href")
        assert href == f"/matches/{match.pk}/?step={steps[0]}&seat=0#replay"
        assert "opponent-text" not in page.content()
        page.screenshot(path=str(ARTIFACTS / "debug-panel.png"), full_page=True)
        page.wait_for_load_state("networkidle")
        first.locator("a").click()  # the replay at that step, the step marked in the list
        page.locator("#debug li.debug-current").wait_for()
        assert page.locator("#debug li.debug-current").get_attribute("data-step") == str(steps[0])
        page.wait_for_load_state("networkidle")

        open_as(page, live_server, cookies["opponent"], f"/matches/{match.pk}/")
        page.wait_for_load_state("networkidle")  # the panel's request answered (its texts only)
        texts = page.locator("#debug pre").all_inner_texts()
        assert texts == ["opponent-text"] and "owner-text" not in page.content()
