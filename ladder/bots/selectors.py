"""Bot reads, including the identity lookup the gRPC gateway authenticates bots with.

Layer: selectors (keyword-only, typed, read-only). Must not write.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from ladder.bots.models import Bot
from ladder.bots.services import token_hash


@dataclass(frozen=True)
class BotIdentity:
    """Who a token belongs to: what the gateway needs to admit a bot's session."""

    bot_id: int
    name: str
    owner: str
    games: list[str]
    max_concurrent: int


def bot_identity_for_token(*, token: str) -> BotIdentity | None:
    """The bot a token authenticates, or None for an unknown, revoked or retired bot (or a house bot)."""
    if not isinstance(token, str) or not token or len(token) > 256:
        return None
    bot = (
        Bot.objects.select_related("owner")
        .filter(token_hash=token_hash(token), active=True, is_house=False)
        .first()
    )
    if bot is None:
        return None
    return BotIdentity(
        bot_id=bot.pk,
        name=bot.name,
        owner=bot.owner.get_username(),
        games=list(bot.games),
        max_concurrent=bot.max_concurrent,
    )


def bot_list(
    *,
    owner: str | None = None,
    game: str | None = None,
    search: str | None = None,
    include_retired: bool = False,
    include_house: bool = True,
) -> QuerySet[Bot]:
    bots = Bot.objects.select_related("owner").order_by("name")
    if not include_retired:
        bots = bots.filter(active=True)
    if not include_house:
        bots = bots.filter(is_house=False)
    if owner:
        bots = bots.filter(owner__username=owner)
    if game:
        bots = bots.filter(pk__in=[b.pk for b in bots if game in b.games or b.is_house])
    if search:
        bots = bots.filter(name__icontains=search)
    return bots


def bot_get(*, bot_id: int) -> Bot:
    try:
        return Bot.objects.select_related("owner").get(pk=bot_id)
    except Bot.DoesNotExist as exc:
        raise Bot.DoesNotExist(f"no bot with id {bot_id}") from exc


def bot_list_for_owner(*, user: AbstractBaseUser) -> QuerySet[Bot]:
    return Bot.objects.filter(owner=user).order_by("-active", "name")
