"""The ladder starts a tournament by sending the workers' task by name, after the commit, on its queue."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from ladder.tournaments import dispatch
from workers.celery_app import app


@pytest.mark.django_db
def test_the_start_is_sent_by_name_once_the_transaction_commits(
    monkeypatch, django_capture_on_commit_callbacks
):
    sent: list[tuple[str, list[int], str]] = []
    monkeypatch.setattr(app, "send_task", lambda name, args, queue: sent.append((name, args, queue)))
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        dispatch.tournament_start(tournament_id=7)
        assert sent == []  # nothing leaves before the commit
    assert len(callbacks) == 1
    assert sent == [("tournaments.start", [7], "tournaments")]


def test_the_named_task_and_queue_are_the_workers_own():
    app.loader.import_default_modules()  # the worker imports its task modules this way
    task = app.tasks[dispatch.TOURNAMENT_START]
    assert task.name == "tournaments.start"
    route = app.amqp.router.route({}, dispatch.TOURNAMENT_START, args=(1,))
    assert route["queue"].name == dispatch.TOURNAMENTS_QUEUE
    assert dispatch.celery_app() is app


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("no_such_module_anywhere:app", "names no Celery app"),
        ("ladder.tournaments.dispatch:TOURNAMENT_START", "not a Celery app"),
    ],
)
def test_a_misconfigured_app_is_named_in_the_error(settings, path, message):
    settings.CARAVANSERAI_CELERY_APP = path
    with pytest.raises(ImproperlyConfigured, match=message) as err:
        dispatch.celery_app()
    assert path in str(err.value)
