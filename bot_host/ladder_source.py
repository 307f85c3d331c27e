"""The bot host's `Source` backed by the ladder's database (Django, in the host process only; never in a
sandbox): leases on hosted bots, their archives, their tokens, and status reports.

Tokens: the host holds each hosted bot's credential in `tokens.json` in its state directory (mode 0600, never
bound into a sandbox). It is the bot's hosted credential (`Bot.hosted_token_hash`, made by
`bot_hosted_token_issue`), never the owner's token: hosting a version leaves the owner's token and an
externally run bot working. A credential still valid is reused, for every version of the bot, so a host
restart reconnects its bots with the same one within the gateway's reconnect grace; the host issues a new one
when it holds none that works (first start, a lost state file, another host took the bot over), which revokes
the one it replaces. A retired bot gets none (`CannotStart`).

Database errors are the caller's to isolate (`BotHost` guards each bot's part of a step); a connection the
database dropped (a restart, a failover) is replaced at the next step, as Django does per request, instead
of failing every step after it.

Layer: bot host service adapter over `ladder.hosting` and `ladder.bots` services and selectors.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import close_old_connections, connection

from bot_host.host import Assignment, Report
from bot_host.supervisor import CannotStart
from ladder.bots.selectors import bot_hosted_token_valid
from ladder.bots.services import bot_hosted_token_issue
from ladder.hosting.selectors import hosted_archive
from ladder.hosting.services import hosted_claim, hosted_release, hosted_report


class TokenStore:
    """bot id -> (hosted credential, the version it was first used for), in a file only the host (root) can
    read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self.path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, dict) and isinstance(v.get("token"), str)}

    def _save(self, tokens: dict[str, dict[str, object]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".tmp")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(tokens, handle)
        partial.replace(self.path)

    def token(self, bot_id: int, version_id: int) -> str:
        """The bot's hosted credential: the one held if it still works, else a new one (then saved)."""
        with self._lock:
            tokens = self._load()
            token = str(tokens.get(str(bot_id), {}).get("token", ""))
            if token and bot_hosted_token_valid(bot_id=bot_id, token=token):
                return token
            try:
                _bot, token = bot_hosted_token_issue(bot_id=bot_id)
            except ValidationError as exc:
                raise CannotStart(" ".join(exc.messages)) from None
            tokens[str(bot_id)] = {"token": token, "version_id": version_id}
            self._save(tokens)
            return token


class LadderSource:
    def __init__(self, *, state_dir: Path, lease_seconds: float = 30.0) -> None:
        self.tokens = TokenStore(state_dir / "tokens.json")
        self.lease_seconds = lease_seconds

    def assignments(self, *, host_id: str, limit: int) -> list[Assignment]:
        """The versions to run; asked first at every step, so a dropped connection is replaced here."""
        if not connection.in_atomic_block:  # between steps the host holds no transaction (a test may)
            close_old_connections()
        claimed = hosted_claim(host_id=host_id, limit=limit, lease_seconds=self.lease_seconds)
        return [
            Assignment(h.bot_id, h.version_id, h.version.runtime, h.version.entry, h.version.sha256)
            for h in claimed
        ]

    def archive(self, *, version_id: int) -> bytes:
        return hosted_archive(version_id=version_id)

    def token(self, *, bot_id: int, version_id: int) -> str:
        return self.tokens.token(bot_id, version_id)

    def report(self, *, host_id: str, report: Report) -> None:
        hosted_report(host_id=host_id, **dataclasses.asdict(report))  # a Report's fields are its arguments

    def release(self, *, host_id: str) -> None:
        hosted_release(host_id=host_id)
