"""The match viewer in real headless Chromium against a live server: frames of a recorded match of every
game and option variant (a sample here, every frame in `python -m bench viewer`) drawn as the table and as
each seat without a script error, no seat's view showing another seat's hidden items before the game is
over and every seat's once it is, the final screen with the result, the address carrying the step and the
seat, keyboard and jumps by turn and round, fault links into the replay, and the live view of a running
match with each seat's clock and the score graph.
Screenshots of each game's viewer at desktop and phone widths go to test-artifacts/."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from ladder.ladders.services import ladder_create
from ladder.matches.models import Match
from ladder.matches.services import match_create, match_mark_running, match_record_result
from ladder.replays.services import live_progress_publish
from tests.ladder.conftest import make_record
from tests.ladder.web.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VARIANTS = [
    ("expedition-v1", 3, {}),
    ("expedition-v1", 2, {"strategic_two_player": True}),
    ("voyages-v1", 3, {}),
    ("mp2-v1", 3, {}),
    ("mp2-v1", 2, {"caravans": True}),
    ("dragonda-v1", 3, {}),
]
DESKTOP = {"width": 1200, "height": 1000}
PHONE = {"width": 390, "height": 844}

# The suite draws the first and last turns and every FRAME_STRIDE-th step between (each with the frame
# before it, from which the highlights come), each seat's view every other one of those; `python -m bench
# viewer` sets the stride to 1 and draws every frame. What a seat's frames hold is the server's business,
# checked at every step in test_secrecy.py.
FRAME_STRIDE = int(os.environ.get("VIEWER_FRAME_STRIDE", "40"))
EDGE_STEPS = 6


def sampled_steps(steps: int) -> list[int]:
    inner = range(EDGE_STEPS, max(EDGE_STEPS, steps - EDGE_STEPS), FRAME_STRIDE)
    return sorted({*range(min(EDGE_STEPS, steps + 1)), *inner, *range(max(0, steps - EDGE_STEPS), steps + 1)})


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


def orm(fn, *args, **kwargs):
    """Run `fn` in another thread: the ORM refuses to run in the thread where Playwright's loop runs."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(fn, *args, **kwargs).result()


@dataclass
class Recorded:
    pk: int
    steps: int
    players: int
    names: list[str]
    winner: str


def _recorded(game_id: str, players: int, options: dict, make_bot, seed: int = 11) -> Recorded:
    ladder = ladder_create(game_id=game_id, num_players=players, options=options)
    bots = [make_bot(name=f"{game_id[:4]} bot {i}", games=(game_id,)) for i in range(players)]
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=seed)
    assert match_mark_running(match_id=match.pk)
    assert match_record_result(match_id=match.pk, record=make_record(match, ("greedy",) * players))
    match.refresh_from_db()
    winner = match.seats.filter(rank=1).order_by("index").first()
    return Recorded(match.pk, match.steps, players, [b.name for b in bots], winner.bot.name)


def _family(game_id: str) -> str:
    return game_id.rsplit("-v", 1)[0]


@pytest.fixture(
    params=VARIANTS, ids=lambda v: _family(v[0]) + ("-" + "-".join(v[2]) if v[2] else "") + f"-{v[1]}p"
)
def recorded(request, make_bot) -> tuple[Recorded, str]:
    game_id, players, options = request.param
    return _recorded(game_id, players, options, make_bot), _family(game_id) + (
        "-" + "-".join(options) if options else ""
    )


# a hang guard only: with FRAME_STRIDE=1 it draws every frame for every seat, minutes on a busy machine
@pytest.mark.timeout(1200)
def test_every_frame_draws_for_every_seat(recorded, live_server, browser):
    match, name = recorded
    page = browser.new_page(viewport=DESKTOP)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    for seat in [None, *range(match.players)]:
        query = "" if seat is None else f"?seat={seat}"
        page.goto(f"{live_server.url}/matches/{match.pk}/{query}")
        page.wait_for_selector("#viewer[data-rendered-step='0']")
        steps = sampled_steps(match.steps)
        if seat is not None and FRAME_STRIDE > 1:
            steps = sorted({*steps[::2], match.steps})
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
    page.goto(f"{live_server.url}/matches/{match.pk}/?step={match.steps // 2}")
    page.wait_for_selector(f"#viewer[data-rendered-step='{match.steps // 2}']")
    assert page.locator("#rv-words .events li").count() > 0
    page.screenshot(path=str(ARTIFACTS / f"viewer-{name}-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/matches/{match.pk}/?step={match.steps // 2}&seat=1")
    page.wait_for_selector(f"#viewer[data-rendered-step='{match.steps // 2}']")
    wide = page.evaluate(WIDER_THAN_SCREEN)
    assert wide == [], f"wider than a phone, only the board may scroll: {wide}"
    page.screenshot(path=str(ARTIFACTS / f"viewer-{name}-phone-seat1.png"), full_page=True)
    page.goto(f"{live_server.url}/matches/{match.pk}/?step={match.steps}")
    page.wait_for_selector(f"#viewer[data-rendered-step='{match.steps}']")
    page.screenshot(path=str(ARTIFACTS / f"viewer-{name}-phone-final.png"), full_page=True)
    assert errors == []
    page.wait_for_load_state("networkidle")  # no request in flight: a dropped one would keep a DB session
    page.close()


@pytest.fixture
def expedition4(make_bot) -> Recorded:
    return _recorded("expedition-v1", 4, {}, make_bot, seed=41)


def test_expedition_navigation(expedition4, live_server, browser):
    match = expedition4
    page = browser.new_page(viewport=DESKTOP)
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
    page.close()


@pytest.fixture
def faulted(make_bot) -> Recorded:
    match = _recorded("expedition-v1", 2, {}, make_bot, seed=7)
    fault = {"step": 4, "kind": "timeout", "reason": "no answer in 5s", "fallback_action": "pass"}
    Match.objects.get(pk=match.pk).seats.filter(index=1).update(faults=[fault])
    return match


def test_fault_lines_link_to_their_step(faulted, live_server, browser):
    match = faulted
    page = browser.new_page(viewport=DESKTOP)
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    page.click("a:has-text('step 4')")
    page.wait_for_selector("#viewer[data-rendered-step='4']")
    assert page.locator("#rv-seat").input_value() == "1"
    page.wait_for_load_state("networkidle")
    page.close()


@pytest.fixture
def running(make_bot):
    ladder = ladder_create(game_id="voyages-v1", num_players=2)
    bots = [make_bot(name=f"live {i}", games=("voyages-v1",)) for i in range(2)]
    match = match_create(ladder_id=ladder.pk, bot_ids=[b.pk for b in bots], seed=5)
    assert match_mark_running(match_id=match.pk)
    record = make_record(match, ("greedy", "greedy"))
    assert live_progress_publish(match_id=match.pk, actions=record.actions[:10])
    return match, record


def test_live_view_follows_a_running_match(running, live_server, browser):
    match, record = running
    page = browser.new_page(viewport=DESKTOP)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/matches/{match.pk}/")
    page.wait_for_selector("#viewer[data-rendered-step='10']")
    assert "Live" in page.locator("#rv-live").inner_text()
    assert page.locator("[data-secret]").count() == 0  # the spectator of a running match sees no hidden item
    page.screenshot(path=str(ARTIFACTS / "viewer-live.png"), full_page=True)
    assert orm(live_progress_publish, match_id=match.pk, actions=record.actions[:40])
    page.wait_for_selector("#viewer[data-rendered-step='40']", timeout=10_000)
    assert orm(match_record_result, match_id=match.pk, record=record)
    page.wait_for_selector("#rv-scrub", timeout=10_000)  # over: the page reloads into the replay
    assert errors == []
    page.wait_for_load_state("networkidle")
    page.close()


def _live_clock(step: int) -> list[float | None]:
    """The clock published for the decision at `step`: 0.25 + step/1000 s used, a bank of 60 - step/2 s left
    (below a second and above ten seconds over the steps shown: the viewer writes them in ms and in s)."""
    return [0.25 + step / 1000, 60 - step / 2]


def test_the_live_view_shows_each_seats_clock_and_the_score_graph(running, live_server, browser):
    match, record = running
    clocks = {step: _live_clock(step) for step in range(len(record.actions))}
    page = browser.new_page(viewport=DESKTOP)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    for published in (30, 95):  # the page opens mid-match, then follows it (the VP first change at 59)
        assert orm(
            live_progress_publish, match_id=match.pk, actions=record.actions[:published], clocks=clocks
        )
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
    page.close()
