from django.contrib import admin

from ladder.tournaments.models import Tournament, TournamentEntry, TournamentRound


class EntryInline(admin.TabularInline):
    model = TournamentEntry
    extra = 0
    raw_id_fields = ["bot"]


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "ladder", "format", "status", "rounds_planned", "created_at"]
    list_filter = ["format", "status", "ladder"]
    inlines = [EntryInline]
    readonly_fields = ["seed", "created_at", "finished_at"]


@admin.register(TournamentRound)
class TournamentRoundAdmin(admin.ModelAdmin):
    list_display = ["id", "tournament", "number", "finished_at"]
