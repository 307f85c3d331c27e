"""Admin for bots: operators see and retire bots; tokens are never shown (only their hint).

Retiring goes through `bot_retire` (the admin action), never by editing `active`: the service also revokes
the token, announces it to the gateways and takes the bot off its leaderboards in one transaction.
"""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_retire


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
        "active",
        "retired_at",
        "token_hash",
        "token_hint",
        "token_created_at",
        "hosted_token_hash",
        "hosted_token_created_at",
        "versions_seen",
        "created_at",
        "updated_at",
    ]
    actions = ["retire"]

    @admin.action(description="Retire the selected bots (token revoked, off the leaderboards)")
    def retire(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        retired = 0
        for bot_id in queryset.filter(active=True).values_list("pk", flat=True):
            bot_retire(bot_id=bot_id)
            retired += 1
        self.message_user(request, f"{retired} bot(s) retired")


@admin.register(BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    """Versions are recorded with rated matches; "reset rating" is the owner's (bot page or REST)."""

    list_display = ["bot", "name", "parent", "reset_rating", "first_seen_at"]
    search_fields = ["bot__name", "name"]
    readonly_fields = ["bot", "name", "parent", "reset_rating", "first_seen_at"]
