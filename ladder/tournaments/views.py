"""Tournament pages: the list and one tournament (standings, crosstable, rounds). Layer: web (thin)."""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from ladder.tournaments import selectors


def tournament_index(request: HttpRequest) -> HttpResponse:
    return render(request, "tournaments/list.html", {"tournaments": selectors.tournament_list()[:100]})


def tournament_detail(request: HttpRequest, tournament_id: int) -> HttpResponse:
    try:
        data = selectors.tournament_standings(tournament_id=tournament_id)
    except ObjectDoesNotExist as exc:
        raise Http404(str(exc)) from exc
    data["crosstable_rows"] = list(zip(data["crosstable"]["bots"], data["crosstable"]["rows"], strict=True))
    return render(request, "tournaments/detail.html", data)
