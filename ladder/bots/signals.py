"""Signals of the bots app. `bot_token_revoked` is sent with `bot_id=` (after commit) whenever a bot's
token is rotated or revoked or the bot retired, so the gateway can drop the bot's sessions at once."""

from django.dispatch import Signal

bot_token_revoked = Signal()
