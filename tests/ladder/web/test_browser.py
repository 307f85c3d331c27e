"""Browser tests in real headless Chromium (Debian's package, driven by the `playwright` package) against a
live server: the leaderboard, a bot page with its rating chart, and stepping a replay. Screenshots go to
test-artifacts/ (git-ignored)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ladder.conftest import play

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser():
    """Chromium. Tests request their data fixtures before this one: the ORM must not run while Playwright's
    event loop does (Django would refuse, and a connection opened in that context would outlive the test)."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def ladder_data(ladder2, ladder4, make_bot):
    bots = [make_bot(name=name) for name in ("Ibn Battuta", "Rustichello", "Niccolo", "Maffeo")]
    matches = [play(ladder4, bots, seed) for seed in (41, 42, 43)]
    matches += [play(ladder2, [bots[i % 4], bots[(i + 1) % 4]], 50 + i) for i in range(4)]
    return bots, matches


def test_leaderboard_page(ladder_data, ladder4, live_server, browser):
    page = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
    page.goto(f"{live_server.url}/ladders/{ladder4.slug}/")
    rows = page.locator("#leaderboard tbody tr")
    assert rows.count() == 4
    assert rows.first.locator("td.rank").inner_text() == "1"
    names = {rows.nth(i).locator("td").nth(1).inner_text().strip() for i in range(4)}
    assert names == {"Ibn Battuta", "Rustichello", "Niccolo", "Maffeo"}
    page.screenshot(path=str(ARTIFACTS / "leaderboard-phone.png"), full_page=True)
    page.wait_for_load_state("networkidle")  # no request in flight: a dropped one would keep a DB session
    page.close()


def test_bot_page_chart(ladder_data, live_server, browser):
    bot = ladder_data[0][0]
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{live_server.url}/bots/{bot.pk}/")
    chart = page.locator("#rating-chart svg")
    assert chart.is_visible()
    assert page.locator("#rating-chart polyline").count() == 2  # one line per ladder played
    box = chart.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    page.screenshot(path=str(ARTIFACTS / "bot-page.png"), full_page=True)
    page.wait_for_load_state("networkidle")  # no request in flight: a dropped one would keep a DB session
    page.close()


def test_replay_viewer_steps(ladder_data, live_server, browser):
    match = ladder_data[1][0]
    page = browser.new_page(viewport={"width": 1200, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    viewer = page.locator("#viewer")
    page.wait_for_selector("#viewer[data-rendered-step='0']")
    assert page.locator("#rv-track g.space-g").count() == 29
    assert page.locator("#rv-track circle.piece").count() == 4
    assert page.locator(".player").count() == 4
    page.click("#rv-next")
    page.click("#rv-next")
    page.click("#rv-next")
    page.wait_for_selector("#viewer[data-rendered-step='3']")
    assert page.locator("#rv-step").inner_text() == "3"
    page.screenshot(path=str(ARTIFACTS / "replay-step-3.png"), full_page=True)
    # Scrub to the end: the spectator of a finished match sees every hand.
    page.locator("#rv-scrub").fill(str(match.steps))
    page.wait_for_selector(f"#viewer[data-rendered-step='{match.steps}']")
    assert "Final position" in page.locator("#rv-board").inner_text()
    assert page.locator(".gcard.hidden").count() == 0
    # As seat 1: the other seats' unknown cards are hidden.
    page.select_option("#rv-seat", "1")
    page.click("#rv-first")
    page.wait_for_selector("#viewer[data-rendered-step='0']")
    page.wait_for_function(
        "() => document.querySelectorAll('.gcard.hidden').length > 0"
    )  # a function: the page's CSP forbids eval
    assert page.locator(".player[data-seat='1'] .gcard.hidden").count() == 0
    assert page.locator(".player[data-seat='0'] .gcard.hidden").count() == 5
    # Play for a moment, then pause.
    page.click("#rv-play")
    page.wait_for_function("() => Number(document.getElementById('viewer').dataset.renderedStep) >= 2")
    page.click("#rv-play")
    page.screenshot(path=str(ARTIFACTS / "replay-seat-1.png"), full_page=True)
    assert viewer.get_attribute("data-step") is not None
    assert errors == []
    page.wait_for_load_state("networkidle")  # no request in flight: a dropped one would keep a DB session
    page.close()
