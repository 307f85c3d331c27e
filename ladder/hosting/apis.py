"""Hosted bot endpoints: a bot's hosted versions (upload one: a multipart `archive` file), and its hosting
status (state, last exit, restarts; the bounded log for its owner only), which its owner turns on or off.
Layer: API (thin over `ladder.hosting.services` and `selectors`)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.bots.models import Bot
from ladder.hosting import selectors, services
from ladder.hosting.archives import MANIFEST
from ladder.hosting.models import HostedBot

UPLOAD_RULE = (
    f"A .tar.gz or .zip of regular files with {MANIFEST} at its root: "
    '{"runtime": "python" | "node", "entry": "bot.py", "version": "1.0"}. The version must be new for the bot; '
    "the host passes it to the bot as CARAVANSERAI_BOT_VERSION and both SDKs report it as the Hello's "
    "bot_version, so it is the version the ladder shows and rates. Uploading never changes the bot's token: "
    "the host runs the version with a credential of its own, so a copy of the bot run elsewhere keeps "
    "playing beside it (both count against the bot's max_concurrent). Refused with 400 naming the member or the manifest "
    "field, and nothing stored: links, devices and FIFOs, a member twice, a file where a directory must be "
    "(x beside x/y), a path leaving the archive, a name part over 255 bytes or a path over 1024 bytes, tar "
    "headers (pax or GNU long names) over 16 KiB for one member, an archive over the size, member-count or "
    "unpacked limits (counted as it is decompressed), a manifest that is not a JSON object (at most 64 KiB, "
    "nested at most 16 levels, each key once) with string fields free of control characters, a missing entry "
    "point or an unknown runtime. The host unpacks with the same reader."
)


class HostedVersionSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    # a declared field, moved by DRF's metaclass into the serializer's fields: `Field.parent` is untouched
    parent = serializers.CharField(source="parent.name", allow_null=True, default=None)  # type: ignore[assignment]
    runtime = serializers.CharField()
    entry = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    file_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class HostedStatusSerializer(serializers.Serializer[Any]):
    version = serializers.CharField(source="version.name")
    enabled = serializers.BooleanField()
    state = serializers.CharField(
        help_text="waiting, running, backoff (restarting after a crash), failed, stopped"
    )
    detail = serializers.CharField(help_text="why it last ended, as its host saw it")
    starts = serializers.IntegerField()
    crashes = serializers.IntegerField()
    reported_at = serializers.DateTimeField(allow_null=True)
    log = serializers.CharField(required=False, help_text="the bot's last output (owner only)")


def _owner(bot: Bot, request: Request) -> bool:
    return bool(request.user.is_authenticated and bot.owner_id == request.user.pk)


def _user(request: Request) -> AbstractBaseUser:
    user = request.user
    assert isinstance(user, AbstractBaseUser)  # the views' permission classes require a signed-in user
    return user


class HostedVersionsApi(APIView):
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]
    parser_classes = [MultiPartParser]

    @extend_schema(responses=HostedVersionSerializer(many=True))
    def get(self, request: Request, bot_id: int) -> Response:
        bot = get_object_or_404(Bot, pk=bot_id)
        return Response(HostedVersionSerializer(selectors.hosted_versions(bot_id=bot.pk), many=True).data)

    @extend_schema(
        description=UPLOAD_RULE,
        request=inline_serializer("HostedUpload", {"archive": serializers.FileField()}),
        responses={201: HostedVersionSerializer},
    )
    def post(self, request: Request, bot_id: int) -> Response:
        bot = get_object_or_404(Bot, pk=bot_id)
        upload = request.FILES.get("archive")
        if upload is None:
            raise ValidationError({"archive": ["send the archive as the multipart file field 'archive'"]})
        limit = services.archive_limits().max_bytes
        data = upload.read(limit + 1)
        version = services.hosted_version_upload(bot_id=bot.pk, user=_user(request), data=data)
        return Response(HostedVersionSerializer(version).data, status=status.HTTP_201_CREATED)


def status_data(hosting: HostedBot, *, owner: bool) -> dict[str, Any]:
    data = dict(HostedStatusSerializer(hosting).data)
    if not owner:
        data.pop("log", None)
        data["detail"] = ""
    return data


class HostedStatusApi(APIView):
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    @extend_schema(responses=HostedStatusSerializer)
    def get(self, request: Request, bot_id: int) -> Response:
        bot = get_object_or_404(Bot, pk=bot_id)
        hosting = selectors.hosted_bot(bot_id=bot.pk)
        if hosting is None:
            raise NotFound(f"{bot.name} is not hosted")
        return Response(status_data(hosting, owner=_owner(bot, request)))

    @extend_schema(
        request=inline_serializer("HostedEnable", {"enabled": serializers.BooleanField()}),
        responses=HostedStatusSerializer,
    )
    def post(self, request: Request, bot_id: int) -> Response:
        bot = get_object_or_404(Bot, pk=bot_id)
        body = request.data if isinstance(request.data, dict) else {}
        enabled = body.get("enabled")
        if not isinstance(enabled, bool):
            raise ValidationError({"enabled": ["enabled is true or false"]})
        hosting = services.hosted_bot_set_enabled(bot_id=bot.pk, user=_user(request), enabled=enabled)
        return Response(status_data(hosting, owner=True))
