"""The viewer's panels in real headless Chromium, for every game on a seeded match: the move list (an entry
per move, grouped by round and turn, a click goes there and the address follows, the current entry kept in
view), what the last move changed (elements of the board marked and the numbers by seat), each seat's clock,
the score graph (a line per seat, a click jumps), the sticky bar keeping the current move beside the board
on a phone, and the score graph on the live view. Screenshots go to test-artifacts/."""

from __future__ import annotations

import pytest

from tests.ladder.web.conftest import ARTIFACTS, PHONE, Recorded
from tests.ladder.web.test_replay_viewer import show

# one process, one Chromium and one page for the module's tests (tests/conftest.py)
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("replay-panels"),
]

GAMES = ["expedition-v1", "voyages-v1", "mp2-v1", "dragonda-v1"]

# The first steps from `from` on whose frame the board has marked elements and the seats have deltas.
FIND_CHANGES = """async ([from, steps]) => {
  const viewer = window.CaravanReplay.viewer, root = document.getElementById("viewer");
  let marked = null, deltas = null;
  for (let step = from; step <= steps && (marked === null || deltas === null); step++) {
    await viewer.show(step);
    if (marked === null && Number(root.dataset.changed) > 0
        && document.querySelectorAll("#rv-board .rv-changed").length > 0) marked = step;
    if (deltas === null && document.querySelectorAll("#rv-changes li").length > 0) deltas = step;
  }
  return {marked, deltas, errors: root.dataset.renderErrors || ""};
}"""

# Whether `sel`'s element lies inside the visible part of its scroll box.
IN_BOX = """(sel) => { const e = document.querySelector(sel), box = e.closest(".rv-moves-scroll");
  const r = e.getBoundingClientRect(), b = box.getBoundingClientRect();
  return r.top >= b.top - 1 && r.bottom <= b.bottom + 1; }"""

# Whether the element is at least partly on the screen.
ON_SCREEN = """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
  return r.bottom > 0 && r.top < window.innerHeight && r.height > 0; }"""


@pytest.fixture(params=GAMES, ids=lambda g: g.rsplit("-v", 1)[0])
def recorded(request, record_match) -> Recorded:
    return record_match(request.param, 3)


def _open(page, url: str, step: int) -> None:
    page.goto(url)
    page.wait_for_selector(f"#viewer[data-rendered-step='{step}']")
    page.wait_for_selector("#viewer[data-moves='ready']")


# Marco Polo II's dice whose number reads below WCAG's 4.5 contrast on their face: (title, ratio).
LOW_CONTRAST_DICE = """() => {
  const lum = (css) => {
    const v = css.match(/[\\d.]+/g).slice(0, 3).map((c) => {
      c = Number(c) / 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  };
  return Array.from(document.querySelectorAll(".mp2-die")).map((e) => {
    const s = getComputedStyle(e), a = lum(s.color), b = lum(s.backgroundColor);
    return [e.title, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)];
  }).filter(([, ratio]) => ratio < 4.5);
}"""


def test_move_list_changes_clocks_and_graph(recorded, live_server, page):
    match = recorded
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    mid = match.steps // 2
    _open(page, f"{live_server.url}/matches/{match.pk}/?step={mid}", mid)
    # The whole game as a list: an entry per move, grouped by round and turn, the current one shown.
    assert page.locator("#rv-moves a.rv-move").count() == match.steps
    assert page.locator("#rv-moves .rv-round").count() >= 2
    assert page.locator("#rv-moves .rv-turn").count() > page.locator("#rv-moves .rv-round").count()
    assert page.locator("#rv-moves a.rv-move.current").get_attribute("data-step") == str(mid)
    assert page.evaluate(IN_BOX, "#rv-moves a.rv-move.current")
    assert page.locator("#rv-now").inner_text().startswith(f"{mid}.")
    assert page.evaluate(LOW_CONTRAST_DICE) == []
    # A click on an entry goes to the step after that move; the address follows; the entry stays in view.
    target = match.steps - 3
    page.locator(f"#rv-moves a.rv-move[data-step='{target}']").click()
    page.wait_for_selector(f"#viewer[data-rendered-step='{target}']")
    assert f"step={target}" in page.url
    assert page.locator("#rv-moves a.rv-move.current").get_attribute("data-step") == str(target)
    assert page.evaluate(IN_BOX, "#rv-moves a.rv-move.current")
    # Clocks: a row per seat with its last decision (house seats are unclocked).
    assert page.locator("#rv-clocks .rv-clock").count() == match.players
    assert "last decision" in page.locator("#rv-clocks").inner_text()
    assert "unclocked" in page.locator("#rv-clocks").inner_text()
    # The score graph: a line per seat; a click near its start goes to an early step.
    assert page.locator("#rv-graph polyline.rv-score-line").count() == match.players
    page.locator("#rv-graph svg").scroll_into_view_if_needed()
    box = page.locator("#rv-graph svg").bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.1, box["y"] + box["height"] / 2)
    page.wait_for_function(
        f"() => Number(document.getElementById('viewer').dataset.renderedStep) < {match.steps // 4}"
    )
    # What changed: the board marks the elements the last move changed, and lists the numbers by seat.
    found = page.evaluate(FIND_CHANGES, [1, match.steps])
    assert found["errors"] == ""
    assert found["marked"] is not None, "no frame marked what its last move changed"
    assert found["deltas"] is not None, "no frame listed a seat's resources changing"
    page.evaluate("(step) => window.CaravanReplay.viewer.show(step)", found["marked"])
    name = match.names[0].split(" ")[0]
    # the side column is sticky: shot from the top of the page, it stands beside the board
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / f"panels-{name}-desktop.png"), full_page=True)
    # On a phone the current move and the step buttons stay in view while the board is on screen.
    page.set_viewport_size(PHONE)
    show(page, mid, seat="")
    page.locator("#rv-board").scroll_into_view_if_needed()
    assert page.evaluate(ON_SCREEN, "#rv-board") and page.evaluate(ON_SCREEN, "#rv-bar")
    page.locator("#rv-bar [data-go='1']").click()
    page.wait_for_selector(f"#viewer[data-rendered-step='{mid + 1}']")
    assert page.locator("#rv-now").inner_text().startswith(f"{mid + 1}.")
    page.screenshot(path=str(ARTIFACTS / f"panels-{name}-phone.png"), full_page=False)
    assert errors == []
    page.wait_for_load_state("networkidle")


@pytest.fixture
def running(live_match):
    return live_match("mp2-v1", seed=9, published=60)[0]


def test_live_view_draws_the_score_graph_and_the_current_move(running, live_server, page):
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/matches/{running.pk}/")
    page.wait_for_selector("#viewer[data-rendered-step='60']")
    assert page.locator("#rv-graph polyline.rv-score-line").count() == 2
    assert page.locator("#rv-now").inner_text().startswith("60.")
    assert page.locator("[data-secret]").count() == 0
    assert errors == []
