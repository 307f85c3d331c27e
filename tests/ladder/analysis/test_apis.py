"""`/api/v1/matches/<id>/analysis/` and the match page's panel: POST asks (a seated bot's owner or staff;
anyone else 403, an unknown match 404, an unfinished one 409, a bound 429, each with its reason and nothing
changed), GET shows the status, progress and, once done, the reviews and the worst decisions to anyone;
the schema documents both; the page offers the button only to those who may ask."""

from __future__ import annotations

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ladder.analysis.models import AnalysisStatus, MatchAnalysis
from ladder.matches.services import match_create, match_mark_running
from tests.ladder.conftest import play

pytestmark = pytest.mark.django_db

REVIEWS = [
    {
        "step": step,
        "seat": step % 2,
        "played": f"a{step}",
        "played_words": f"played move {step}",
        "played_value": 0.5 - loss,
        "best": f"b{step}",
        "best_words": f"better move {step}",
        "best_value": 0.5,
        "loss": loss,
        "alternatives": 4,
    }
    for step, loss in enumerate([0.0, 0.25, 0.1, 0.0, 0.4, 0.05, 0.3, 0.2])
]


@pytest.fixture
def finished(ladder2, make_bot, other_user):
    return play(ladder2, [make_bot(name="Mine"), make_bot(owner=other_user, name="Theirs")], seed=90_011)


def url(match_id: int) -> str:
    return f"/api/v1/matches/{match_id}/analysis/"


def test_the_owner_asks_and_anyone_follows_the_progress(finished, alice_api, api, sent):
    assert api.get(url(finished.pk)).json()["status"] == "none"
    assert alice_api.get(url(finished.pk)).json()["may_request"] is True
    response = alice_api.post(url(finished.pk))
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["status"] == "QUEUED" and body["reviews"] == [] and body["worst"] == []
    assert sent == [("analysis.run", [finished.pk], "analysis")]
    MatchAnalysis.objects.filter(match=finished).update(
        status=AnalysisStatus.RUNNING, decisions_done=5, decisions_total=40, decisions_in_match=40
    )
    public = api.get(url(finished.pk)).json()
    assert (public["status"], public["decisions_done"], public["decisions_total"]) == ("RUNNING", 5, 40)
    assert public["may_request"] is False and "sign in" in public["refusal"]
    assert alice_api.post(url(finished.pk)).status_code == 202 and len(sent) == 1  # already running


def test_once_done_the_reviews_and_the_worst_decisions_are_public(finished, alice_api, api, sent):
    alice_api.post(url(finished.pk))
    MatchAnalysis.objects.filter(match=finished).update(
        status=AnalysisStatus.DONE,
        reviews=REVIEWS,
        decisions_done=8,
        decisions_total=8,
        cpu_seconds=1.25,
        finished_at=timezone.now(),
    )
    body = api.get(url(finished.pk)).json()
    assert body["status"] == "DONE" and body["reviews"] == REVIEWS and body["cpu_seconds"] == 1.25
    assert body["worst"] == [4, 6, 1, 7, 2]
    again = alice_api.post(url(finished.pk))
    assert again.status_code == 200 and again.json()["worst"] == [4, 6, 1, 7, 2] and len(sent) == 1


def test_refusals_say_why_and_change_nothing(finished, ladder2, make_bot, api, bob_api, django_user_model):
    stranger = django_user_model.objects.create_user("carol", password="x")
    carol = APIClient()
    carol.force_authenticate(stranger)
    refused = carol.post(url(finished.pk))
    assert refused.status_code == 403 and "played by a bot of yours" in refused.json()["detail"]
    assert api.post(url(finished.pk)).status_code in (401, 403)
    assert carol.post(url(987_654)).status_code == 404
    assert carol.get(url(987_654)).status_code == 404
    running = match_create(ladder_id=ladder2.pk, bot_ids=[make_bot().pk, make_bot().pk], seed=90_012)
    assert match_mark_running(match_id=running.pk)
    assert bob_api.post(url(running.pk)).status_code == 403  # no bot of bob's in it
    assert bob_api.get(url(running.pk)).status_code == 404  # shown with its replay only
    assert MatchAnalysis.objects.count() == 0


def test_an_unfinished_match_is_a_conflict_and_a_bound_is_429(ladder2, make_bot, alice_api, sent, settings):
    bots = [make_bot(), make_bot()]
    running = match_create(ladder_id=ladder2.pk, bot_ids=[b.pk for b in bots], seed=90_013)
    assert match_mark_running(match_id=running.pk)
    conflict = alice_api.post(url(running.pk))
    assert conflict.status_code == 409 and "only a finished match" in conflict.json()["detail"]
    settings.LADDER_ANALYSIS_PER_DAY = 0
    done = play(ladder2, bots, seed=90_014)
    limited = alice_api.post(url(done.pk))
    assert limited.status_code == 429 and "at most 0 a day" in limited.json()["detail"]
    assert set(limited.json()) == {"detail", "errors"}
    assert MatchAnalysis.objects.count() == 0 and sent == []


def test_the_schema_documents_the_endpoint(api):
    schema = api.get("/api/v1/schema/?format=json").json()
    operations = schema["paths"]["/api/v1/matches/{match_id}/analysis/"]
    assert {"get", "post"} <= set(operations)
    assert {"200", "202", "409", "429", "403"} <= set(operations["post"]["responses"])
    assert "DecisionReview" in schema["components"]["schemas"]


def test_the_page_offers_the_button_to_those_who_may_ask(finished, client, user, django_user_model, sent):
    page = f"/matches/{finished.pk}/"
    assert 'id="analysis"' not in client.get(page).content.decode()  # nothing asked, nobody who may ask
    client.force_login(user)
    html = client.get(page).content.decode()
    assert 'id="analysis-request"' in html and "Analyse this match" in html and "replay-analysis.js" in html
    assert 'name="csrfmiddlewaretoken"' in html
    MatchAnalysis.objects.create(match=finished, requested_by=user, requested_at=timezone.now())
    client.logout()
    html = client.get(page).content.decode()
    assert 'id="analysis"' in html and 'data-status="QUEUED"' in html and "analysis-request" not in html
    assert "Queued: waiting for the analysis worker" in html
