"""A match analysis: every decision of a finished match reviewed by a house search level, from the deciding
seat's own view, as the estimated value of the move played against the best move the search found.

The match is re-simulated from its record with every stored hash checked; at each decision with a choice,
the seat's observation (never the true state: other hands and the deck are sampled, as the house bots do)
goes to `MctsPolicy.evaluate`, which values the level's best candidates and the move played on the same
sampled states. Values are in the game's heuristic units (the seat's value minus its best rival's), so a
loss compares decisions within one game, not across games. Deterministic for a record, level and seed.

Pure: no Django, no Celery, no I/O; it must never read another seat's hidden state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from engine_service.games import GameState, get_game
from engine_service.policies.mcts import MctsPolicy
from engine_service.referee.record import MatchRecord
from engine_service.referee.replay import advance_checked, replay

SAMPLES = 8  # sampled states per decision: the played move and the candidates are all judged on the same ones
SEED_STRIDE = 1_000_003  # one search seed per decision: seed * SEED_STRIDE + step


@dataclass(frozen=True)
class DecisionReview:
    step: int  # the record's action index: the decision taken in the state after `step` actions
    seat: int
    played: str
    played_words: str
    played_value: float
    best: str  # the best move found (may be the one played)
    best_words: str
    best_value: float
    loss: float  # max(0, best_value - played_value)
    alternatives: int  # legal actions the seat had

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _decisions(record: MatchRecord) -> Iterator[tuple[GameState, int, str]]:
    """(state before the decision, seat, action id played) for each decision with more than one legal
    action, the state advanced with the record's hashes checked."""
    state = replay(record, upto=0)
    for step, (seat, action_id) in enumerate(record.actions):
        legal = state.legal_actions(seat)
        if len(legal) > 1:
            ids = {a.id for a in legal}
            yield state, seat, action_id if action_id in ids else state.upgrade_action_id(seat, action_id)
        advance_checked(record, state, upto=step + 1)


def decisions_to_analyse(record: MatchRecord, max_decisions: int | None = None) -> int:
    """How many decisions `analyse_match` reviews: those with a choice, at most `max_decisions`."""
    total = sum(1 for _ in _decisions(record))
    return total if max_decisions is None else min(total, max_decisions)


def analyse_match(
    record: MatchRecord,
    *,
    level: str = "search",
    max_decisions: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    seed: int = 0,
) -> list[DecisionReview]:
    """The reviews of the match's decisions with a choice, in play order (the first `max_decisions`)."""
    spec = get_game(record.game_id)
    total = decisions_to_analyse(record, max_decisions)
    reviews: list[DecisionReview] = []
    for state, seat, played in _decisions(record):
        if len(reviews) >= total:
            break
        legal = state.legal_actions(seat)
        policy = MctsPolicy(seed * SEED_STRIDE + state.step, level=level)
        values = policy.evaluate(state.observation(seat), legal, include=(played,), samples=SAMPLES)
        best = max(values, key=lambda a: (values[a], a == played))  # a tie goes to the move played
        reviews.append(
            DecisionReview(
                step=state.step,
                seat=seat,
                played=played,
                played_words=spec.describe_action(state, seat, played),
                played_value=values[played],
                best=best,
                best_words=spec.describe_action(state, seat, best),
                best_value=values[best],
                loss=max(0.0, values[best] - values[played]),
                alternatives=len(legal),
            )
        )
        if progress is not None:
            progress(len(reviews), total)
    return reviews
