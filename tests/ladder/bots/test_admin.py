"""The bots admin retires through the service: token revoked, off the leaderboards; `active` itself is not
editable there (an edit would have left the token working and the bot on its boards)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from ladder.bots.models import Bot
from ladder.ratings.models import Rating
from tests.ladder.conftest import play

pytestmark = pytest.mark.django_db


def test_the_admin_retires_bots_through_the_service(ladder2, make_bot):
    admin = get_user_model().objects.create_superuser("root-admin", password="correct-horse-battery")
    client = Client()
    client.force_login(admin)
    a, b = make_bot(), make_bot()
    play(ladder2, [a, b], 7)
    assert Rating.objects.get(bot=a, ladder=ladder2).position is not None
    form = client.get(f"/admin/bots/bot/{a.pk}/change/").content.decode()
    assert 'name="active"' not in form  # shown, not editable
    response = client.post("/admin/bots/bot/", {"action": "retire", "_selected_action": [a.pk]}, follow=True)
    assert response.status_code == 200 and "1 bot(s) retired" in response.content.decode()
    a.refresh_from_db()
    assert not a.active and a.token_hash is None and a.retired_at is not None
    assert Rating.objects.get(bot=a, ladder=ladder2).position is None  # off the board
    assert Bot.objects.get(pk=b.pk).active
