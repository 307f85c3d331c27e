"""The action space's round-trip check over one seeded random game, shared by the suite
(tests/envs/test_action_space.py, a few games per setting) and `python -m bench action_space` (thousands).

Engine layer, pure: plays a game with uniformly random legal actions from a seeded `random.Random` (never
the global one) and checks, at every decision, that each legal action maps to a distinct index inside the
space and back, that the mask marks exactly the legal ones, and that a fixed kind's id keeps its index from
state to state. A failure is an `ActionSpaceError` naming the game, seed, step and action.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from engine_service.envs.action_space import ActionSpace, ActionSpaceError
from engine_service.games.registry import list_games, make


def settings() -> Iterator[tuple[str, int, dict[str, object]]]:
    """Every game, player count and option variant."""
    for spec in list_games():
        for players in range(spec.min_players, spec.max_players + 1):
            for options in spec.option_variants(players):
                yield spec.game_id, players, options


def check_random_game(
    space: ActionSpace,
    game_id: str,
    players: int,
    options: dict[str, object],
    seed: int,
    fixed_seen: dict[str, int] | None = None,
) -> tuple[int, int]:
    """Play the game of `seed` with random legal actions, checking every decision; (decisions, actions
    checked). `fixed_seen` (id -> index) carries the fixed ids' indices across games."""
    fixed_seen = {} if fixed_seen is None else fixed_seen
    state, rng = make(game_id, players, seed, options), random.Random(seed)
    decisions = actions = 0
    while not state.is_over():
        seat = state.current_seats()[0]
        legal = state.legal_actions(seat)
        indices = space.legal_indices(legal)
        where = f"{game_id} {players}p {options} seed {seed} step {decisions}"
        if len(set(indices)) != len(legal) or not all(0 <= i < space.size for i in indices):
            raise ActionSpaceError(f"{where}: indices {indices} are not distinct and inside the space")
        if sum(space.mask(legal)) != len(legal):
            raise ActionSpaceError(f"{where}: the mask does not mark exactly the {len(legal)} legal actions")
        for action, index in zip(legal, indices, strict=True):
            if space.index(legal, action.id) != index or space.action_id(legal, index) != action.id:
                raise ActionSpaceError(f"{where}: {action.id} <-> {index} does not round-trip")
            if space.block(action.kind).fixed and fixed_seen.setdefault(action.id, index) != index:
                raise ActionSpaceError(f"{where}: fixed {action.id} moved to {index}")
        actions += len(legal)
        state.apply(seat, legal[rng.randrange(len(legal))].id)
        decisions += 1
    return decisions, actions
