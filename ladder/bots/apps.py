from django.apps import AppConfig


class BotsConfig(AppConfig):
    name = "ladder.bots"
    label = "bots"

    def ready(self) -> None:
        # Revocations made in this process reach every gateway through the session registry at once.
        from ladder.bots.gateway_auth import connect_revocation_publisher

        connect_revocation_publisher()
