"""Ladder writes. Layer: services (keyword-only, typed); `ValidationError` with a reason for bad input."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import slugify

from engine_service.games import InvalidOptions, get_game
from ladder.ladders.models import Ladder
from ladder.ratings import elo

# The games whose new ladders play duplicate sets by default: those where `python -m bench luck` found the
# paired variance of rank differences clearly below the independent one (its 95% interval under 1;
# bench/results/luck.json, `duplicate_pays`). Elsewhere a set costs three matches and buys no precision.
DUPLICATE_SETS_GAMES: frozenset[str] = frozenset()


def duplicate_sets_default(game_id: str) -> bool:
    """Whether a new ladder of `game_id` plays duplicate sets unless told otherwise."""
    return game_id in DUPLICATE_SETS_GAMES


@transaction.atomic
def ladder_create(
    *,
    game_id: str,
    num_players: int,
    options: dict[str, Any] | None = None,
    name: str = "",
    slug: str = "",
    description: str = "",
    params: elo.RatingParams | None = None,
    house_bots_allowed: bool = True,
    duplicate_sets: bool | None = None,
) -> Ladder:
    """A ladder for a registered game; options are validated and resolved by the game's spec. With
    `duplicate_sets`, matchmaking plays each of its tables once per seat rotation on one seed; None (the
    default) takes the game's measured default (`duplicate_sets_default`)."""
    try:
        spec = get_game(game_id)
        resolved = spec.resolve_options(options, num_players)
    except InvalidOptions as exc:
        raise ValidationError(str(exc)) from exc
    params = params or elo.RatingParams()
    try:
        params.validate()
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc
    non_default = {
        k: v for k, v in resolved.items() if v != next(o.default for o in spec.options if o.name == k)
    }
    suffix = "-".join(f"{k}" for k, v in sorted(non_default.items()) if v is True) or ""
    slug = slug or slugify(f"{game_id}-{num_players}p{'-' + suffix if suffix else ''}")
    if Ladder.objects.filter(slug=slug).exists():
        raise ValidationError(f"a ladder with slug {slug!r} already exists")
    name = name or f"{spec.name}, {num_players} players" + (
        f" ({suffix.replace('_', ' ')})" if suffix else ""
    )
    return Ladder.objects.create(
        slug=slug,
        name=name,
        game_id=game_id,
        num_players=num_players,
        options=resolved,
        description=description,
        elo_k=params.k,
        elo_scale=params.scale,
        elo_start=params.start,
        openskill_mu=params.mu,
        openskill_sigma=params.sigma,
        house_bots_allowed=house_bots_allowed,
        duplicate_sets=duplicate_sets_default(game_id) if duplicate_sets is None else bool(duplicate_sets),
    )


def ladder_ensure_defaults() -> list[Ladder]:
    """One ladder per registered game and player count (default options), created when missing."""
    from engine_service.games import list_games

    ladders = []
    for spec in list_games():
        for n in range(spec.min_players, spec.max_players + 1):
            slug = slugify(f"{spec.game_id}-{n}p")
            existing = Ladder.objects.filter(slug=slug).first()
            ladders.append(existing or ladder_create(game_id=spec.game_id, num_players=n, slug=slug))
    return ladders
