"""Admin for match analyses: read-only (a worker writes them); the reviews are left out of the form."""

from django.contrib import admin

from ladder.analysis.models import MatchAnalysis


@admin.register(MatchAnalysis)
class MatchAnalysisAdmin(admin.ModelAdmin):
    list_display = [
        "match",
        "status",
        "requested_by",
        "decisions_done",
        "decisions_total",
        "cpu_seconds",
        "requested_at",
        "finished_at",
    ]
    list_filter = ["status"]
    exclude = ["reviews"]
    readonly_fields = [
        "match",
        "requested_by",
        "status",
        "reason",
        "level",
        "decisions_done",
        "decisions_total",
        "decisions_in_match",
        "cpu_seconds",
        "attempts",
        "requested_at",
        "started_at",
        "finished_at",
        "updated_at",
    ]

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False
