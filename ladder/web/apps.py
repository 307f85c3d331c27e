from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "ladder.web"
    label = "web"
