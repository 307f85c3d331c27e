"""User API tokens. Layer: data only; writes in `services.py`, reads in `selectors.py`.

A token is never stored: only its sha256 (`key_hash`) and its first characters (`hint`). A token works
until `expires_at`, or until it is revoked (`revoked_at`); revoked and expired rows are kept for audit.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class UserToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    key_hash = models.CharField(max_length=64, unique=True)
    hint = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["user", "revoked_at"], name="usertoken_user_live")]

    def __str__(self) -> str:
        return f"token {self.hint}… of {self.user_id}"
