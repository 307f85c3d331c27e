"""User API tokens: hashed, expiring, revocable; issued by username and password, rotated and revoked by
their holder."""
