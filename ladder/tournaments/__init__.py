"""Tournaments: round robin and Swiss events for a chosen set of bots on one ladder.

Models (`models.py`), writes (`services.py`: create, pair the next round, finish), reads (`selectors.py`:
standings and crosstable), REST (`apis.py`, under /api/v1/tournaments/) and pages (`views.py`). Tournament
matches are ordinary ladder matches (rated on the ladder, with replays); the Celery canvas that plays them
round by round lives in `workers.tournaments`, which the ladder starts by sending its task by name
(`dispatch.py`), never importing `workers`. The pairing and scoring maths is `pairing.tournament` (pure).
"""
