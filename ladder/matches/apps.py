from django.apps import AppConfig


class MatchesConfig(AppConfig):
    name = "ladder.matches"
    label = "matches"
