"""Match analysis (engine_service/referee/analysis.py): reviews decisions with a choice from the seat's own
view, deterministically, within its cap, with the played and best moves in words; a tampered record is a
ReplayMismatch, never a review."""

from __future__ import annotations

import dataclasses

import pytest

from engine_service.games import get_game
from engine_service.policies import make_policy
from engine_service.policies.mcts import MctsPolicy
from engine_service.referee import HouseSeat, run_match
from engine_service.referee.analysis import analyse_match, decisions_to_analyse
from engine_service.referee.replay import ReplayMismatch, replay


@pytest.fixture(scope="module")
def record():
    seats = [HouseSeat(make_policy("random", seed=1)), HouseSeat(make_policy("greedy", seed=2))]
    return run_match("expedition-v1", 2, 7, seats, match_id="analysed", hash_every=1)


def test_reviews_are_the_decisions_with_a_choice_in_order_within_the_cap(record):
    progress: list[tuple[int, int]] = []
    reviews = analyse_match(
        record, max_decisions=12, progress=lambda done, total: progress.append((done, total))
    )
    assert len(reviews) == 12 == decisions_to_analyse(record, 12) < decisions_to_analyse(record)
    assert progress == [(i, 12) for i in range(1, 13)]
    steps = [r.step for r in reviews]
    assert steps == sorted(steps) and len(set(steps)) == 12
    for review in reviews:
        state = replay(record, upto=review.step)
        seat, played = record.actions[review.step]
        legal = {a.id for a in state.legal_actions(seat)}
        assert review.seat == seat and review.played == played and review.best in legal
        assert review.alternatives == len(legal) > 1
        assert review.loss == max(0.0, review.best_value - review.played_value) >= 0
        assert review.played_words == get_game(record.game_id).describe_action(state, seat, played)
        assert review.best_words and review.as_json()["best_words"] == review.best_words


def test_the_same_record_level_and_seed_give_the_same_reviews(record):
    first = [r.as_json() for r in analyse_match(record, max_decisions=6)]
    assert first == [r.as_json() for r in analyse_match(record, max_decisions=6)]
    other_seed = [r.as_json() for r in analyse_match(record, max_decisions=6, seed=5)]
    assert [r["step"] for r in other_seed] == [r["step"] for r in first]


def test_the_search_reads_only_the_seats_observation(record, monkeypatch):
    """The review of a decision is the same whatever the other seat holds: evaluate gets the observation."""
    seen: list[dict] = []
    evaluate = MctsPolicy.evaluate

    def spy(self, observation, legal_actions, **kwargs):
        seen.append(dict(observation))
        return evaluate(self, observation, legal_actions, **kwargs)

    monkeypatch.setattr(MctsPolicy, "evaluate", spy)
    reviews = analyse_match(record, max_decisions=3)
    for review, observation in zip(reviews, seen, strict=True):
        state = replay(record, upto=review.step)
        assert observation == state.observation(review.seat)


def test_a_tampered_record_is_a_mismatch_not_a_review(record):
    seat, _ = record.actions[3]
    legal = [a.id for a in replay(record, upto=3).legal_actions(seat)]
    other = next(a for a in legal if a != record.actions[3][1])
    tampered = dataclasses.replace(record, actions=[*record.actions[:3], (seat, other), *record.actions[4:]])
    with pytest.raises(ReplayMismatch):
        analyse_match(tampered, max_decisions=10)
