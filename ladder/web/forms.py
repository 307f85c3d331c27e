"""Forms of the web pages. They only shape input; the services validate and write."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm

from engine_service.games import list_games
from ladder.bots.services import MAX_CONCURRENT_LIMIT


def game_choices() -> list[tuple[str, str]]:
    return [(spec.game_id, f"{spec.name} ({spec.game_id})") for spec in list_games()]


class BotForm(forms.Form):
    name = forms.CharField(max_length=40, help_text="Letters, digits, space and -_. (unique on the ladder).")
    games = forms.MultipleChoiceField(choices=game_choices, widget=forms.CheckboxSelectMultiple)
    description = forms.CharField(max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 3}))
    max_concurrent = forms.IntegerField(
        min_value=1,
        max_value=MAX_CONCURRENT_LIMIT,
        initial=1,
        label="Max concurrent",
        help_text=f"Matches this bot may play at once: 1 by default, at most {MAX_CONCURRENT_LIMIT}. The "
        "gateway grants the smallest of this, what the bot's Hello asks (max_concurrent_matches) and its own "
        "limit; the token page's commands ask for this many.",
    )
    accepts_challenges = forms.BooleanField(
        required=False, help_text="Other owners may ask for unrated practice matches against this bot."
    )


class SignupForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):
        fields = ("username",)
