"""Admin for ladders. Rating parameters are read-only once a match on the ladder has been rated; the season
changes only through the "close the current season" action."""

from django.contrib import admin, messages
from django.core.exceptions import ValidationError

from ladder.ladders.models import Ladder

RATING_FIELDS = ["elo_k", "elo_scale", "elo_start", "openskill_mu", "openskill_sigma"]


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "game_id", "num_players", "house_bots_allowed", "active"]
    list_filter = ["game_id", "active"]
    prepopulated_fields = {"slug": ["name"]}
    actions = ["close_season"]

    @admin.action(description="Close the current season (freeze its standings, start the next)")
    def close_season(self, request, queryset):  # type: ignore[no-untyped-def]
        from ladder.ratings.seasons import season_close

        for ladder in queryset:
            try:
                season = season_close(ladder_id=ladder.pk)
            except ValidationError as exc:
                self.message_user(request, f"{ladder}: {'; '.join(exc.messages)}", messages.ERROR)
            else:
                self.message_user(request, f"{ladder}: season {season.number} closed")

    def get_readonly_fields(self, request, obj=None):  # type: ignore[no-untyped-def]
        if obj is not None and obj.ledger.exists():
            return ["game_id", "num_players", "options", "season", *RATING_FIELDS]
        return ["season"]
