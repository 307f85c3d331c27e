"""Authentication endpoints: exchange a username and password for an API token (throttled), and who am I.
Layer: API (thin)."""

from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.core.throttles import AuthThrottle


class TokenInputSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=256, trim_whitespace=False)


class AuthTokenApi(APIView):
    """A user's API token (created on first request); send it as `Authorization: Token <key>`."""

    permission_classes = [permissions.AllowAny]
    authentication_classes: list = []
    throttle_classes = [AuthThrottle]

    @extend_schema(
        request=TokenInputSerializer,
        responses=inline_serializer("AuthToken", {"token": serializers.CharField()}),
    )
    def post(self, request: Request) -> Response:
        data = TokenInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(request, **data.validated_data)
        if user is None or not user.is_active:
            raise AuthenticationFailed("unknown username or wrong password")
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class MeApi(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        responses=inline_serializer(
            "Me",
            {
                "id": serializers.IntegerField(),
                "username": serializers.CharField(),
                "is_staff": serializers.BooleanField(),
            },
        )
    )
    def get(self, request: Request) -> Response:
        return Response(
            {
                "id": request.user.pk,
                "username": request.user.get_username(),
                "is_staff": request.user.is_staff,
            }
        )
