"""Authentication endpoints: exchange a username and password for an API token (throttled), rotate or
revoke the token a request carries, and who am I. Layer: API (thin)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import permissions, serializers
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts import services
from ladder.accounts.authentication import UserTokenAuthentication
from ladder.accounts.models import UserToken
from ladder.core.throttles import AuthThrottle
from ladder.core.users import request_user

TokenOutput = inline_serializer(
    "AuthToken", {"token": serializers.CharField(), "expires_at": serializers.DateTimeField()}
)


class TokenInputSerializer(serializers.Serializer[Any]):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=256, trim_whitespace=False)


class RevokeInputSerializer(serializers.Serializer[Any]):
    all = serializers.BooleanField(required=False, default=False)


def _token_response(row: UserToken, token: str) -> Response:
    response = Response({"token": token, "expires_at": row.expires_at})
    response["Cache-Control"] = "no-store"
    return response


class AuthTokenApi(APIView):
    """A new API token for a username and password; send it as `Authorization: Token <key>`. It expires
    after LADDER_TOKEN_DAYS (30 by default) and is shown only in this response."""

    permission_classes = [permissions.AllowAny]
    authentication_classes: list[type[BaseAuthentication]] = []
    throttle_classes = [AuthThrottle]

    @extend_schema(request=TokenInputSerializer, responses=TokenOutput)
    def post(self, request: Request) -> Response:
        data = TokenInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(request, **data.validated_data)
        if user is None or not user.is_active:
            raise AuthenticationFailed("unknown username or wrong password")
        return _token_response(*services.user_token_issue(user=user))


class _TokenHolderApi(APIView):
    authentication_classes = [UserTokenAuthentication]
    permission_classes = [permissions.IsAuthenticated]

    def presented(self, request: Request) -> UserToken:
        if not isinstance(request.auth, UserToken):
            raise ValidationError("send the token itself (Authorization: Token <key>)")
        return request.auth


class AuthTokenRotateApi(_TokenHolderApi):
    """Revoke the token this request carries and return a new one."""

    @extend_schema(request=None, responses=TokenOutput)
    def post(self, request: Request) -> Response:
        return _token_response(*services.user_token_rotate(token_id=self.presented(request).pk))


class AuthTokenRevokeApi(_TokenHolderApi):
    """Revoke the token this request carries, or with `{"all": true}` every token of its user."""

    @extend_schema(
        request=RevokeInputSerializer,
        responses=inline_serializer("Revoked", {"revoked": serializers.IntegerField()}),
    )
    def post(self, request: Request) -> Response:
        data = RevokeInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        token = self.presented(request)
        if data.validated_data["all"]:
            return Response({"revoked": services.user_tokens_revoke_all(user=request_user(request))})
        return Response({"revoked": int(services.user_token_revoke(token_id=token.pk))})


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
