"""The imitation example (clients/python/examples/imitation/) in short: house games played and exported as
dataset rows, a numpy policy fitted on them that picks the recorded action far more often than chance, and
that policy as an SDK bot playing a seeded series against `random` through the referee, deterministically."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "clients" / "python" / "examples" / "imitation"


@pytest.fixture(scope="module")
def example():
    sys.path.insert(0, str(EXAMPLE))
    try:
        import imitation
        import policy

        yield imitation, policy
    finally:
        sys.path.remove(str(EXAMPLE))


def test_data_train_and_series_in_short(example, tmp_path: Path, capsys) -> None:
    imitation, policy = example
    data = tmp_path / "greedy.jsonl"
    args = [
        "data",
        "--games",
        "3",
        "--level",
        "greedy",
        "--records",
        str(tmp_path / "records"),
        "--out",
        str(data),
    ]
    assert imitation.main(args) == 0
    assert len(list((tmp_path / "records").glob("*.json"))) == 3
    trained, figures = imitation.fit(str(data), policy.TrainSettings(epochs=3, seed=1))
    decisions = policy.decisions_of(imitation.read_rows(str(data)))
    chance = float(np.mean([1 / len(d.phi) for d in decisions]))
    assert figures["rows"] > 300 and figures["train_accuracy"] > 2 * chance
    assert policy.accuracy(trained, decisions) > 2 * chance
    model = tmp_path / "model.npz"
    trained.save(str(model))
    reloaded = policy.LinearPolicy.load(str(model))
    assert np.array_equal(reloaded.w, trained.w)
    first = imitation.series(reloaded, 4, first_seed=300)
    assert first == imitation.series(reloaded, 4, first_seed=300)  # a seeded series is repeatable
    assert first.games == 4 and 0 <= first.wins <= 4 and len(first.score_diffs) == 4
    rate, low, high = first.win_interval()
    assert 0 <= low <= rate <= high <= 1
    assert imitation.main(["series", "--model", str(model), "--games", "2"]) == 0
    assert "2 games vs random: win rate" in capsys.readouterr().out
