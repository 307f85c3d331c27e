"""Admin for tournaments, their entries and rounds. The seed of a tournament with a match derived from it
still to be played is shown to superusers only (`tournament_seed_revealed`: it gives every table's hands)."""

from django.contrib import admin
from django.http import HttpRequest

from ladder.tournaments.models import Tournament, TournamentEntry, TournamentRound
from ladder.tournaments.selectors import tournament_seed_revealed


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
    exclude = ["seed"]

    def get_readonly_fields(self, request: HttpRequest, obj: Tournament | None = None) -> list[str]:
        """Only superusers see the seed while a match derived from it is still to be played."""
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and not request.user.is_superuser and not tournament_seed_revealed(tournament=obj):
            fields[fields.index("seed")] = "seed_hidden"
        return fields

    @admin.display(description="seed")
    def seed_hidden(self, obj: Tournament) -> str:
        return "hidden until every match derived from it is over"


@admin.register(TournamentRound)
class TournamentRoundAdmin(admin.ModelAdmin):
    list_display = ["id", "tournament", "number", "finished_at"]
