"""Admin for ratings: the ledger is read-only (append-only); current ratings are read-only too (rebuild
them with `manage.py ratings_recompute`). The ratings list warns when rows have counts no results can give
(more wins than games) and filters them; it never repairs them (`ratings_recompute --check` names the cause)."""

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from ladder.ratings.audit import INCONSISTENT, rating_rows_inconsistent
from ladder.ratings.models import Rating, RatingLedger


class ConsistencyFilter(admin.SimpleListFilter):
    title = "counts"
    parameter_name = "counts"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("inconsistent", "more wins than games")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Rating]) -> QuerySet[Rating]:
        return queryset.filter(INCONSISTENT) if self.value() == "inconsistent" else queryset


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ["bot", "ladder", "elo", "mu", "sigma", "games", "wins", "last_played_at"]
    list_filter = ["ladder", ConsistencyFilter]
    search_fields = ["bot__name"]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        count = rating_rows_inconsistent().count()
        if count:
            messages.warning(
                request,
                f"{count} rating {'row has' if count == 1 else 'rows have'} more wins than games, shown "
                "without a win rate interval. Filter them with 'counts: more wins than games' and run "
                "manage.py ratings_recompute --check to see what differs from the match records.",
            )
        return super().changelist_view(request, extra_context)

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
