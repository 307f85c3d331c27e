"""Admin for bots: operators see and retire bots; tokens are never shown (only their hint)."""

from django.contrib import admin

from ladder.bots.models import Bot


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "owner",
        "status_label",
        "is_house",
        "house_policy",
        "max_concurrent",
        "created_at",
    ]
    list_filter = ["active", "is_house"]
    search_fields = ["name", "owner__username"]
    readonly_fields = [
        "token_hash",
        "token_hint",
        "token_created_at",
        "versions_seen",
        "created_at",
        "updated_at",
    ]
