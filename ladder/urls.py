"""Root URLs: the web pages, the REST API under /api/v1/, the admin, and a health check."""

from django.contrib import admin
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.urls import include, path


def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("ladder.api_urls")),
    path("healthz", healthz, name="healthz"),
    path("", include("ladder.tournaments.urls")),
    path("", include("ladder.web.urls")),
]

handler404 = "ladder.web.views.not_found"
