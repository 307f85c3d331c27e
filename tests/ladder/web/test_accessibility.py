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
from typing import Any

import axe_playwright_python
import pytest

from tests.ladder.web.conftest import PHONE, Recorded

# one process, one Chromium and one page for the module's tests (tests/conftest.py)
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("accessibility"),
]

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


@pytest.fixture(scope="module")
def context_options() -> dict[str, Any]:
    return {"bypass_csp": True}  # to inject axe


def _violations(page, exclude: str | None = None) -> list[str]:
    return page.evaluate(SERIOUS, exclude)


@pytest.fixture(params=GAMES, ids=[game_id.rsplit("-v", 1)[0] for game_id, _players, _options in GAMES])
def recorded(request, record_match) -> tuple[Recorded, bool]:
    game_id, players, options = request.param
    return record_match(game_id, players, options), game_id == MOVES_CHECKED_IN


def test_the_replay_has_no_serious_accessibility_violation(recorded, live_server, page):
    match, check_moves = recorded
    page.goto(f"{live_server.url}/matches/{match.pk}/?step={match.steps // 2}&seat=1")
    page.wait_for_selector(f"#viewer[data-moves='ready'][data-rendered-step='{match.steps // 2}']")
    page.add_script_tag(path=str(AXE))
    found = {"desktop, mid-game, seat 1": _violations(page, exclude=None if check_moves else MOVES)}
    page.set_viewport_size(PHONE)
    page.evaluate("(step) => window.CaravanReplay.viewer.show(step)", match.steps)
    page.wait_for_selector(f"#viewer[data-rendered-step='{match.steps}'] #rv-result")
    found["phone, final, seat 1"] = _violations(page, exclude=MOVES)
    page.wait_for_load_state("networkidle")
    assert all(not v for v in found.values()), found


@pytest.fixture
def running(live_match):
    clocks: dict[int, list[float | None]] = {step: [0.25, 30.0 - step / 10] for step in range(20)}
    return live_match("voyages-v1", seed=5, published=20, clocks=clocks)[0]


def test_the_live_view_has_no_serious_accessibility_violation(running, live_server, page):
    page.goto(f"{live_server.url}/matches/{running.pk}/")
    page.wait_for_selector("#viewer[data-rendered-step='20']")
    assert page.locator("#rv-clocks").is_visible() and page.locator("#rv-graph").is_visible()
    page.add_script_tag(path=str(AXE))
    assert _violations(page) == []
