from django.apps import AppConfig


class BotsConfig(AppConfig):
    name = "ladder.bots"
    label = "bots"
