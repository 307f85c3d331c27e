from django.apps import AppConfig


class MatchesConfig(AppConfig):
    name = "ladder.matches"
    label = "matches"

    def ready(self) -> None:
        from ladder.bots.signals import bot_token_revoked
        from ladder.matches.receivers import cancel_matches_of_revoked_bot

        bot_token_revoked.connect(cancel_matches_of_revoked_bot, dispatch_uid="matches-cancel-revoked")
