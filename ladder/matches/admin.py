"""Admin for matches and seats (read-mostly: results come only from `match_record_result`)."""

from django.contrib import admin

from ladder.matches.models import Match, Seat


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
    inlines = [SeatInline]
