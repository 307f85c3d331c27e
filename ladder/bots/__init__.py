"""Bots: registration, hashed tokens (shown once), house bots, and the identity lookup the gateway uses."""
