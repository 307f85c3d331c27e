"""The ladder: the Django project (settings, URLs) and its apps: bots, ladders, matches, ratings, replays, web.

Layer: the web service. Writes go through each app's `services.py`, reads through `selectors.py`; views and
serializers stay thin. Game rules and replays come from `engine_service` (pure); nothing here re-implements
rules. Ratings maths lives in `ladder.ratings.elo` and imports no Django.
"""
