"""A practice match's page in real headless Chromium: it says why the match waits, then follows it by
itself, with no reload by hand: waiting for the bot, running with the live view, then the replay (the page
polls GET /api/v1/matches/<id>/status/ and reloads when the state changes)."""

from __future__ import annotations

import pytest

from ladder.matches.models import Match
from ladder.matches.practice import practice_match_mark_sent, practice_match_request
from ladder.matches.services import match_mark_running, match_record_result
from tests.ladder.conftest import make_record

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WAIT_MS = 30_000  # for the page's own poll (every 3 s) to see a change and reload; never a timing check


@pytest.fixture
def waiting_match(make_bot, user) -> Match:
    bot = make_bot(owner=user, name="Marco")
    return practice_match_request(
        user=user, bot_id=bot.pk, game_id="expedition-v1", options={}, opponents=["random"]
    )


def test_the_page_goes_from_waiting_to_live_to_the_replay_by_itself(waiting_match, live_server, page):
    match = waiting_match
    page.set_viewport_size({"width": 1200, "height": 900})
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    state = page.locator("#match-state")
    assert "Waiting for bot Marco to connect (with a stream for expedition-v1)." in state.inner_text()
    loads: list[str] = []
    page.on("load", lambda _: loads.append(page.url))

    assert practice_match_mark_sent(match_id=match.pk) and match_mark_running(match_id=match.pk)
    page.wait_for_selector("#match-state .status-running", timeout=WAIT_MS)
    assert "the live view is below" in page.locator("#match-state").inner_text()
    assert page.locator("h2", has_text="Live").count() == 1

    done = Match.objects.get(pk=match.pk)
    assert match_record_result(match_id=done.pk, record=make_record(done))
    page.wait_for_selector("#match-state", state="detached", timeout=WAIT_MS)
    assert page.locator("h2", has_text="Replay").count() == 1
    assert len(loads) == 2  # one reload per change of state, none by hand
    page.wait_for_load_state("networkidle")
