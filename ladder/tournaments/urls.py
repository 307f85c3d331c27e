"""Tournament page routes, included at the site root by `ladder.urls`."""

from django.urls import path

from ladder.tournaments import views

app_name = "tournaments"

urlpatterns = [
    path("tournaments/", views.tournament_index, name="list"),
    path("tournaments/<int:tournament_id>/", views.tournament_detail, name="detail"),
]
