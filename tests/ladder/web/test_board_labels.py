"""The drawn boards' words do not cover one another, in real headless Chromium: for every game, the text
elements of the board's SVG at the start, in the middle and at the end of a seeded match are measured
(their boxes on the screen) and no two overlap by more than a sliver."""

from __future__ import annotations

import pytest

from tests.ladder.web.conftest import Recorded
from tests.ladder.web.test_replay_viewer import show

# one process, one Chromium and one page for the module's tests (tests/conftest.py)
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("board-labels"),
]

GAMES = ["expedition-v1", "voyages-v1", "mp2-v1", "dragonda-v1"]

# Pairs of board SVG texts whose boxes overlap by more than 2 px each way (the words, not their halos).
OVERLAPS = """() => {
  const texts = Array.from(document.querySelectorAll("#rv-board svg text"))
    .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0);
  const boxes = texts.map(t => [t, t.getBoundingClientRect()]);
  const out = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, ra] = boxes[i], [b, rb] = boxes[j];
    if (a.contains(b) || b.contains(a)) continue;
    const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
    const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
    if (w > 2 && h > 2) out.push(`${a.textContent.trim()} (${a.getAttribute("class")}) / ${b.textContent.trim()} (${b.getAttribute("class")})`);
  }
  return out;
}"""


@pytest.fixture(params=GAMES, ids=lambda g: g.rsplit("-v", 1)[0])
def recorded(request, record_match) -> Recorded:
    return record_match(request.param, 3)


def test_no_board_label_covers_another(recorded, live_server, page):
    match = recorded
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    page.wait_for_selector("#viewer[data-rendered-step='0']")
    found = {0: page.evaluate(OVERLAPS)}
    for step in (match.steps // 2, match.steps):  # the board's marks change over the game
        show(page, step, seat="")
        found[step] = page.evaluate(OVERLAPS)
    assert all(not v for v in found.values()), found
