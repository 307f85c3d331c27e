"""Hosted bot page routes, included at the site root by `ladder.urls`."""

from django.urls import path

from ladder.hosting import views

app_name = "hosting"

urlpatterns = [
    path("bots/<int:bot_id>/hosted/", views.hosted_page, name="page"),
    path("bots/<int:bot_id>/hosted/upload/", views.hosted_upload, name="upload"),
    path("bots/<int:bot_id>/hosted/switch/", views.hosted_switch, name="switch"),
]
