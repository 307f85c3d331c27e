"""Bot versions with lineage: recorded when a version plays a rated match (or announced by the owner in
advance), each with the version played before it as its parent; the owner may choose "reset rating" for a
version until it has a rated game.

Layer: services and selectors for `BotVersion` (keyword-only, typed). `bot_version_record` runs inside the
match-result transaction (no row locks of its own; concurrent first sightings of one version are
absorbed by the unique constraint). Bad input raises `ValidationError` naming the problem.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, QuerySet
from django.utils import timezone

from ladder.bots.models import Bot, BotVersion

MAX_VERSION_LENGTH = 64


def _clean_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_VERSION_LENGTH:
        raise ValidationError(
            {"name": [f"a version is a non-empty string of at most {MAX_VERSION_LENGTH} characters"]}
        )
    return name.strip()


def bot_version_record(*, bot_id: int, name: str, at: datetime) -> BotVersion:
    """The bot's version `name`, created on first sight with the bot's latest version as its parent."""
    name = _clean_name(name)
    found = BotVersion.objects.filter(bot_id=bot_id, name=name).first()
    if found is not None:
        return found
    parent = BotVersion.objects.filter(bot_id=bot_id).order_by("-first_seen_at", "-id").first()
    BotVersion.objects.bulk_create(
        [BotVersion(bot_id=bot_id, name=name, parent=parent, first_seen_at=at)], ignore_conflicts=True
    )
    return BotVersion.objects.get(bot_id=bot_id, name=name)


def version_has_rated_games(*, version: BotVersion) -> bool:
    from ladder.ratings.models import RatingLedger

    return RatingLedger.objects.filter(bot_id=version.bot_id, version=version.name).exists()


@transaction.atomic
def bot_version_set(*, bot_id: int, user: User, name: str, reset_rating: bool) -> BotVersion:
    """The owner announces a version (before it connects with it) or changes its "reset rating" choice;
    refused once the version has a rated game (its start is then part of the rating ledger)."""
    bot = Bot.objects.select_for_update().filter(pk=bot_id).first()
    if bot is None:
        raise ValidationError({"bot": [f"no bot with id {bot_id}"]})
    if not user.is_authenticated or bot.owner_id != user.pk:
        raise PermissionDenied("only the bot's owner may set its versions")
    if not isinstance(reset_rating, bool):
        raise ValidationError({"reset_rating": ["reset_rating is true or false"]})
    version = bot_version_record(bot_id=bot.pk, name=name, at=timezone.now())
    if version.reset_rating != reset_rating:
        if version_has_rated_games(version=version):
            raise ValidationError(
                {
                    "reset_rating": [
                        f"version {version.name} has rated games: its start is fixed in the ledger"
                    ]
                }
            )
        version.reset_rating = reset_rating
        version.save(update_fields=["reset_rating"])
    return version


def bot_versions(*, bot_id: int) -> QuerySet[BotVersion]:
    """The bot's versions, first seen first, with their parents."""
    return BotVersion.objects.filter(bot_id=bot_id).select_related("parent").order_by("first_seen_at", "id")


def version_games(*, bot_id: int) -> dict[str, int]:
    """Rated games per version of the bot (every ladder)."""
    from ladder.ratings.models import RatingLedger

    rows = RatingLedger.objects.filter(bot_id=bot_id).exclude(version="")
    return dict(rows.values("version").annotate(n=Count("id")).values_list("version", "n"))
