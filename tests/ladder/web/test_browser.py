"""Browser tests in real headless Chromium (Debian's package, driven by the `playwright` package) against a
live server: the leaderboard and a bot page with its rating chart (the match viewer: test_replay_viewer.py).
Screenshots go to test-artifacts/ (git-ignored)."""

from __future__ import annotations

import pytest

from tests.ladder.conftest import play
from tests.ladder.web.conftest import ARTIFACTS, PHONE

# one process, one Chromium and one page for the module's tests (tests/conftest.py)
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("browser-pages"),
]


@pytest.fixture
def ladder_data(ladder2, ladder4, make_bot):
    bots = [make_bot(name=name) for name in ("Ibn Battuta", "Rustichello", "Niccolo", "Maffeo")]
    matches = [play(ladder4, bots, seed) for seed in (41, 42, 43)]
    matches += [play(ladder2, [bots[i % 4], bots[(i + 1) % 4]], 50 + i) for i in range(4)]
    return bots, matches


def test_leaderboard_page(ladder_data, ladder4, live_server, page):
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/ladders/{ladder4.slug}/")
    rows = page.locator("#leaderboard tbody tr")
    assert rows.count() == 4
    assert rows.first.locator("td.rank").inner_text() == "1"
    names = {rows.nth(i).locator("td").nth(1).inner_text().strip() for i in range(4)}
    assert names == {"Ibn Battuta", "Rustichello", "Niccolo", "Maffeo"}
    page.screenshot(path=str(ARTIFACTS / "leaderboard-phone.png"), full_page=True)
    page.wait_for_load_state("networkidle")  # no request in flight: a dropped one would keep a DB session


def test_bot_page_chart(ladder_data, live_server, page):
    bot = ladder_data[0][0]
    page.set_viewport_size({"width": 1200, "height": 900})
    page.goto(f"{live_server.url}/bots/{bot.pk}/")
    chart = page.locator("#rating-chart svg")
    assert chart.is_visible()
    assert page.locator("#rating-chart polyline.chart-line:not(.chart-ranked)").count() == 2  # mu, per ladder
    assert page.locator("#rating-chart polyline.chart-ranked").count() == 2  # and mu - 3 sigma, dashed
    box = chart.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    page.screenshot(path=str(ARTIFACTS / "bot-page.png"), full_page=True)
    page.wait_for_load_state("networkidle")  # no request in flight: a dropped one would keep a DB session


def test_chart_hover_values_and_colours(ladder_data, live_server, page):
    from ladder.web.charts import PALETTE

    bot = ladder_data[0][0]
    page.set_viewport_size({"width": 1200, "height": 900})
    page.goto(f"{live_server.url}/bots/{bot.pk}/")
    lines = page.locator("#rating-chart polyline")
    colours = {lines.nth(i).get_attribute("stroke") for i in range(lines.count())}
    assert len(colours) == 2 and colours <= set(PALETTE)  # one distinct Okabe-Ito colour per ladder
    assert page.locator("#rating-chart polygon.chart-band").count() == 2
    point = page.locator("#rating-chart .chart-point").last
    point.hover()
    hit = point.locator("circle.chart-hit")
    assert hit.evaluate("c => getComputedStyle(c).strokeOpacity") == "1"  # the hovered point lights up
    text = hit.locator("title").text_content()
    assert "UTC" in text and "Elo" in text and "conservative" in text and "rank" in text
    page.goto(f"{live_server.url}/compare/?a={ladder_data[0][0].pk}&b={ladder_data[0][1].pk}")
    assert page.locator(".compare-ladder").count() == 2
    page.screenshot(path=str(ARTIFACTS / "compare.png"), full_page=True)
    page.wait_for_load_state("networkidle")
