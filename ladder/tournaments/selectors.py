"""Tournament reads: list, detail, scores, standings and crosstable.

Layer: selectors (keyword-only, typed, read only). Scoring is `pairing.tournament` (pure): per match, a seat
earns 1 per opponent finished ahead of, 1/2 per tie, divided by the number of opponents; a Swiss bye is
worth 1/2. Standings order: points, then Buchholz (sum of the opponents' points), then wins, then seed.
Only DONE matches count; an ERROR or CANCELLED match scores nothing for anyone.

Hidden information: every table's seed is derived from the tournament seed, so the tournament seed is shown
only once no match derived from it is still to be played (`tournament_seed_revealed`): the tournament is
over (DONE or CANCELLED) and every match of its tables, and any other match sharing one of their seeds, is
final. A cancelled tournament's queued tables still play, and keep its seed hidden until they end.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Count, Exists, OuterRef, QuerySet

from ladder.matches.models import Match, MatchStatus
from ladder.tournaments.models import Tournament, TournamentMatch, TournamentStatus
from pairing.tournament import standings_table

BYE_POINTS = 0.5
FINAL = (MatchStatus.DONE, MatchStatus.ERROR, MatchStatus.CANCELLED)


def _derived_match_in_play() -> Exists:
    """A match still to be played (not final) whose seed is one of the tournament's tables' seeds: one of
    its own tables, or a match sharing a table's seed."""
    table_seeds = Match.objects.filter(tournament_match__round__tournament=OuterRef(OuterRef("pk")))
    return Exists(Match.objects.filter(seed__in=table_seeds.values("seed")).exclude(status__in=FINAL))


def tournament_seed_revealed(*, tournament: Tournament) -> bool:
    """True when the tournament's seed may be shown to anyone (see the module docstring)."""
    if tournament.status == TournamentStatus.RUNNING:
        return False
    in_play = getattr(tournament, "derived_match_in_play", None)
    if in_play is None:
        in_play = Tournament.objects.filter(pk=tournament.pk).filter(_derived_match_in_play()).exists()
    return not in_play


def tournament_list() -> QuerySet[Tournament]:
    return (
        Tournament.objects.select_related("ladder")
        .annotate(entrant_count=Count("entries"), derived_match_in_play=_derived_match_in_play())
        .order_by("-id")
    )


def tournament_get(*, tournament_id: int) -> Tournament:
    try:
        return (
            Tournament.objects.select_related("ladder")
            .annotate(derived_match_in_play=_derived_match_in_play())
            .get(pk=tournament_id)
        )
    except Tournament.DoesNotExist as exc:
        raise ObjectDoesNotExist(f"no tournament with id {tournament_id}") from exc


def _tournament_matches(tournament: Tournament) -> list[TournamentMatch]:
    return list(
        TournamentMatch.objects.filter(round__tournament=tournament)
        .select_related("round", "match")
        .prefetch_related("match__seats__bot")
        .order_by("round__number", "table")
    )


def tournament_scores(*, tournament: Tournament) -> dict[str, Any]:
    """Points per entrant (byes included) and the finished tables as (bot ids in seat order, ranks)."""
    entrants = list(tournament.entries.order_by("seed_order").values_list("bot_id", flat=True))
    tables = []
    for tm in _tournament_matches(tournament):
        if tm.match.status == MatchStatus.DONE:
            seats = sorted(tm.match.seats.all(), key=lambda s: s.index)
            ranks = [s.rank for s in seats if s.rank is not None]  # a DONE match ranks every seat
            if len(ranks) == len(seats):
                tables.append(([s.bot_id for s in seats], ranks))
    table, cross = standings_table(tables, entrants)
    byes = {b: 0 for b in entrants}
    for r in tournament.rounds.all():
        for b in r.byes:
            if b in byes:
                byes[b] += 1
    points = {b: table[b]["points"] + BYE_POINTS * byes[b] for b in entrants}
    return {
        "entrants": entrants,
        "tables": tables,
        "table": table,
        "cross": cross,
        "byes": byes,
        "points": points,
    }


def tournament_standings(*, tournament_id: int) -> dict[str, Any]:
    """Everything a standings page shows: entrants ranked, the crosstable, and the rounds with their matches."""
    tournament = tournament_get(tournament_id=tournament_id)
    scores = tournament_scores(tournament=tournament)
    entrants = scores["entrants"]
    entries = {e.bot_id: e for e in tournament.entries.select_related("bot")}
    seed_order = {b: i for i, b in enumerate(entrants)}
    ranked = sorted(
        entrants,
        key=lambda b: (
            -scores["points"][b],
            -scores["table"][b]["buchholz"],
            -scores["table"][b]["wins"],
            seed_order[b],
        ),
    )
    standings = []
    for position, b in enumerate(ranked, start=1):
        row = scores["table"][b]
        standings.append(
            {
                "rank": position,
                "bot": {"id": b, "name": entries[b].bot.name, "is_house": entries[b].bot.is_house},
                "points": round(scores["points"][b], 4),
                "played": row["played"],
                "wins": row["wins"],
                "byes": scores["byes"][b],
                "buchholz": round(row["buchholz"], 4),
            }
        )
    crosstable = {
        "bots": [{"id": b, "name": entries[b].bot.name} for b in ranked],
        "rows": [[None if a == b else scores["cross"][a].get(b) for b in ranked] for a in ranked],
    }
    rounds: dict[int, dict[str, Any]] = {}
    for r in tournament.rounds.order_by("number"):
        rounds[r.number] = {
            "number": r.number,
            "finished": r.finished_at is not None,
            "byes": [{"id": b, "name": entries[b].bot.name} for b in r.byes if b in entries],
            "matches": [],
        }
    for tm in _tournament_matches(tournament):
        seats = sorted(tm.match.seats.all(), key=lambda s: s.index)
        rounds[tm.round.number]["matches"].append(
            {
                "id": tm.match_id,
                "table": tm.table,
                "status": tm.match.status,
                "seats": [
                    {
                        "seat": s.index,
                        "bot": {"id": s.bot_id, "name": s.bot.name},
                        "rank": s.rank,
                        "score": s.score,
                    }
                    for s in seats
                ],
            }
        )
    return {
        "tournament": tournament,
        "standings": standings,
        "crosstable": crosstable,
        "rounds": list(rounds.values()),
        "rounds_played": sum(1 for r in rounds.values() if r["finished"]),
        "seed_revealed": tournament_seed_revealed(tournament=tournament),
    }
