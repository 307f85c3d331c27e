"""Admin for replays (read-only; the compressed record is not shown)."""

from django.contrib import admin

from ladder.replays.models import Replay


@admin.register(Replay)
class ReplayAdmin(admin.ModelAdmin):
    list_display = ["match", "format", "steps", "raw_size", "created_at"]
    exclude = ["data"]
    readonly_fields = ["match", "format", "sha256", "steps", "final_hash", "raw_size", "created_at"]

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False
