"""Admin for ladders. Rating parameters are read-only once a match on the ladder has been rated."""

from django.contrib import admin

from ladder.ladders.models import Ladder

RATING_FIELDS = ["elo_k", "elo_scale", "elo_start", "openskill_mu", "openskill_sigma"]


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "game_id", "num_players", "house_bots_allowed", "active"]
    list_filter = ["game_id", "active"]
    prepopulated_fields = {"slug": ["name"]}

    def get_readonly_fields(self, request, obj=None):  # type: ignore[no-untyped-def]
        if obj is not None and obj.ledger.exists():
            return ["game_id", "num_players", "options", *RATING_FIELDS]
        return []
