"""Practice matches a bot owner asks for: unrated, their bot against chosen house bots or bots that accept
challenges, in any game, player count and option set; played by the same workers and replayed like any
other match.

Layer: services (keyword-only, transactional writes). A practice match lives on an inactive ladder of its
own per (game, players, options), so leaderboards never list it, and it is created NEW: the scheduler's
`matchmaking.schedule` pass sends it to the workers (`practice_matches_to_send` and
`practice_match_mark_sent`), so the web process never talks to the broker. It changes no rating.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from engine_service.games import InvalidOptions, get_game
from ladder.bots.models import Bot
from ladder.bots.services import house_bot_ensure
from ladder.ladders.models import Ladder
from ladder.matches.models import Match, MatchStatus, Seat
from ladder.matches.seeds import match_seed_new

UNFINISHED = (MatchStatus.NEW, MatchStatus.QUEUED, MatchStatus.RUNNING)


def practice_house_policies() -> list[str]:
    """The house bots a practice match may seat (LADDER_PRACTICE_HOUSE_POLICIES)."""
    return list(settings.LADDER_PRACTICE_HOUSE_POLICIES)


def practice_match_request(*, user: User, bot_id: Any, game_id: Any, options: Any, opponents: Any) -> Match:
    """A NEW unrated match of `user`'s bot (seat 0) against `opponents` (house policy names or ids of bots
    that accept challenges or are `user`'s own), in `game_id` with `options`. ValidationError naming the
    field otherwise; nothing is created then."""
    bot = _own_bot(user, bot_id)
    spec = _game(game_id)
    if not isinstance(opponents, list) or not opponents:
        raise ValidationError({"opponents": ["name at least one opponent: a house bot or a bot id"]})
    players = 1 + len(opponents)
    try:
        resolved = spec.resolve_options(options if options is not None else {}, players)
    except InvalidOptions as exc:
        field = "opponents" if "players" in str(exc) else "options"
        raise ValidationError({field: [str(exc)]}) from exc
    seated = [bot, *(_opponent(user, spec.game_id, o) for o in opponents)]
    if len({b.pk for b in seated}) != len(seated):
        raise ValidationError({"opponents": ["a bot can take only one seat in a match"]})
    with transaction.atomic():
        open_count = Match.objects.filter(requested_by=user, status__in=UNFINISHED).count()
        if open_count >= settings.LADDER_PRACTICE_MAX_OPEN:
            raise ValidationError(
                {
                    "detail": [
                        f"you have {open_count} practice matches waiting or being played; "
                        f"at most {settings.LADDER_PRACTICE_MAX_OPEN} at once"
                    ]
                }
            )
        ladder = _practice_ladder(spec.game_id, players, resolved)
        match = Match.objects.create(
            ladder=ladder, seed=match_seed_new(), status=MatchStatus.NEW, rated=False, requested_by=user
        )
        Seat.objects.bulk_create([Seat(match=match, index=i, bot=b) for i, b in enumerate(seated)])
    return match


def practice_matches_to_send(limit: int = 50) -> list[int]:
    """Practice matches requested and not yet sent to the workers, oldest first."""
    pending = Match.objects.filter(status=MatchStatus.NEW, requested_by__isnull=False).order_by("id")
    return list(pending.values_list("pk", flat=True)[:limit])


def practice_match_mark_sent(*, match_id: int) -> bool:
    """NEW → QUEUED for a practice match; True for the one caller that moved it (it sends the task)."""
    updated = Match.objects.filter(pk=match_id, status=MatchStatus.NEW, requested_by__isnull=False).update(
        status=MatchStatus.QUEUED, queued_at=timezone.now()
    )
    return updated == 1


def _own_bot(user: User, bot_id: Any) -> Bot:
    if isinstance(bot_id, bool) or not isinstance(bot_id, int):
        raise ValidationError({"bot": ["the id of one of your bots"]})
    bot = Bot.objects.filter(pk=bot_id, owner=user, is_house=False).first()
    if bot is None:
        raise ValidationError({"bot": [f"you have no bot with id {bot_id}"]})
    if not bot.active:
        raise ValidationError({"bot": [f"{bot.name} is retired"]})
    return bot


def _game(game_id: Any) -> Any:
    try:
        return get_game(str(game_id))
    except InvalidOptions as exc:
        raise ValidationError({"game_id": [str(exc)]}) from exc


def _opponent(user: User, game_id: str, opponent: Any) -> Bot:
    if isinstance(opponent, str):
        if opponent not in practice_house_policies():
            allowed = ", ".join(practice_house_policies())
            raise ValidationError(
                {"opponents": [f"{opponent!r} is not a house bot here (one of: {allowed})"]}
            )
        return house_bot_ensure(policy=opponent)
    if isinstance(opponent, bool) or not isinstance(opponent, int):
        raise ValidationError({"opponents": ["each opponent is a house bot's name or a bot id"]})
    bot = Bot.objects.filter(pk=opponent, active=True).first()
    if bot is None or not (bot.owner_id == user.pk or bot.accepts_challenges or bot.is_house):
        raise ValidationError({"opponents": [f"bot {opponent} does not exist or does not accept challenges"]})
    if not bot.is_house and game_id not in bot.games:
        raise ValidationError({"opponents": [f"{bot.name} does not play {game_id}"]})
    return bot


def _practice_ladder(game_id: str, players: int, options: dict[str, Any]) -> Ladder:
    """The inactive ladder that holds the practice matches of one game, player count and option set."""
    key = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:8]
    slug = f"practice-{game_id}-{players}p-{key}"
    spec = get_game(game_id)
    shown = ", ".join(f"{k}={v}" for k, v in sorted(options.items()) if v != _default(spec, k))
    name = f"Practice: {spec.name}, {players} players" + (f" ({shown})" if shown else "")
    try:
        with transaction.atomic():
            ladder, _ = Ladder.objects.get_or_create(
                slug=slug,
                defaults={
                    "name": name[:120],
                    "game_id": game_id,
                    "num_players": players,
                    "options": options,
                    "active": False,
                    "description": "Unrated practice matches that bot owners asked for.",
                },
            )
    except IntegrityError:
        ladder = Ladder.objects.get(slug=slug)
    return ladder


def _default(spec: Any, name: str) -> Any:
    return next((opt.default for opt in spec.options if opt.name == name), None)
