"""Ratings: pure maths (`elo`), the append-only ledger and the current ratings, applied once per match."""
