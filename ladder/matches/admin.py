"""Admin for matches and seats (read-mostly: results come only from `match_record_result`). The seed of a
match that is not over is shown to superusers only."""

from django.contrib import admin
from django.http import HttpRequest

from ladder.matches.models import Match, Seat
from ladder.matches.selectors import match_secrets_revealed


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    readonly_fields = ["index", "bot", "score", "rank", "forfeited", "faults"]
    can_delete = False


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = ["id", "ladder", "status", "attempts", "created_at", "finished_at"]
    list_filter = ["status", "ladder"]
    readonly_fields = [
        "seed",
        "attempts",
        "steps",
        "end_reason",
        "created_at",
        "queued_at",
        "started_at",
        "finished_at",
    ]
    exclude = ["seed"]
    inlines = [SeatInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Match | None = None) -> list[str]:
        """Only superusers see the seed of a match that is not over (it gives every hand)."""
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and not request.user.is_superuser and not match_secrets_revealed(match=obj):
            fields[fields.index("seed")] = "seed_hidden"
        return fields

    @admin.display(description="seed")
    def seed_hidden(self, obj: Match) -> str:
        return "hidden until the match is over"
