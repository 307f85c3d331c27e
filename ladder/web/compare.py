"""The "compare two bots" form of the web pages. It only shapes input (two different bots)."""

from __future__ import annotations

from typing import Any

from django import forms

from ladder.bots.models import Bot


class CompareForm(forms.Form):
    a = forms.ModelChoiceField(queryset=Bot.objects.order_by("name"), label="Bot", empty_label="choose a bot")
    b = forms.ModelChoiceField(
        queryset=Bot.objects.order_by("name"), label="against", empty_label="choose a bot"
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("a") is not None and data.get("a") == data.get("b"):
            raise forms.ValidationError("choose two different bots")
        return data
