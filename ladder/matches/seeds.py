"""Match seeds: drawn unpredictably, and every seed derived from one (house bots', tournament tables') keyed
by the server secret `CARAVANSERAI_SEED_SECRET` (HMAC-SHA256), so a published seed predicts no other match.

The game seed is the match's own `seed` column (the referee's record stores it, so replays re-simulate);
it is kept hidden until the match is over (`ladder.matches.selectors.match_secrets_revealed`).
Layer: domain helpers; reads settings, touches no database.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings

SEED_BITS = 63  # seeds fit a signed 64-bit column


def match_seed_new() -> int:
    """A fresh game seed from the operating system's CSPRNG."""
    return secrets.randbits(SEED_BITS)


def seed_derive(*parts: object) -> int:
    """A seed (0 to 2**63-1) from `parts`, keyed by the server secret: unpredictable without it."""
    key = settings.CARAVANSERAI_SEED_SECRET.encode()
    message = ":".join(str(part) for part in parts).encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)
