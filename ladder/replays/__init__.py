"""Replays: the referee's match record stored compressed, and frames re-simulated by the engine."""
