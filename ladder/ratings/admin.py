"""Admin for ratings: the ledger is read-only (append-only); current ratings are read-only too (rebuild
them with `manage.py ratings_recompute`)."""

from django.contrib import admin

from ladder.ratings.models import Rating, RatingLedger


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ["bot", "ladder", "elo", "mu", "sigma", "games", "wins", "last_played_at"]
    list_filter = ["ladder"]
    search_fields = ["bot__name"]

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False


@admin.register(RatingLedger)
class RatingLedgerAdmin(admin.ModelAdmin):
    list_display = ["id", "match", "bot", "ladder", "rank", "elo_before", "elo_after", "created_at"]
    list_filter = ["ladder"]

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_add_permission(self, request):  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False
