from django.apps import AppConfig


class RatingsConfig(AppConfig):
    name = "ladder.ratings"
    label = "ratings"
