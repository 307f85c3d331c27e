from django.apps import AppConfig


class LaddersConfig(AppConfig):
    name = "ladder.ladders"
    label = "ladders"
