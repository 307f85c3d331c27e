"""Fixtures of the bot tests: the bot ids the revocation signal announced."""

from __future__ import annotations

import pytest

from ladder.bots.signals import bot_token_revoked


@pytest.fixture
def revocations():
    seen: list[int] = []

    def receiver(sender, bot_id, **kwargs):
        seen.append(bot_id)

    bot_token_revoked.connect(receiver)
    yield seen
    bot_token_revoked.disconnect(receiver)
