"""Admin for bots: operators see and retire bots; tokens are never shown (only their hint)."""

from django.contrib import admin

from ladder.bots.models import Bot, BotVersion


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


@admin.register(BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    """Versions are recorded with rated matches; "reset rating" is the owner's (bot page or REST)."""

    list_display = ["bot", "name", "parent", "reset_rating", "first_seen_at"]
    search_fields = ["bot__name", "name"]
    readonly_fields = ["bot", "name", "parent", "reset_rating", "first_seen_at"]
