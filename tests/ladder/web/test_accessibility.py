"""axe-core (4.12, bundled by axe-playwright-python) over the match page in real headless Chromium: the
replay at its start, middle and end, as the table and as a seat, and the live view of a running match
report no serious or critical violation."""

from __future__ import annotations

from pathlib import Path

import axe_playwright_python
import pytest

from ladder.ladders.services import ladder_create
from ladder.matches.services import match_create, match_mark_running
from ladder.replays.services import live_progress_publish
from tests.ladder.conftest import make_record
from tests.ladder.web.test_replay_viewer import DESKTOP, PHONE, Recorded, _recorded

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(axe_playwright_python.__file__).parent / "axe.min.js"

# The serious and critical violations on the page: rule, how many elements, the first few of them.
SERIOUS = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => `${v.id} (${v.impact}) x${v.nodes.length}: ${v.nodes.slice(0, 8).map(n => n.target.join(" ")).join(" | ")}`);
}"""


def _violations(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate(SERIOUS)


@pytest.fixture(params=["mp2-v1", "dragonda-v1"], ids=["mp2", "dragonda"])
def recorded(request, make_bot) -> Recorded:
    return _recorded(request.param, 3, {}, make_bot, seed=17)


def test_the_replay_has_no_serious_accessibility_violation(recorded, live_server, browser):
    match = recorded
    found = {}
    for viewport, query in (
        (DESKTOP, "?step=0"),
        (DESKTOP, f"?step={match.steps // 2}&seat=1"),
        (PHONE, f"?step={match.steps}"),
    ):
        page = browser.new_page(viewport=viewport, bypass_csp=True)  # to inject axe
        page.goto(f"{live_server.url}/matches/{match.pk}/{query}")
        page.wait_for_selector("#viewer[data-moves='ready']")
        page.wait_for_function("() => document.getElementById('viewer').dataset.renderedStep !== undefined")
        found[query] = _violations(page)
        page.wait_for_load_state("networkidle")
        page.close()
    assert all(not v for v in found.values()), found


@pytest.fixture
def running(make_bot):
    ladder = ladder_create(game_id="voyages-v1", num_players=2)
    bots = [make_bot(name=f"live {i}", games=("voyages-v1",)) for i in range(2)]
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=5)
    assert match_mark_running(match_id=match.pk)
    assert live_progress_publish(match_id=match.pk, actions=make_record(match).actions[:20])
    return match


def test_the_live_view_has_no_serious_accessibility_violation(running, live_server, browser):
    page = browser.new_page(viewport=DESKTOP, bypass_csp=True)
    page.goto(f"{live_server.url}/matches/{running.pk}/")
    page.wait_for_selector("#viewer[data-rendered-step='20']")
    assert _violations(page) == []
    page.close()
