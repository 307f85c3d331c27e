"""Caravanserai bot SDK: subclass `Bot`, implement `decide(observation, legal_actions)`, call `run(bot)`.

    from caravanserai_bot import Bot, run

    class First(Bot):
        name = "first"
        def decide(self, observation, legal_actions):
            return legal_actions[0].id

    run(First(), target="127.0.0.1:50051", token="...")

The SDK holds one gRPC stream to the engine gateway, plays several matches at once on it (each decision in
a worker thread), reconnects with backoff, and logs every fault the server reports.
"""

__version__ = "0.1.0"

from caravanserai_bot.bot import (
    Bot,
    Fault,
    LegalAction,
    Match,
    MatchResult,
    Request,
    ServerError,
    TimeControl,
)
from caravanserai_bot.client import BotRefused, Client, run

__all__ = [
    "Bot",
    "BotRefused",
    "Client",
    "Fault",
    "LegalAction",
    "Match",
    "MatchResult",
    "Request",
    "ServerError",
    "TimeControl",
    "__version__",
    "run",
]
