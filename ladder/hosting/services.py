"""Hosted bot writes: upload a version (checked whole first: nothing is stored for a bad archive), turn
hosting on or off, and the bot hosts' side: claim the versions to run (a lease per bot), report how each
runs, let go of them.

Layer: services (keyword-only, typed, transactional). Bad input raises `ValidationError` naming the field
at fault and changes nothing. Must not render HTTP; never sees or stores a bot's token.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ladder.bots.models import Bot
from ladder.bots.versions import bot_version_record
from ladder.hosting.archives import ArchiveError, ArchiveLimits, read_archive
from ladder.hosting.models import HostedBot, HostedVersion
from ladder.hosting.text import clean_text

LOG_LIMIT = 64 * 1024
DETAIL_LIMIT = 200


def archive_limits() -> ArchiveLimits:
    return ArchiveLimits(
        max_bytes=settings.HOSTING_ARCHIVE_MAX_BYTES,
        max_unpacked_bytes=settings.HOSTING_ARCHIVE_MAX_UNPACKED_BYTES,
        max_files=settings.HOSTING_ARCHIVE_MAX_FILES,
    )


def _owned_bot(*, bot_id: int, user: AbstractBaseUser) -> Bot:
    bot = Bot.objects.select_for_update().filter(pk=bot_id).first()
    if bot is None:
        raise Bot.DoesNotExist(f"no bot with id {bot_id}")
    if not user.is_authenticated or bot.owner_id != user.pk:
        raise PermissionDenied(f"only the owner of {bot.name} may host it")
    if bot.is_house or not bot.active:
        raise ValidationError({"bot": [f"{bot.name} is a house bot or retired: it cannot be hosted"]})
    return bot


@transaction.atomic
def hosted_version_upload(*, bot_id: int, user: AbstractBaseUser, data: bytes) -> HostedVersion:
    """Store an uploaded archive as the bot's new hosted version (its parent: the one hosted until now) and
    host it from now on; a version name already used by the bot is refused. The bot's tokens are untouched:
    the host runs it with the bot's hosted credential (`bot_hosted_token_issue`), never the owner's."""
    bot = _owned_bot(bot_id=bot_id, user=user)
    try:
        archive = read_archive(data, archive_limits())
    except ArchiveError as exc:
        raise ValidationError({exc.field: [exc.message]}) from None
    name = archive.manifest.version
    if HostedVersion.objects.filter(bot=bot, name=name).exists():
        raise ValidationError(
            {"version": [f"{bot.name} already has a version {name!r}: versions are immutable"]}
        )
    hosting = HostedBot.objects.filter(bot=bot).select_related("version").first()
    version = HostedVersion.objects.create(
        bot=bot,
        name=name,
        parent=hosting.version if hosting else None,
        runtime=archive.manifest.runtime,
        entry=archive.manifest.entry,
        sha256=archive.sha256,
        size=archive.size,
        file_count=archive.file_count,
        archive=data,
        uploaded_by_id=user.pk,
    )
    bot_version_record(bot_id=bot.pk, name=name, at=timezone.now())
    if hosting is None:
        HostedBot.objects.create(bot=bot, version=version)
    else:
        hosting.version, hosting.state, hosting.detail = version, HostedBot.WAITING, ""
        hosting.save(update_fields=["version", "state", "detail"])
    return version


@transaction.atomic
def hosted_bot_set_enabled(*, bot_id: int, user: AbstractBaseUser, enabled: bool) -> HostedBot:
    bot = _owned_bot(bot_id=bot_id, user=user)
    hosting = HostedBot.objects.select_for_update().filter(bot=bot).first()
    if hosting is None:
        raise ValidationError({"enabled": [f"{bot.name} has no hosted version yet: upload one first"]})
    hosting.enabled = enabled
    hosting.save(update_fields=["enabled"])
    return hosting


@transaction.atomic
def hosted_claim(
    *, host_id: str, limit: int, lease_seconds: float, now: datetime | None = None
) -> list[HostedBot]:
    """The hosted bots `host_id` should run now (at most `limit`): those it holds, then unheld or expired
    ones; each lease renewed. A bot a host no longer gets here is for it to stop."""
    now = now or timezone.now()
    runnable = HostedBot.objects.select_for_update().filter(enabled=True, bot__active=True)
    mine = list(runnable.filter(host_id=host_id).order_by("id")[:limit])
    free = Q(host_id="") | Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    more = list(runnable.filter(free).exclude(host_id=host_id).order_by("id")[: max(0, limit - len(mine))])
    claimed = mine + more
    until = now + timedelta(seconds=lease_seconds)
    HostedBot.objects.filter(pk__in=[h.pk for h in claimed]).update(host_id=host_id, claimed_until=until)
    return list(
        HostedBot.objects.filter(pk__in=[h.pk for h in claimed]).select_related("version").order_by("id")
    )


def hosted_report(
    *,
    host_id: str,
    bot_id: int,
    version_id: int,
    state: str,
    detail: str,
    starts: int,
    crashes: int,
    log: str,
) -> bool:
    """Record what a host says of a bot it runs; ignored (False) unless it holds that bot at that version.
    The log and the detail are stored cleaned (`clean_text`): a bot's output never makes the report fail."""
    if state not in HostedBot.STATES:
        raise ValidationError({"state": [f"state must be one of {', '.join(HostedBot.STATES)}"]})
    updated = HostedBot.objects.filter(bot_id=bot_id, host_id=host_id, version_id=version_id).update(
        state=state,
        detail=clean_text(detail)[:DETAIL_LIMIT],
        starts=starts,
        crashes=crashes,
        log=clean_text(log)[-LOG_LIMIT:],
        reported_at=timezone.now(),
    )
    return bool(updated)


def hosted_release(*, host_id: str) -> int:
    """A host that stops lets go of its bots at once (another host may take them)."""
    return HostedBot.objects.filter(host_id=host_id).update(host_id="", claimed_until=None)
