from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "ladder.core"
    label = "core"
