"""The match page's analysis in real headless Chromium (Debian's, through Playwright) against a live server:
the owner clicks "Analyse this match", sees it queued with its progress bar, the task runs (in process, in a
thread of the test: the click's send), and the page, polling, marks the decisions that lost the most in the
move list (a flag and a title) and, at such a move, says "Better: <the best move in words> (estimated +X)";
its graph of each seat's estimated lead follows the viewer and goes to the step clicked; an anonymous visitor
sees the same marks, and no button. Screenshot: test-artifacts/."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from ladder.analysis.models import AnalysisStatus, MatchAnalysis
from ladder.analysis.selectors import worst_decisions
from tests.ladder.conftest import play
from tests.ladder.web.conftest import ARTIFACTS, launched, open_as
from workers import leases
from workers.analysis import run_analysis
from workers.celery_app import app

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CAP = 30  # decisions analysed: enough for five that lost something, a second or two of search


class InProcessWorker:
    """What the click sends runs here: in a thread, once the test opens the gate (so the page shows the
    analysis queued first, whatever the machine's speed)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.threads: list[threading.Thread] = []
        self.outcomes: list[str] = []

    def send_task(self, name: str, args: list[int], queue: str) -> None:
        assert (name, queue) == ("analysis.run", "analysis")
        thread = threading.Thread(target=self._run, args=(args,), daemon=True)
        thread.start()
        self.threads.append(thread)

    def _run(self, args: list[int]) -> None:
        self.gate.wait(120)
        try:
            self.outcomes.append(run_analysis.apply(args=args).get())
        finally:
            connection.close()

    def join(self) -> None:
        self.gate.set()
        for thread in self.threads:
            thread.join(120)


@pytest.fixture
def owned(ladder2, make_bot, user, django_user_model, settings, monkeypatch, tmp_path):
    settings.LADDER_ANALYSIS_MAX_DECISIONS = CAP
    store = leases.SqliteLeases(tmp_path / "leases.sqlite3")  # this test's leases alone
    monkeypatch.setattr(leases, "store", lambda: store)
    worker = InProcessWorker()
    monkeypatch.setattr(app, "send_task", worker.send_task)
    other = django_user_model.objects.create_user("bob", password="x")
    match = play(ladder2, [make_bot(name="Owned"), make_bot(owner=other, name="Theirs")], seed=90_031)
    client = Client()
    client.force_login(user)
    yield match, client.cookies["sessionid"].value, worker
    worker.join()


def test_the_owner_asks_sees_the_progress_then_the_marks_and_the_better_move(owned, live_server) -> None:
    match, session, worker = owned
    with launched() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        open_as(page, live_server, session, f"/matches/{match.pk}/")
        page.locator("#viewer[data-moves=ready]").wait_for()
        button = page.locator("#analysis-request")
        assert button.is_visible() and button.inner_text() == "Analyse this match"
        button.click()
        page.locator("#analysis[data-status=QUEUED]").wait_for()
        assert page.locator("#analysis-progress").is_visible() and not button.is_visible()
        assert "Queued" in page.locator("#analysis-state").inner_text()
        worker.gate.set()  # the worker takes it
        page.locator("#analysis[data-status=DONE]").wait_for(timeout=120_000)
        worker.join()  # the task's thread returns after it stored the analysis the page shows
        assert worker.outcomes == ["done"]

        analysis = _stored(match.pk)
        worst = worst_decisions(analysis.reviews)
        assert len(worst) == 5, analysis.reviews
        flags = page.locator("#rv-moves .rv-analysis-flag")
        assert flags.count() == 5 and flags.first.is_visible()
        marked = page.locator("#rv-moves a.rv-move.rv-analysis-lost")
        marked_steps = sorted(int(marked.nth(i).get_attribute("data-step")) for i in range(5))
        assert marked_steps == sorted(r["step"] + 1 for r in worst)
        first = page.locator(f'#rv-moves a.rv-move[data-step="{worst[0]["step"] + 1}"]')
        assert f"Better: {worst[0]['best_words']}" in (first.get_attribute("title") or "")
        assert not page.locator("#analysis-progress").is_visible()
        assert page.locator("#analysis-worst li").count() == 5

        first.click()  # the viewer goes to the move: the note beside the board says what was better
        note = page.locator("#rv-analysis-note")
        note.wait_for()
        assert note.get_attribute("data-step") == str(worst[0]["step"])
        better = note.locator(".rv-better").inner_text()
        assert better.startswith(f"Better: {worst[0]['best_words']} (estimated +")
        assert worst[0]["played_words"] in note.inner_text()
        page.screenshot(path=str(ARTIFACTS / "match-analysis.png"), full_page=True)
        _check_the_lead_graph(page, match.steps)
        flags.first.scroll_into_view_if_needed()  # the move list, a marked move in view
        page.locator("#rv-moves").screenshot(path=str(ARTIFACTS / "match-analysis-moves.png"))
        assert errors == []
        page.wait_for_load_state("networkidle")

        # a visitor: the same marks, and no button
        open_as(page, live_server, None, f"/matches/{match.pk}/")
        page.locator("#viewer[data-analysis-marks='5']").wait_for()
        assert page.locator("#analysis-request").count() == 0 and errors == []
        page.wait_for_load_state("networkidle")


def _check_the_lead_graph(page, steps: int) -> None:  # type: ignore[no-untyped-def]
    """The analysis' graph: a line per seat, its cursor where the score graph's is; a click in its middle
    goes to a step in the middle of the game."""
    lead = page.locator("#rv-analysis-graph")
    assert lead.locator("polyline.rv-score-line").count() == 2
    assert "estimated lead over the best rival" in lead.locator("figcaption").inner_text()
    svg = lead.locator("svg")
    box = svg.bounding_box()
    svg.click(position={"x": box["width"] / 2, "y": box["height"] / 2})
    page.wait_for_function(
        "([lo, hi]) => { const s = Number(document.getElementById('viewer').dataset.renderedStep);"
        " return s > lo && s < hi; }",
        arg=[steps // 3, 2 * steps // 3],
    )
    cursor = "line.rv-graph-cursor"
    page.wait_for_function(
        "(c) => document.querySelector('#rv-analysis-graph ' + c).getAttribute('x1')"
        " === document.querySelector('#rv-graph ' + c).getAttribute('x1')",
        arg=cursor,
    )
    lead.screenshot(path=str(ARTIFACTS / "match-analysis-graph.png"))


def _stored(match_id: int) -> MatchAnalysis:
    """The stored analysis, read in another thread: the ORM refuses to run in Playwright's loop's."""
    result: list[MatchAnalysis] = []

    def read() -> None:
        try:
            result.append(MatchAnalysis.objects.get(match_id=match_id, status=AnalysisStatus.DONE))
        finally:
            connection.close()

    thread = threading.Thread(target=read)
    thread.start()
    thread.join(30)
    return result[0]
