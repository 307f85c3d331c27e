"""Celery workers: the match loop's home. `celery_app` configures Celery from the Django settings; tasks are
grouped by domain: `matchmaking` (beat-driven pairing per ladder), `matches` (`run_match` and the stale-match
sweep), `tournaments` (round robin and Swiss as Celery canvas).

Layer: orchestration. Tasks take integer ids, re-read the database, and write only through the ladder's
services; the referee plays the match, the gateway relays remote bots. Nothing here holds game rules or
computes ratings.
"""
