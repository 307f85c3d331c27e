"""The practice-match page of a bot: its owner picks a game, options and opponents (house bots, their own
bots, bots that accept challenges) and is sent to the match page, where the match is watched live and then
replayed. Layer: web views; `ladder.matches.practice` validates and writes."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from engine_service.games import get_game
from ladder.bots.models import Bot
from ladder.core.users import request_user
from ladder.matches.practice import practice_house_policies, practice_match_request
from ladder.web.forms import game_choices

SEATS = 4  # opponents a form offers (the games seat at most 5)


class PracticeForm(forms.Form):
    game_id = forms.ChoiceField(label="Game", choices=game_choices)
    options = forms.CharField(
        required=False,
        label="Options (JSON)",
        help_text='For example {"caravans": true} for Marco Polo II with The Caravans; empty for the defaults.',
    )

    def __init__(self, *args: Any, opponents: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [("", "—"), *opponents]
        for i in range(1, SEATS + 1):
            self.fields[f"seat{i}"] = forms.ChoiceField(label=f"Seat {i}", choices=choices, required=i == 1)

    def clean_options(self) -> dict[str, Any]:
        text = self.cleaned_data["options"].strip()
        if not text:
            return {}
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"not JSON: {exc.msg}") from exc
        if not isinstance(value, dict):
            raise forms.ValidationError('options are a JSON object, such as {"caravans": true}')
        return value

    def opponents(self) -> list[str | int]:
        picked = [self.cleaned_data.get(f"seat{i}") for i in range(1, SEATS + 1)]
        return [int(p[4:]) if p.startswith("bot:") else p[6:] for p in picked if p]


def _opponent_choices(bot: Bot) -> list[tuple[str, str]]:
    house = [(f"house:{p}", f"house bot: {p}") for p in practice_house_policies()]
    others = (
        Bot.objects.filter(active=True, is_house=False)
        .filter(Q(owner=bot.owner) | Q(accepts_challenges=True))
        .exclude(pk=bot.pk)
    )
    return house + [
        (f"bot:{b.pk}", f"{b.name} ({', '.join(b.games)})") for b in others.order_by("name")[:200]
    ]


@login_required
def practice_new(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = get_object_or_404(Bot, pk=bot_id, owner=request.user, is_house=False)
    opponents = _opponent_choices(bot)
    form = PracticeForm(
        request.POST or None, opponents=opponents, initial={"game_id": (bot.games or [""])[0]}
    )
    if request.method == "POST" and form.is_valid():
        try:
            match = practice_match_request(
                user=request_user(request),
                bot_id=bot.pk,
                game_id=form.cleaned_data["game_id"],
                options=form.cleaned_data["options"],
                opponents=form.opponents(),
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(
                    None, f"{field}: {' '.join(errors)}" if field != "detail" else " ".join(errors)
                )
        else:
            return redirect("web:match", match_id=match.pk)
    games = [get_game(g).describe() for g in bot.games]
    context = {
        "bot": bot,
        "form": form,
        "games": games,
        "max_wait_minutes": f"{settings.LADDER_PRACTICE_MAX_WAIT_SECONDS / 60:g}",
    }
    return render(request, "web/practice_form.html", context)
