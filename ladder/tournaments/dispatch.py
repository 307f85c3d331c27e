"""Starting a tournament on the workers: a Celery task sent by name once the transaction commits.

Layer: the ladder's side of the seam between the web and the workers. It imports nothing of `workers`: the
task is named (`tournaments.start` on the `tournaments` queue, the names `workers.tournaments` registers),
and the Celery application that carries it (the broker configuration is the workers') is the one the Django
setting CARAVANSERAI_CELERY_APP names, `workers.celery_app:app` by default, resolved at the first send with
Celery's own lookup (`celery.utils.imports.symbol_by_name`, as `celery -A` does). It must not run a task
itself, wait for a result or send anything before the transaction that made the tournament commits.
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.utils.imports import symbol_by_name
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

DEFAULT_CELERY_APP = "workers.celery_app:app"
TOURNAMENT_START = "tournaments.start"
TOURNAMENTS_QUEUE = "tournaments"


def celery_app() -> Celery[Any]:
    """The Celery application CARAVANSERAI_CELERY_APP names (`module:attribute`)."""
    path = getattr(settings, "CARAVANSERAI_CELERY_APP", DEFAULT_CELERY_APP)
    try:
        app = symbol_by_name(path)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ImproperlyConfigured(f"CARAVANSERAI_CELERY_APP={path!r} names no Celery app: {exc}") from exc
    if not isinstance(app, Celery):
        raise ImproperlyConfigured(
            f"CARAVANSERAI_CELERY_APP={path!r} is a {type(app).__name__}, not a Celery app"
        )
    return app


def send_on_commit(name: str, *args: Any, queue: str) -> None:
    """Send the task `name` with `args` to `queue` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: celery_app().send_task(name, args=list(args), queue=queue))


def tournament_start(*, tournament_id: int) -> None:
    """Ask the workers to pair and play the tournament's first round (after the commit)."""
    send_on_commit(TOURNAMENT_START, tournament_id, queue=TOURNAMENTS_QUEUE)
