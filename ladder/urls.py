"""Root URLs: the web pages, the REST API under /api/v1/, the admin, and a health check."""

from django.contrib import admin
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from ladder.core.metrics import metrics_view
from ladder.core.throttles import auth_throttled


def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


urlpatterns = [
    path("admin/login/", auth_throttled(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/v1/", include("ladder.api_urls")),
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    path("", include("ladder.tournaments.urls")),
    path("", include("ladder.hosting.urls")),
    path("", include("ladder.web.urls")),
]

handler400 = "ladder.core.views.bad_request"
handler404 = "ladder.core.views.not_found"
handler500 = "ladder.core.views.server_error"
