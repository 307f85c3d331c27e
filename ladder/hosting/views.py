"""The hosted bot page (`/bots/<id>/hosted/`): the bot's hosted versions with their lineage and checksums,
its hosting state; for its owner also the last exit, the bounded log, an upload form and the on/off switch.
Layer: web views (thin over `ladder.hosting` services and selectors)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from ladder.bots.models import Bot
from ladder.hosting import selectors, services
from ladder.hosting.apis import UPLOAD_RULE


def _owned(request: HttpRequest, bot_id: int) -> tuple[Bot, AbstractBaseUser]:
    bot = get_object_or_404(Bot, pk=bot_id)
    user = request.user
    if not isinstance(user, AbstractBaseUser) or bot.owner_id != user.pk:
        raise PermissionDenied("only the owner may change how this bot is hosted")
    return bot, user


def hosted_page(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = get_object_or_404(Bot, pk=bot_id)
    owner = bool(request.user.is_authenticated and bot.owner_id == request.user.pk)
    context = {
        "bot": bot,
        "owner": owner,
        "hosting": selectors.hosted_bot(bot_id=bot.pk),
        "versions": list(selectors.hosted_versions(bot_id=bot.pk)),
        "rule": UPLOAD_RULE,
        "max_bytes": services.archive_limits().max_bytes,
    }
    return render(request, "hosting/hosted.html", context)


@login_required
@require_POST
def hosted_upload(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot, user = _owned(request, bot_id)
    upload = request.FILES.get("archive")
    if upload is None:
        messages.error(request, "Choose an archive to upload.")
        return redirect("hosting:page", bot.pk)
    try:
        version = services.hosted_version_upload(
            bot_id=bot.pk, user=user, data=upload.read(services.archive_limits().max_bytes + 1)
        )
    except ValidationError as exc:
        messages.error(request, "Nothing was stored: " + "; ".join(exc.messages))
    else:
        messages.success(
            request, f"Version {version.name} stored ({version.sha256[:12]}); it is hosted from now on."
        )
    return redirect("hosting:page", bot.pk)


@login_required
@require_POST
def hosted_switch(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot, user = _owned(request, bot_id)
    enabled = request.POST.get("enabled") == "1"
    try:
        services.hosted_bot_set_enabled(bot_id=bot.pk, user=user, enabled=enabled)
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect("hosting:page", bot.pk)
