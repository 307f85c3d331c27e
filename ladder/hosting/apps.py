from django.apps import AppConfig


class HostingConfig(AppConfig):
    name = "ladder.hosting"
    label = "hosting"
