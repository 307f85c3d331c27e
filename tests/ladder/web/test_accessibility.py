"""axe-core (4.12, bundled by axe-playwright-python) over the match page in real headless Chromium, in every
game: the replay as a seat in the middle of the match at desktop width, then its final screen at phone width
(the game over: every seat's hidden items shown), and the live view of a running match with its clocks and
score graph, report no serious or critical violation.

Kept cheap (axe's cost grows with the page, most of it the move list: a few elements per move): short
matches (three players, the seat colours past the first two included; Dragonda's longer game with two,
bounded by its shortest round cap), one page load per game (the phone view is the same page resized and moved
to the last step), one axe run per page state, and the moves themselves checked once, in the Expedition's
desktop view: the move list is the viewer's own markup, the same in every game (web/replay-moves.js), only
its words differ."""

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

# The serious and critical violations on the page (but in `exclude`, a selector, if given): rule, how many
# elements, the first few of them.
SERIOUS = """async (exclude) => {
  const result = await axe.run(exclude ? {exclude: [[exclude]]} : document, {resultTypes: ["violations"]});
  return result.violations.filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => `${v.id} (${v.impact}) x${v.nodes.length}: ${v.nodes.slice(0, 8).map(n => n.target.join(" ")).join(" | ")}`);
}"""

GAMES = [
    ("expedition-v1", 3, {}),
    ("voyages-v1", 3, {}),
    ("mp2-v1", 3, {}),
    ("dragonda-v1", 2, {"round_cap": 50}),
]
MOVES = "#rv-moves .rv-rounds"  # the move list's moves
MOVES_CHECKED_IN = "expedition-v1"


def _violations(page, exclude: str | None = None) -> list[str]:
    return page.evaluate(SERIOUS, exclude)


@pytest.fixture(params=GAMES, ids=[game_id.rsplit("-v", 1)[0] for game_id, _players, _options in GAMES])
def recorded(request, make_bot) -> tuple[Recorded, bool]:
    game_id, players, options = request.param
    return _recorded(game_id, players, options, make_bot, seed=5), game_id == MOVES_CHECKED_IN


def test_the_replay_has_no_serious_accessibility_violation(recorded, live_server, browser):
    match, check_moves = recorded
    page = browser.new_page(viewport=DESKTOP, bypass_csp=True)  # to inject axe
    page.goto(f"{live_server.url}/matches/{match.pk}/?step={match.steps // 2}&seat=1")
    page.wait_for_selector(f"#viewer[data-moves='ready'][data-rendered-step='{match.steps // 2}']")
    page.add_script_tag(path=str(AXE))
    found = {"desktop, mid-game, seat 1": _violations(page, exclude=None if check_moves else MOVES)}
    page.set_viewport_size(PHONE)
    page.evaluate("(step) => window.CaravanReplay.viewer.show(step)", match.steps)
    page.wait_for_selector(f"#viewer[data-rendered-step='{match.steps}'] #rv-result")
    found["phone, final, seat 1"] = _violations(page, exclude=MOVES)
    page.wait_for_load_state("networkidle")
    page.close()
    assert all(not v for v in found.values()), found


@pytest.fixture
def running(make_bot):
    ladder = ladder_create(game_id="voyages-v1", num_players=2)
    bots = [make_bot(name=f"live {i}", games=("voyages-v1",)) for i in range(2)]
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=5)
    assert match_mark_running(match_id=match.pk)
    record = make_record(match)
    clocks = {step: [0.25, 30.0 - step / 10] for step in range(20)}
    assert live_progress_publish(match_id=match.pk, actions=record.actions[:20], clocks=clocks)
    return match


def test_the_live_view_has_no_serious_accessibility_violation(running, live_server, browser):
    page = browser.new_page(viewport=DESKTOP, bypass_csp=True)
    page.goto(f"{live_server.url}/matches/{running.pk}/")
    page.wait_for_selector("#viewer[data-rendered-step='20']")
    assert page.locator("#rv-clocks").is_visible() and page.locator("#rv-graph").is_visible()
    page.add_script_tag(path=str(AXE))
    assert _violations(page) == []
    page.close()
