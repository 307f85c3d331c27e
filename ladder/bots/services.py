"""Bot writes: register (token shown once), rotate and revoke tokens, the bot host's own credential for a
hosted bot, edit, retire, house bots.

The owner's token and the hosted credential are separate: rotating or revoking one leaves the other working
(a revocation still drops every stream of the bot at the gateway, which reconnects the one whose token
works); retiring a bot clears both.

Layer: services (keyword-only, typed, transactional). Raises `ValidationError` with a reason for bad input
and changes nothing then. Must not render HTTP or know about views.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from engine_service.games import list_games
from engine_service.policies import house_level, make_policy
from ladder.bots.models import Bot
from ladder.bots.signals import bot_token_revoked
from ladder.ratings.board import board_bot_retired, board_lock_for_bot

TOKEN_PREFIX = "cvs_"
NAME_MAX = 40
MAX_CONCURRENT_LIMIT = 16
HOUSE_OWNER = "house"
RESERVED_NAMES = {"house", "admin", "spectator"}


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _new_token() -> tuple[str, str]:
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token_hash(token)


def _clean_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValidationError({"name": ["a bot needs a name"]})
    cleaned = name.strip()
    if len(cleaned) > NAME_MAX:
        raise ValidationError({"name": [f"a bot name has at most {NAME_MAX} characters"]})
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_. ")
    bad = sorted(set(cleaned) - allowed)
    if bad:
        raise ValidationError(
            {"name": [f"a bot name may use letters, digits, space and -_. only, not {''.join(bad)!r}"]}
        )
    return cleaned


def _check_name_free(name: str, *, exclude_id: int | None = None) -> None:
    if name.lower() in RESERVED_NAMES or name.lower().startswith("house-"):
        raise ValidationError({"name": [f"the name {name!r} is reserved"]})
    taken = Bot.objects.filter(name__iexact=name)
    if exclude_id is not None:
        taken = taken.exclude(pk=exclude_id)
    if taken.exists():
        raise ValidationError({"name": [f"a bot named {name!r} already exists"]})


def _clean_games(games: Any) -> list[str]:
    known = [spec.game_id for spec in list_games()]
    if not isinstance(games, (list, tuple)) or not games:
        raise ValidationError({"games": [f"list at least one game; known games: {', '.join(known)}"]})
    cleaned: list[str] = []
    for game in games:
        if not isinstance(game, str) or game not in known:
            raise ValidationError({"games": [f"unknown game {game!r}; known games: {', '.join(known)}"]})
        if game not in cleaned:
            cleaned.append(game)
    return cleaned


def _clean_max_concurrent(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONCURRENT_LIMIT:
        raise ValidationError(
            {"max_concurrent": [f"max_concurrent must be a whole number 1-{MAX_CONCURRENT_LIMIT}"]}
        )
    return value


def _clean_description(value: Any) -> str:
    if not isinstance(value, str):
        raise ValidationError({"description": ["the description must be text"]})
    if len(value) > 2000:
        raise ValidationError({"description": ["the description has at most 2000 characters"]})
    return value.strip()


def _announce_revocation(bot_id: int) -> None:
    transaction.on_commit(lambda: bot_token_revoked.send(sender=Bot, bot_id=bot_id))


def bot_create(
    *,
    owner: User,
    name: str,
    games: list[str],
    description: str = "",
    max_concurrent: int = 1,
    accepts_challenges: bool = False,
) -> tuple[Bot, str]:
    """Register a bot for `owner`; returns the bot and its token (the only time the token exists)."""
    if owner is None or not owner.is_authenticated or not owner.is_active:
        raise ValidationError("only an active user can register a bot")
    name = _clean_name(name)
    games = _clean_games(games)
    description = _clean_description(description)
    max_concurrent = _clean_max_concurrent(max_concurrent)
    _check_name_free(name)
    token, hashed = _new_token()
    try:
        with transaction.atomic():
            bot = Bot.objects.create(
                owner=owner,
                name=name,
                description=description,
                games=games,
                max_concurrent=max_concurrent,
                accepts_challenges=bool(accepts_challenges),
                token_hash=hashed,
                token_hint=token[: len(TOKEN_PREFIX) + 4],
                token_created_at=timezone.now(),
            )
    except IntegrityError as exc:
        raise ValidationError({"name": [f"a bot named {name!r} already exists"]}) from exc
    return bot, token


def _owned_bot_for_update(*, bot_id: int, user: User | None) -> Bot:
    try:
        bot = Bot.objects.select_for_update().get(pk=bot_id)
    except Bot.DoesNotExist as exc:
        raise Bot.DoesNotExist(f"no bot with id {bot_id}") from exc
    if user is not None and bot.owner_id != user.pk:
        raise PermissionDenied(f"only the owner of {bot.name} may change it")
    if bot.is_house:
        raise ValidationError("house bots are managed by the ladder, not by users")
    return bot


@transaction.atomic
def bot_token_rotate(*, bot_id: int, user: User | None = None) -> tuple[Bot, str]:
    """A new token replaces the old one at once (the old one stops working); returns the new token. The
    hosted credential, if any, keeps working."""
    bot = _owned_bot_for_update(bot_id=bot_id, user=user)
    if not bot.active:
        raise ValidationError(f"{bot.name} is retired; a retired bot gets no token")
    token, hashed = _new_token()
    bot.token_hash = hashed
    bot.token_hint = token[: len(TOKEN_PREFIX) + 4]
    bot.token_created_at = timezone.now()
    bot.save(update_fields=["token_hash", "token_hint", "token_created_at", "updated_at"])
    _announce_revocation(bot.pk)
    return bot, token


@transaction.atomic
def bot_hosted_token_issue(*, bot_id: int) -> tuple[Bot, str]:
    """A new credential for the bot host that runs this bot's hosted version (the owner's token untouched);
    returns it (the only time it exists). One replaced is revoked at once: a stream opened with it belongs
    to a host that no longer holds the bot."""
    bot = _owned_bot_for_update(bot_id=bot_id, user=None)
    if not bot.active:
        raise ValidationError(f"{bot.name} is retired; a retired bot gets no token")
    replaced = bool(bot.hosted_token_hash)
    token, hashed = _new_token()
    bot.hosted_token_hash = hashed
    bot.hosted_token_created_at = timezone.now()
    bot.save(update_fields=["hosted_token_hash", "hosted_token_created_at", "updated_at"])
    if replaced:
        _announce_revocation(bot.pk)
    return bot, token


@transaction.atomic
def bot_token_revoke(*, bot_id: int, user: User | None = None) -> Bot:
    """Revoke the owner's token: nothing the owner runs can connect until they rotate a new one (a hosted
    version keeps its own credential: turn hosting off to stop it)."""
    bot = _owned_bot_for_update(bot_id=bot_id, user=user)
    bot.token_hash = None
    bot.token_hint = ""
    bot.token_created_at = None
    bot.save(update_fields=["token_hash", "token_hint", "token_created_at", "updated_at"])
    _announce_revocation(bot.pk)
    return bot


@transaction.atomic
def bot_update(
    *,
    bot_id: int,
    user: User | None = None,
    name: str | None = None,
    description: str | None = None,
    games: list[str] | None = None,
    max_concurrent: int | None = None,
    accepts_challenges: bool | None = None,
) -> Bot:
    """Edit a bot's name, description, games, concurrency or whether it accepts challenges (owner only).
    Unchanged fields stay."""
    bot = _owned_bot_for_update(bot_id=bot_id, user=user)
    if not bot.active:
        raise ValidationError(f"{bot.name} is retired and can no longer be edited")
    fields: list[str] = []
    if name is not None:
        clean = _clean_name(name)
        _check_name_free(clean, exclude_id=bot.pk)
        bot.name = clean
        fields.append("name")
    if description is not None:
        bot.description = _clean_description(description)
        fields.append("description")
    if games is not None:
        bot.games = _clean_games(games)
        fields.append("games")
    if max_concurrent is not None:
        bot.max_concurrent = _clean_max_concurrent(max_concurrent)
        fields.append("max_concurrent")
    if accepts_challenges is not None:
        if not isinstance(accepts_challenges, bool):
            raise ValidationError({"accepts_challenges": ["accepts_challenges is true or false"]})
        bot.accepts_challenges = accepts_challenges
        fields.append("accepts_challenges")
    if fields:
        bot.save(update_fields=[*fields, "updated_at"])
    return bot


@transaction.atomic
def bot_retire(*, bot_id: int, user: User | None = None) -> Bot:
    """Retire a bot for good: its token and hosted credential are revoked, it leaves leaderboards, its
    history stays."""
    ladder_ids = board_lock_for_bot(bot_id=bot_id)  # the boards' locks first, as a match result takes them
    bot = _owned_bot_for_update(bot_id=bot_id, user=user)
    if not bot.active:
        return bot
    bot.active = False
    bot.retired_at = timezone.now()
    bot.token_hash = None
    bot.token_hint = ""
    bot.hosted_token_hash = None
    bot.save(
        update_fields=["active", "retired_at", "token_hash", "token_hint", "hosted_token_hash", "updated_at"]
    )
    _announce_revocation(bot.pk)
    board_bot_retired(bot_id=bot.pk, ladder_ids=ladder_ids)
    return bot


@transaction.atomic
def bot_version_seen(*, bot_id: int, version: str) -> Bot:
    """Remember a version string the bot reported (kept in first-seen order, at most 50)."""
    if not isinstance(version, str) or not version.strip() or len(version) > 64:
        raise ValidationError("a bot version is a non-empty string of at most 64 characters")
    bot = Bot.objects.select_for_update().get(pk=bot_id)
    version = version.strip()
    if version not in bot.versions_seen:
        bot.versions_seen = [*bot.versions_seen, version][-50:]
        bot.save(update_fields=["versions_seen", "updated_at"])
    return bot


def _house_owner() -> User:
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(
        username=HOUSE_OWNER, defaults={"is_active": False, "first_name": "House bots"}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def house_bot_name(policy: str) -> str:
    """A house bot's name: `house-` and its policy (`house-search`, `house-mcts-25`)."""
    return f"house-{policy.replace(':', '-')}"


def house_bot_ensure(*, policy: str) -> Bot:
    """The house bot playing `policy` (a house level: random, greedy, search, search-strong; or mcts:N),
    created on first use, its description saying its level and the levels' measured order. Idempotent."""
    if not isinstance(policy, str):
        raise ValidationError("a house policy is a name such as 'greedy'")
    try:
        make_policy(policy, seed=0)
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc
    description = house_level(policy).summary
    existing = Bot.objects.filter(is_house=True, house_policy=policy).first()
    if existing is not None:
        if existing.description != description:
            existing.description = description
            existing.save(update_fields=["description"])
        return existing
    try:
        with transaction.atomic():
            return Bot.objects.create(
                owner=_house_owner(),
                name=house_bot_name(policy),
                description=description,
                games=[spec.game_id for spec in list_games()],
                is_house=True,
                house_policy=policy,
                max_concurrent=MAX_CONCURRENT_LIMIT,
            )
    except IntegrityError:
        return Bot.objects.get(is_house=True, house_policy=policy)
