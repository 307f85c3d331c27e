"""Matches and seats: created queued, run by workers, finished exactly once with their result."""
