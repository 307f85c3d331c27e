"""What the matches app does when something happens elsewhere: a bot whose token is rotated or revoked,
or that is retired, has its matches that have not started cancelled (unrated), since the bot's sessions
are dropped at once and those matches would only be called off when they start. Matchmaking seats the
bot again once it is back. Layer: signal receivers over the matches services."""

from __future__ import annotations

import logging
from typing import Any

from ladder.matches.models import Match, MatchStatus
from ladder.matches.services import match_cancel

log = logging.getLogger("caravanserai.matches")

NOT_STARTED = (MatchStatus.NEW, MatchStatus.QUEUED)


def cancel_matches_of_revoked_bot(sender: Any, bot_id: int, **kwargs: Any) -> None:
    waiting = Match.objects.filter(seats__bot_id=bot_id, status__in=NOT_STARTED).values_list("pk", flat=True)
    cancelled = [
        match_id
        for match_id in list(waiting)
        if match_cancel(
            match_id=match_id,
            reason=f"cancelled unrated before it began: bot {bot_id}'s token was revoked",
            only_if_not_started=True,
        )
    ]
    if cancelled:
        log.info("bot %s revoked: matches not yet started cancelled %s", bot_id, cancelled)
