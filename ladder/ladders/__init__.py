"""Ladders: one per versioned game id, player count and options, with its rating parameters; and the game
metadata (from the engine's registry) the API and pages show."""
