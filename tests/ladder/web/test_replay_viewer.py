"""The match viewer in real headless Chromium against a live server: frames of a recorded match of every
game and option variant (a sample here, every frame in `python -m bench viewer`) drawn as the table and as
each seat without a script error, no seat's view showing another seat's hidden items before the game is
over and every seat's once it is, the final screen with the result, the address carrying the step and the
seat, keyboard and jumps by turn and round, fault links into the replay, and the live view of a running
match with each seat's clock and the score graph.
Screenshots of each game's viewer at desktop and phone widths go to test-artifacts/."""

from __future__ import annotations

import os

import pytest

from ladder.matches.models import Match
from ladder.matches.services import match_record_result
from ladder.replays.services import live_progress_publish
from tests.ladder.web.conftest import ARTIFACTS, PHONE, Recorded

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VARIANTS = [
    ("expedition-v1", 3, {}),
    ("expedition-v1", 2, {"strategic_two_player": True}),
    ("voyages-v1", 3, {}),
    ("mp2-v1", 3, {}),
    ("mp2-v1", 2, {"caravans": True}),
    ("dragonda-v1", 3, {}),
]

# The suite draws, as the table, the first and last turns and every FRAME_STRIDE-th step between (each with
# the frame before it, from which the highlights come); the seats share that sample: each seat draws the
# start, the end and every players-th step of it, so that together they draw all of it. `python -m bench
# viewer` sets the stride to 1 and draws every frame as the table and as each seat. What a seat's frames
# hold is the server's business, checked at every step in test_secrecy.py.
FRAME_STRIDE = int(os.environ.get("VIEWER_FRAME_STRIDE", "40"))
EDGE_STEPS = 6


def sampled_steps(steps: int) -> list[int]:
    inner = range(EDGE_STEPS, max(EDGE_STEPS, steps - EDGE_STEPS), FRAME_STRIDE)
    return sorted({*range(min(EDGE_STEPS, steps + 1)), *inner, *range(max(0, steps - EDGE_STEPS), steps + 1)})


def seat_steps(sample: list[int], seat: int, players: int) -> list[int]:
    """The seat's share of the table's sample: its start, its end and every players-th step."""
    return sample if FRAME_STRIDE == 1 else sorted({sample[0], *sample[seat::players], sample[-1]})


# Draws the given frames of the current view in the page, and counts what the seat may not see before the
# game is over: an element holding another seat's private items that shows a real item. At the final step
# (the game over) it counts instead the other seats' real items shown and the placeholders left.
SHOW_ALL = """async ([seat, steps, last]) => {
  const viewer = window.CaravanReplay.viewer;
  const leaks = [];
  let revealed = null, placeholders = null;
  for (const step of steps) {
    await viewer.show(step);
    if (seat !== null) {
      const foreign = document.querySelectorAll(
        `[data-private-of]:not([data-private-of="${seat}"]) [data-secret]`);
      if (step === last) {
        revealed = foreign.length;
        placeholders = document.querySelectorAll("[data-private-of] .hidden-item").length;
      } else if (foreign.length) leaks.push(step);
    }
  }
  return {errors: document.getElementById("viewer").dataset.renderErrors || "", leaks: leaks,
          revealed: revealed, placeholders: placeholders,
          rendered: document.getElementById("viewer").dataset.renderedStep};
}"""


# Elements that stick out of the screen (outside a sideways-scrolling board).
WIDER_THAN_SCREEN = """() => Array.from(document.querySelectorAll("body *"))
  .filter(e => !e.closest(".board-scroll") && e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(0, 8).map(e => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}px`)"""


def _family(game_id: str) -> str:
    return game_id.rsplit("-v", 1)[0]


@pytest.fixture(
    params=VARIANTS, ids=lambda v: _family(v[0]) + ("-" + "-".join(v[2]) if v[2] else "") + f"-{v[1]}p"
)
def recorded(request, record_match) -> tuple[Recorded, str]:
    game_id, players, options = request.param
    return record_match(game_id, players, options), _family(game_id) + (
        "-" + "-".join(options) if options else ""
    )


# a hang guard only: with FRAME_STRIDE=1 it draws every frame for every seat, minutes on a busy machine
@pytest.mark.timeout(1200)
def test_every_frame_draws_for_every_seat(recorded, live_server, page):
    """The sample above of the variant's frames as the table and each seat's share of it (every frame as
    the table and as each seat in `python -m bench viewer`), then the middle of the game at desktop and
    phone widths and the final screen."""
    match, name = recorded
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    page.wait_for_selector("#viewer[data-rendered-step='0']")
    sample = sampled_steps(match.steps)
    for seat in [None, *range(match.players)]:  # the table, then each seat, chosen as a reader does
        page.select_option("#rv-seat", "" if seat is None else str(seat))
        steps = sample if seat is None else seat_steps(sample, seat, match.players)
        outcome = page.evaluate(SHOW_ALL, [seat, steps, match.steps])
        assert outcome["errors"] == "", outcome["errors"]
        assert outcome["leaks"] == [], f"seat {seat} sees another seat's hidden items at {outcome['leaks']}"
        if seat is not None:  # the game over, the seat's view shows every seat's hidden items
            assert outcome["revealed"] > 0 and outcome["placeholders"] == 0, outcome
        assert outcome["rendered"] == str(match.steps)
        result = page.locator("#rv-result")
        assert result.is_visible()
        for bot_name in match.names if seat is None else []:
            assert bot_name in result.inner_text()
    assert page.locator(".player").count() == match.players
    show(page, match.steps // 2, seat="")
    assert page.locator("#rv-words .events li").count() > 0
    page.screenshot(path=str(ARTIFACTS / f"viewer-{name}-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)
    show(page, match.steps // 2, seat="1")
    wide = page.evaluate(WIDER_THAN_SCREEN)
    assert wide == [], f"wider than a phone, only the board may scroll: {wide}"
    page.screenshot(path=str(ARTIFACTS / f"viewer-{name}-phone-seat1.png"), full_page=True)
    show(page, match.steps, seat="")
    page.screenshot(path=str(ARTIFACTS / f"viewer-{name}-phone-final.png"), full_page=True)
    assert errors == []
    page.wait_for_load_state("networkidle")  # no request in flight: a dropped one would keep a DB session


def show(page, step: int, seat: str) -> None:  # type: ignore[no-untyped-def]
    """Show `step` as `seat` ("" the table) on the open viewer, as a reader choosing them does."""
    if page.locator("#rv-seat").input_value() != seat:
        page.select_option("#rv-seat", seat)
    page.evaluate("(step) => window.CaravanReplay.viewer.show(step)", step)
    page.wait_for_selector(f"#viewer[data-rendered-step='{step}']")


@pytest.fixture
def expedition4(record_match) -> Recorded:
    return record_match("expedition-v1", 4, seed=41)


def test_expedition_navigation(expedition4, live_server, page):
    match = expedition4
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    page.wait_for_selector("#viewer[data-rendered-step='0']")
    assert page.locator("#rv-track g.space-g").count() == 29
    assert page.locator("#rv-track circle.piece").count() == 4
    assert "one card of each of the four goods" in page.locator(".exp-legend").text_content()
    # Keyboard and buttons step, and the address follows.
    page.keyboard.press("ArrowRight")
    page.click("#rv-next")
    page.wait_for_selector("#viewer[data-rendered-step='2']")
    assert "step=2" in page.url
    # Jumps: the next turn begins after the current step; the next round after that turn.
    page.wait_for_selector("#viewer[data-index='ready']")
    page.click("#rv-next-turn")
    page.wait_for_function("() => Number(document.getElementById('viewer').dataset.renderedStep) > 2")
    turn_step = int(page.locator("#viewer").get_attribute("data-rendered-step"))
    page.click("#rv-next-round")
    page.wait_for_function(
        f"() => Number(document.getElementById('viewer').dataset.renderedStep) > {turn_step}"
    )
    assert "round 2" in page.locator("#rv-turn").inner_text()
    # A linked step and seat open there: the other seats' unknown cards are placeholders.
    page.goto(f"{live_server.url}/matches/{match.pk}/?step=5&seat=1")
    page.wait_for_selector("#viewer[data-rendered-step='5']")
    assert page.locator("#rv-seat").input_value() == "1"
    assert page.locator(".player[data-seat='1'] .hidden-item").count() == 0
    assert page.locator(".player[data-seat='0'] .hidden-item").count() > 0
    # The whole game in 30 s plays on its own.
    page.select_option("#rv-speed", "g30")
    page.click("#rv-play")
    page.wait_for_function("() => Number(document.getElementById('viewer').dataset.renderedStep) >= 9")
    page.click("#rv-play")
    # The final screen names the winner; the table of a finished match hides no card.
    page.goto(f"{live_server.url}/matches/{match.pk}/?step={match.steps}")
    page.wait_for_selector(f"#viewer[data-rendered-step='{match.steps}']")
    assert match.winner in page.locator("#rv-result").inner_text()
    assert page.locator(".hidden-item").count() == 0
    assert errors == []
    page.wait_for_load_state("networkidle")


@pytest.fixture
def faulted(record_match) -> Recorded:
    match = record_match("expedition-v1", 2, seed=7)
    fault = {"step": 4, "kind": "timeout", "reason": "no answer in 5s", "fallback_action": "pass"}
    Match.objects.get(pk=match.pk).seats.filter(index=1).update(faults=[fault])
    return match


def test_fault_lines_link_to_their_step(faulted, live_server, page):
    match = faulted
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    page.click("a:has-text('step 4')")
    page.wait_for_selector("#viewer[data-rendered-step='4']")
    assert page.locator("#rv-seat").input_value() == "1"
    page.wait_for_load_state("networkidle")


@pytest.fixture
def running(live_match):
    return live_match("voyages-v1", seed=5, published=10)


def test_live_view_follows_a_running_match(running, live_server, page):
    match, record = running
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    page.wait_for_selector("#viewer[data-rendered-step='10']")
    assert "Live" in page.locator("#rv-live").inner_text()
    assert page.locator("[data-secret]").count() == 0  # the spectator of a running match sees no hidden item
    page.screenshot(path=str(ARTIFACTS / "viewer-live.png"), full_page=True)
    assert live_progress_publish(match_id=match.pk, actions=record.actions[:40])
    page.wait_for_selector("#viewer[data-rendered-step='40']", timeout=10_000)
    assert match_record_result(match_id=match.pk, record=record)
    page.wait_for_selector("#rv-scrub", timeout=10_000)  # over: the page reloads into the replay
    assert errors == []
    page.wait_for_load_state("networkidle")


def _live_clock(step: int) -> list[float | None]:
    """The clock published for the decision at `step`: 0.25 + step/1000 s used, a bank of 60 - step/2 s left
    (below a second and above ten seconds over the steps shown: the viewer writes them in ms and in s)."""
    return [0.25 + step / 1000, 60 - step / 2]


def test_the_live_view_shows_each_seats_clock_and_the_score_graph(running, live_server, page):
    match, record = running
    clocks = {step: _live_clock(step) for step in range(len(record.actions))}
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    for published in (30, 95):  # the page opens mid-match, then follows it (the VP first change at 59)
        assert live_progress_publish(match_id=match.pk, actions=record.actions[:published], clocks=clocks)
        if published == 30:
            page.goto(f"{live_server.url}/matches/{match.pk}/")
        page.wait_for_selector(f"#viewer[data-rendered-step='{published}']", timeout=10_000)
        rows = page.locator("#rv-clocks .rv-clock")
        assert page.locator("#rv-clocks").is_visible() and rows.count() == 2
        for seat in range(2):
            last = max(k for k, (actor, _a) in enumerate(record.actions[:published]) if actor == seat)
            seconds, bank = _live_clock(last)
            text = rows.nth(seat).inner_text()
            assert f"live {seat}" in text and f"(move {last + 1})" in text, text
            assert (
                f"last decision {round(seconds * 1000)} ms" in text and f"bank left {bank:.1f} s" in text
            ), text
        graph = page.locator("#rv-graph")
        assert graph.is_visible() and graph.get_attribute("data-steps") == str(published)
        assert page.locator("#rv-graph polyline.rv-score-line").count() == 2
        # the whole game so far, from step 0, not only the polls since the page opened
        assert "step 0" in graph.inner_text() and f"step {published}" in graph.inner_text()
    lines = page.locator("#rv-graph polyline.rv-score-line")
    for seat in range(2):  # each seat's score rose since step 0: a line of steps, from the left edge
        points = lines.nth(seat).get_attribute("points").split()
        assert len(points) > 2 and points[0].startswith("40.0,"), points
    page.screenshot(path=str(ARTIFACTS / "viewer-live-clocks.png"), full_page=True)
    assert errors == []
    page.wait_for_load_state("networkidle")
