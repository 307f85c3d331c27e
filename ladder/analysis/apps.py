from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "ladder.analysis"
    label = "analysis"
