"""Admin for user API tokens: read-only (a token's key is never stored)."""

from django.contrib import admin

from ladder.accounts.models import UserToken


@admin.register(UserToken)
class UserTokenAdmin(admin.ModelAdmin):
    list_display = ["id", "user", "hint", "created_at", "expires_at", "revoked_at", "last_used_at"]
    readonly_fields = ["user", "key_hash", "hint", "created_at", "expires_at", "last_used_at"]
    list_filter = ["revoked_at"]
