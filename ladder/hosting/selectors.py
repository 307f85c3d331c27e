"""Hosted bot reads: a bot's hosted versions (lineage, checksums; never the archive) and its hosting
status; the log only for its owner (the API and the page decide who asks).

Layer: selectors (keyword-only, typed, no writes).
"""

from __future__ import annotations

from django.db.models import QuerySet

from ladder.hosting.models import HostedBot, HostedVersion


def hosted_versions(*, bot_id: int) -> QuerySet[HostedVersion]:
    """The bot's hosted versions, oldest first, without their archives."""
    return (
        HostedVersion.objects.filter(bot_id=bot_id)
        .defer("archive")
        .select_related("parent")
        .order_by("created_at", "id")
    )


def hosted_bot(*, bot_id: int) -> HostedBot | None:
    return HostedBot.objects.filter(bot_id=bot_id).select_related("version").first()


def hosted_archive(*, version_id: int) -> bytes:
    """The stored archive of a version (for the bot host)."""
    return bytes(HostedVersion.objects.values_list("archive", flat=True).get(pk=version_id))
